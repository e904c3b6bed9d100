"""Bad input to the commands a hostile tester tried on the day's new features: each is one line
on stderr, exit 2, no traceback, and nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import run_cli

SECRET = "s" * 40


def _bad_model(directory: Path) -> str:
    path = directory / "bad.json"
    path.write_bytes(b"\xff\xfe{")  # not UTF-8
    return str(path)


@pytest.mark.parametrize("args,env,needle", [
    (["simulate", "--spins", "1e30"], {}, "--spins must be a whole number from 1 to"),
    (["simulate", "--spins", "9" * 60], {}, "--spins must be a whole number from 1 to"),
    (["certify", "--out", "{tmp}/bundle", "--spins", "1e30"], {}, "--spins must be"),
    (["keygen", "--out", ""], {}, "names no file"),
    (["keygen", "--out", "{tmp}/lab"], {"STARFEVER_SIGNING_PASSPHRASE": ""},
     "set but empty"),
    (["tune", "--rtp", "95%", "--model", "{bad}", "--out", "{tmp}/tuned.json"], {},
     "is not UTF-8 text"),
    (["rtp", "--model", "{bad}"], {}, "is not UTF-8 text"),
    (["serve", "--market", ""], {}, "unknown market ''"),
    (["operator-wallet-demo", "--port", "0", "--db", "/nonexistent-folder/wallet.db"],
     {"STARFEVER_OPERATOR_SECRET": SECRET}, "cannot open it as an SQLite file"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                          env: dict[str, str], needle: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bad = _bad_model(tmp_path)
    argv = [a.replace("{tmp}", str(work)).replace("{bad}", bad) for a in args]
    out = run_cli(*argv, env=env, cwd=work)
    assert out.returncode == 2, out.stdout + out.stderr
    assert needle in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert list(work.iterdir()) == []  # nothing written (no ..key, no half bundle, no model)


@pytest.mark.parametrize("args", [["rtp"], ["simulate", "--spins", "1000", "--seed", "1"],
                                  ["--help"]])
def test_a_reader_that_closes_the_output_early_gets_silence(args: list[str]) -> None:
    """``starfever rtp | head -1``: the command's writes fail with EPIPE once the reader is
    gone; it stops without a word on stderr (no "error: Broken pipe", no traceback) and exits
    as a shell reports SIGPIPE. Here the pipe's reader is closed before the command starts,
    so every write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "starfever.cli", *args], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == (0 if args == ["--help"] else 141)
