"""Bad input to the commands a hostile tester tried on the day's new features: each is one line
on stderr, exit 2, no traceback, and nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.harness import run_cli, run_cli_in_process

SECRET = "s" * 40


def _runner(args: list[str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """A real process for the first case of each kind of refusal (a handler's input error,
    argparse's error, the top-level parser) and for the commands that would go on serving if
    they did not refuse (``serve``, ``operator-wallet-demo``); ``main`` in this process for the
    others, whose exit code, stderr and files are the same there (ADR 0042)."""
    if not args or args[0] in ("serve", "operator-wallet-demo") or args in (
            ["simulate", "--spins", "1e30"], ["rtp", "--nosuch"]):
        return run_cli
    return run_cli_in_process


def _bad_model(directory: Path) -> str:
    path = directory / "bad.json"
    path.write_bytes(b"\xff\xfe{")  # not UTF-8
    return str(path)


@pytest.mark.parametrize("args,env,needle", [
    (["simulate", "--spins", "1e30"], {}, "--spins must be a whole number from 1 to"),
    (["simulate", "--spins", "9" * 60], {}, "--spins must be a whole number from 1 to"),
    (["certify", "--out", "{tmp}/bundle", "--spins", "1e30"], {}, "--spins must be"),
    (["keygen", "--out", ""], {}, "names no file"),
    (["keygen", "--out", "{tmp}/sub/"], {}, "names a folder, not a file"),  # wrote sub.key
    (["keygen", "--out", "{tmp}"], {}, "names a folder, not a file"),  # wrote work.key
    (["report", "monthly", "--date", "2026-12-03"], {}, "must be YYYY-MM (a month)"),
    (["report", "daily", "--date", "2026-12"], {}, "must be YYYY-MM-DD (a day)"),
    (["keygen", "--out", "{tmp}/lab"], {"STARFEVER_SIGNING_PASSPHRASE": ""},
     "set but empty"),
    (["tune", "--rtp", "95%", "--model", "{bad}", "--out", "{tmp}/tuned.json"], {},
     "is not UTF-8 text"),
    (["rtp", "--model", "{bad}"], {}, "is not UTF-8 text"),
    (["serve", "--market", ""], {}, "unknown market ''"),
    (["serve", "--currency", "EUR,USD"], {}, "unknown currency 'USD'; currencies: EUR, GBP"),
    (["serve"], {"STARFEVER_CURRENCIES": "XYZ"}, "STARFEVER_CURRENCIES: unknown currency 'XYZ'"),
    (["operator-wallet-demo", "--port", "0", "--db", "/nonexistent-folder/wallet.db"],
     {"STARFEVER_OPERATOR_SECRET": SECRET}, "cannot open it as an SQLite file"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                          env: dict[str, str], needle: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bad = _bad_model(tmp_path)
    argv = [a.replace("{tmp}", str(work)).replace("{bad}", bad) for a in args]
    out = _runner(args)(*argv, env=env, cwd=work)
    assert out.returncode == 2, out.stdout + out.stderr
    assert needle in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert list(work.iterdir()) == []  # nothing written (no ..key, no half bundle, no model)


@pytest.mark.parametrize("args,line", [
    (["rtp", "--nosuch"], "starfever rtp: error: unrecognized arguments: --nosuch"),
    (["operator", "create"],
     "starfever operator create: error: the following arguments are required: name"),
    (["operator", "create", "boss", "--x"],
     "starfever operator create: error: unrecognized arguments: --x"),
    (["serve", "--port", "x"], "starfever serve: error: argument --port: invalid int value: 'x'"),
    (["report", "weekly", "--date", "2026-12-01"],
     "starfever report: error: argument period: invalid choice: 'weekly' (choose from "
     "'daily', 'monthly')"),
    ([], "starfever: error: the following arguments are required: COMMAND"),
])
def test_argument_errors_are_one_line_of_the_command_that_refused(
        tmp_path: Path, args: list[str], line: str) -> None:
    """argparse printed its usage block before the error, and an argument the subcommand did
    not know was refused by the top-level parser (``starfever rtp --nosuch`` showed
    ``starfever``'s usage)."""
    out = _runner(args)(*args, cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", line + "\n")
    assert list(tmp_path.iterdir()) == []


def test_help_is_still_the_whole_usage() -> None:
    out = run_cli("rtp", "--help")
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith("usage: starfever rtp [-h]") and "--full-cycle" in out.stdout


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


def test_a_reader_gone_before_buffered_output_is_flushed_is_a_broken_pipe() -> None:
    """Output small enough to wait in stdout's buffer (stdout a pipe, not unbuffered) met the
    broken pipe only at the interpreter's exit: "Exception ignored ... BrokenPipeError" and
    exit code 120. The command flushes its output itself now: silence and 141."""
    grid = json.dumps({"grid": [["LEMON"] * 3, ["WILD", "BAR", "GOLD"], ["LEMON"] * 3,
                                ["BAR"] * 3, ["GOLD"] * 3]})
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    try:
        done = subprocess.run([sys.executable, "-m", "starfever.cli", "eval"], input=grid,
                              stdout=write_end, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=120)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_reader_that_closes_an_endless_stream_ends_it_with_141() -> None:
    """``starfever rng-stream | head -c 10``: the exit status of starfever itself (not the
    pipeline's, which is head's)."""
    with subprocess.Popen([sys.executable, "-m", "starfever.cli", "rng-stream"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as stream:
        assert stream.stdout is not None and stream.stderr is not None
        assert len(stream.stdout.read(10)) == 10
        stream.stdout.close()  # as head does once it has its 10 bytes
        stderr = stream.stderr.read()
        code = stream.wait(timeout=120)
    assert (code, stderr) == (141, b"")
