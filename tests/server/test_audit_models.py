"""A server may play a model from a file that is not shipped with the package (a tuned one,
``starfever tune --out``): its rounds audit when the audit is given that file (``--model``), and
are reported, not passed, when it is not."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from starfever.engine.model import load_model
from starfever.math.figures import cache_path
from tests.harness import Databases, run_cli_in_process, start_server

pytestmark = pytest.mark.slow

SHIPPED = Path(__file__).resolve().parents[2] / "starfever" / "models"


def _a_new_model(tmp_path: Path, name: str) -> Path:
    """A shipped total-bet model under a new name, as a file: its figures take seconds, a
    line-bet model's DP about a minute (ADR 0032), and what is under test (a model from a
    file, its figures worked out at start) is the same for either unit (ADR 0045)."""
    data = json.loads((SHIPPED / "default-total-bet.json").read_text("utf-8"))
    data.update(name=name, version="1.0+test")
    model_file = tmp_path / f"{name}.json"
    model_file.write_text(json.dumps(data))
    return model_file


def test_rounds_of_a_model_from_a_file_audit_with_that_file(tmp_path: Path) -> None:
    model_file = _a_new_model(tmp_path, "house-tuned")
    assert load_model(str(model_file)).name == "house-tuned"
    server = start_server(Databases(tmp_path / "db"), "sqlite", tmp_path,
                          args=["--model", str(model_file)])
    url = server.database_url
    try:
        _name, token = server.player(deposit=5_000)
        for _ in range(3):
            assert server.spin(token, line_bet=1).status_code == 201
    finally:
        server.stop()

    unknown = run_cli_in_process("audit", "--database-url", url)
    assert unknown.returncode == 1
    assert "model house-tuned 1.0+test is not available" in unknown.stdout
    assert "--model PATH" in unknown.stdout

    done = run_cli_in_process("audit", "--database-url", url, "--model", str(model_file))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit OK: 3 rounds" in done.stdout

    missing = run_cli_in_process("audit", "--database-url", url, "--model",
                                 str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_a_new_models_figures_are_worked_out_when_the_server_starts(tmp_path: Path) -> None:
    """The rules page states the running model's exact figures. For a model never seen the
    server works them out beside the serving as it starts (seconds), so no player's first
    GET /game waits for them: they reach the cache with no request asked."""
    model_file = _a_new_model(tmp_path, "house-new")
    cache = tmp_path / "cache"
    server = start_server(Databases(tmp_path / "db"), "sqlite", tmp_path,
                          {"STARFEVER_CACHE_DIR": str(cache)}, args=["--model", str(model_file)])
    try:
        deadline = time.monotonic() + 300
        while not list(cache.glob("rtp-*.json")) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert [p.name for p in cache.glob("rtp-*.json")] == \
            [cache_path(load_model(str(model_file))).name]
        started = time.monotonic()
        game = server.http.get(f"{server.base}/game").json()
        assert time.monotonic() - started < 5
        assert game["max_win"]["largest_x"]["base"] > 0
    finally:
        server.stop()
