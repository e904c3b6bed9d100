"""The fork server (tests/forkserver.py, ADR 0084) stands in for ``python -m starfever.cli`` in
the harness's test-mode commands. These prove that a forked command answers as a fresh
interpreter does (exit status, output, working folder, environment), and ends by a signal as
one does: otherwise the server tests would prove things of the fork server, not of
``starfever serve``."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests import forkserver
from tests.harness import OPERATOR_SECRET, Server, create_operator, start_command


def _run(args: tuple[str, ...], env: dict[str, str], folder: Path, *, fork: bool,
         ) -> tuple[int, str]:
    """Run ``starfever ARGS`` in ``folder`` (which holds a broken model file), forked or as a
    fresh interpreter: its exit status and output."""
    folder.mkdir()
    (folder / "broken.json").write_text("{")
    process = start_command(args, env, folder / "out.log", fork=fork)
    assert isinstance(process, forkserver.ForkedProcess) == fork
    assert process.pid != os.getpid()
    code = process.wait(timeout=120)
    return code, (folder / "out.log").read_text()


def test_a_forked_command_answers_as_a_fresh_interpreter(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         ) -> None:
    monkeypatch.setenv(forkserver.FORKS_ENV, "1")  # (whatever this run was told)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARFEVER_")}
    # the working folder: a model file named relative to it
    forked = _run(("rtp", "--model", "broken.json"), env, tmp_path / "forked", fork=True)
    assert forked == _run(("rtp", "--model", "broken.json"), env, tmp_path / "fresh",
                          fork=False)
    assert forked[0] == 2 and forked[1].startswith("starfever rtp: error: model 'broken.json'")
    # the environment: the request's alone, nothing of an earlier child's
    secret = {"STARFEVER_OPERATOR_SECRET": OPERATOR_SECRET}
    args = ("operator-wallet-demo", "--port", "70000", "--db", "wallet.db")
    assert _run(args, {**env, **secret}, tmp_path / "with", fork=True) == (
        2, "starfever operator-wallet-demo: error: --port must be 0..65535, got 70000\n")
    code, output = _run(args, env, tmp_path / "without", fork=True)
    assert code == 2 and "shared secret must be at least 32 characters" in output


def test_a_forked_server_ends_by_its_signals_as_a_fresh_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codes = {}
    for fork in (True, False):
        monkeypatch.setenv(forkserver.FORKS_ENV, "1" if fork else "0")
        url = f"sqlite:///{tmp_path}/{fork}.db"
        create_operator(url)
        with Server(url, tmp_path / f"{fork}" / "server.log") as server:
            server.start()
            assert isinstance(server.process, forkserver.ForkedProcess) == fork
            assert server.process is not None and server.process.pid != os.getpid()
            server.process.send_signal(signal.SIGTERM)
            terminated = server.process.wait(timeout=30)
            server.start()  # again, on the same port
            assert server.process is not None
            server.process.kill()
            codes[fork] = terminated, server.process.wait(timeout=30)
    assert codes[True] == codes[False] == (-signal.SIGTERM, -signal.SIGKILL)
