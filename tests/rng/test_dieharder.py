"""A short, time-boxed dieharder subset on the live generator's raw output, piped from
``starfever rng-stream``. The full battery is ``scripts/dieharder-full.sh`` (docs/assurance.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

DIEHARDER = shutil.which("dieharder")
QUICK_TESTS = {"1": "diehard_operm5", "15": "diehard_runs", "101": "sts_runs"}


@pytest.mark.slow
@pytest.mark.skipif(DIEHARDER is None, reason="dieharder is not installed "
                    "(scripts/test installs Debian's package when run as root)")
@pytest.mark.parametrize("test_id", sorted(QUICK_TESTS))
def test_dieharder_quick(test_id: str) -> None:
    stream = subprocess.Popen([sys.executable, "-m", "starfever.cli", "rng-stream"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        run = subprocess.run([str(DIEHARDER), "-g", "200", "-d", test_id], stdin=stream.stdout,
                             capture_output=True, text=True, timeout=240, check=False)
    finally:
        assert stream.stdout is not None
        stream.stdout.close()
        stream.kill()
        stream.wait()
    rows = [line for line in run.stdout.splitlines() if QUICK_TESTS[test_id] in line]
    assert rows, run.stdout + run.stderr
    for row in rows:
        assessment = row.split("|")[-1].strip()
        assert assessment in ("PASSED", "WEAK"), row
