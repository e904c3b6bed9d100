"""``starfever serve`` stopped by SIGTERM leaves nothing behind: the prometheus multiprocess
directory it made (``/tmp/starfever-metrics-*``) is removed, and the process still ends as
SIGTERM ends it (its exit status says so). A one-process server used to die of the signal
uvicorn raised again after its graceful shutdown, before any ``finally`` ran.

A real server process, with its temporary folder (``TMPDIR``) under the test's own."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from tests.harness import Databases, expect, start_server


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_removes_the_metrics_directory(tmp_path: Path, workers: int) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    with Databases(tmp_path / "db") as databases, start_server(
            databases, "sqlite", tmp_path, {"TMPDIR": str(temporary)},
            workers=workers) as server:
        _, token = server.player(deposit=1_000)
        expect(server.spin(token), 201)
        expect(server.http.get(f"{server.url}/metrics"), 200)
        made = list(temporary.glob("starfever-metrics-*"))
        assert len(made) == 1 and any(made[0].iterdir())  # the workers' metric files
        process = server.process
        assert process is not None
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert list(temporary.glob("starfever-metrics-*")) == [], server.log_tail()
    # one process ends by the signal, as uvicorn ends it; uvicorn's supervisor of several
    # workers returns
    assert status == (-signal.SIGTERM if workers == 1 else 0), server.log_tail()
    assert "Traceback" not in server.log_tail()
