"""RNG evidence at volume (``starfever certify --rng full``, ADR 0037): the chi-square, runs
and lag-1 serial tests on at least 10^8 live stops, and the whole dieharder battery.

The stops are the live generator's: bytes from ``SystemRandomSource``'s reader (``os.urandom``)
mapped to each strip's range by the very rejection rule of ``SystemRandomSource.randbelow``,
done on a block of tries at once (:func:`stops`). A block gives exactly the values that many
calls of ``randbelow`` give on the same bytes, in the same order (tested byte for byte), so
the tests see what live play would have drawn, at a rate a Python loop cannot reach. The
tests run on counts kept as the blocks pass (no 10^8-long list is ever held).
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from starfever.engine.model import MathModel
from starfever.engine.rng import SystemRandomSource
from starfever.math.stats import _regularized_upper_gamma

BLOCK = 1 << 20
"""Tries per block."""

Reader = Callable[[int], bytes]


def stops(n: int, count: int, read: Reader) -> npt.NDArray[np.int64]:
    """``count`` draws below ``n`` from ``read``'s bytes, as ``count`` calls of
    ``SystemRandomSource(read).randbelow(n)`` give them: each try reads the fewest whole bytes
    holding ``k = (n - 1).bit_length()`` bits (big-endian), keeps the top ``k`` bits, and is
    accepted below ``n``. The bytes of the last block's tries past ``count`` are read and
    dropped, as a stopped live game drops nothing it has not drawn (it never read them)."""
    if n < 2:
        return np.zeros(count, dtype=np.int64)
    bits = (n - 1).bit_length()
    size = (bits + 7) // 8
    shift = 8 * size - bits
    accept = n / (1 << bits)
    out = np.empty(count, dtype=np.int64)
    filled = 0
    weights = (256 ** np.arange(size - 1, -1, -1)).astype(np.int64)
    while filled < count:
        # enough tries for what is missing (plus a margin), never fewer than one
        tries = max(1, min(BLOCK, math.ceil((count - filled) / accept * 1.01) + 16))
        raw = np.frombuffer(read(tries * size), dtype=np.uint8).astype(np.int64)
        values = (raw.reshape(tries, size) @ weights) >> shift
        kept = values[values < n]
        take = min(len(kept), count - filled)
        out[filled:filled + take] = kept[:take]
        filled += take
    return out


class StreamTests:
    """Chi-square (uniform over ``0..n-1``), Wald-Wolfowitz runs above/below the law's median
    (values equal to it dropped, as ``starfever.math.stats.runs_test`` drops the sample's) and
    lag-1 serial correlation, kept as running sums over blocks."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.counts = np.zeros(n, dtype=np.int64)
        self.median = (n - 1) / 2
        self.above = self.below = self.runs = 0
        self.last_sign: bool | None = None
        self.total = self.squares = self.products = 0
        self.first: int | None = None
        self.last: int | None = None
        self.size = 0

    def add(self, block: npt.NDArray[np.int64]) -> None:
        """Take the next block of draws."""
        if not len(block):
            return
        self.counts += np.bincount(block, minlength=self.n)
        signs = block[block != self.median] > self.median
        if len(signs):
            self.above += int(signs.sum())
            self.below += int(len(signs) - signs.sum())
            self.runs += int((signs[1:] != signs[:-1]).sum())
            if self.last_sign is None or bool(signs[0]) != self.last_sign:
                self.runs += 1
            self.last_sign = bool(signs[-1])
        self.total += int(block.sum())
        self.squares += int((block * block).sum())
        self.products += int((block[1:] * block[:-1]).sum())
        if self.last is not None:
            self.products += self.last * int(block[0])
        if self.first is None:
            self.first = int(block[0])
        self.last = int(block[-1])
        self.size += len(block)

    def result(self) -> dict[str, Any]:
        """The three tests' statistics and p-values."""
        n, size = self.n, self.size
        expected = size / n
        chi = float(((self.counts - expected) ** 2).sum() / expected)
        out: dict[str, Any] = {
            "range": n, "stops": size, "chi_square": chi,
            "chi_square_p": _regularized_upper_gamma((n - 1) / 2, chi / 2)}
        n1, n2 = self.above, self.below
        if n1 and n2:
            total = n1 + n2
            mean = 2 * n1 * n2 / total + 1
            var = 2 * n1 * n2 * (2 * n1 * n2 - total) / (total * total * (total - 1))
            z = (self.runs - mean) / math.sqrt(var)
            out |= {"runs": self.runs, "runs_z": z, "runs_p": math.erfc(abs(z) / math.sqrt(2))}
        else:
            out |= {"runs": self.runs, "runs_z": 0.0, "runs_p": 1.0}
        mean_x = self.total / size
        var = self.squares - size * mean_x * mean_x
        assert self.first is not None and self.last is not None
        cross = (self.products - mean_x * (2 * self.total - self.first - self.last)
                 + (size - 1) * mean_x * mean_x)
        r = cross / var if var else 0.0
        out |= {"serial_correlation": r,
                "serial_correlation_p": math.erfc(abs(r * math.sqrt(size)) / math.sqrt(2))}
        return out


def volume_tests(model: MathModel, total: int, progress: Callable[[int], None],
                 read: Reader | None = None) -> dict[str, Any]:
    """``total`` live stops spread evenly over every strip of ``model`` (base and Star Wild
    respin), each strip's stops tested by :class:`StreamTests`."""
    reader = read or SystemRandomSource().reader
    strips = [(f"{kind} reel {i + 1}", len(strip))
              for kind, reels in (("base", model.base_reels),
                                  ("star_wild", model.star_wild_reels))
              for i, strip in enumerate(reels)]
    per, extra = divmod(total, len(strips))
    out: dict[str, Any] = {}
    for index, (name, n) in enumerate(strips):
        want = per + (index < extra)
        test = StreamTests(n)
        left = want
        while left:
            size = min(BLOCK, left)
            test.add(stops(n, size, reader))
            left -= size
            progress(size)
        out[name] = test.result()
    return {"stops": total, "method": "live bytes (os.urandom) through randbelow's rejection "
            "rule, in blocks (starfever.certify.rng_volume.stops)", "strips": out}


def plan_full_battery(listing: str) -> list[list[str]]:
    """The dieharder runs of the whole battery, from ``dieharder -l``'s listing: every test
    once, with the ntuple ranges ``dieharder -a`` uses for the four rgb tests that take one,
    and ``rgb_minimum_distance`` per dimension (its default fails for every generator,
    /dev/urandom included: a defect of dieharder 3.31.1), as scripts/dieharder-full.sh does."""
    ntuples = {"200": range(1, 13), "201": range(2, 6), "202": range(2, 6),
               "203": range(0, 33)}
    runs: list[list[str]] = []
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[0] != "-d" or not parts[1].isdigit():
            continue
        test_id = parts[1]
        if test_id in ntuples:
            runs += [["-d", test_id, "-n", str(k)] for k in ntuples[test_id]]
        else:
            runs.append(["-d", test_id])
    return runs


def full_battery(say: Callable[[str], None], progress: bool, limit: int | None = None,
                 timeout: float = 3600) -> dict[str, Any]:
    """Every run of :func:`plan_full_battery` on ``starfever rng-stream`` (hours; a tqdm bar
    over the runs); ``limit``: only the first that many runs (to try the path at small size).
    Where dieharder is not installed, says so."""
    from tqdm import tqdm

    found = shutil.which("dieharder")
    if found is None:
        return {"installed": False, "ran": False, "battery": "full",
                "note": "dieharder is not installed on the machine that made this bundle: the "
                        "full battery was not run (Debian: apt-get install dieharder)."}
    listing = subprocess.run([found, "-l"], capture_output=True, text=True, check=False,
                             timeout=60).stdout
    plan = plan_full_battery(listing)
    if limit is not None:
        plan = plan[:limit]
    results: dict[str, Any] = {"installed": True, "ran": True, "battery": "full",
                               "path": found, "runs": len(plan), "tests": {}}
    with tqdm(total=len(plan), desc="dieharder", unit="test", disable=not progress) as bar:
        for args in plan:
            name = " ".join(args)
            bar.set_postfix_str(name)
            started = time.perf_counter()
            rows = _run(found, args, timeout)
            verdicts = [row.split("|")[-1].strip() for row in rows]
            results["tests"][name] = {"rows": rows, "assessments": verdicts,
                                      "seconds": round(time.perf_counter() - started, 1)}
            if not progress:
                say(f"dieharder {name}: {', '.join(verdicts) or 'no result'}")
            bar.update(1)
    results["passed"] = all(
        t["assessments"] and all(a in ("PASSED", "WEAK") for a in t["assessments"])
        for t in results["tests"].values())
    results["weak"] = sum(a == "WEAK" for t in results["tests"].values()
                          for a in t["assessments"])
    return results


def _run(found: str, args: list[str], timeout: float) -> list[str]:
    stream = subprocess.Popen([sys.executable, "-m", "starfever.cli", "rng-stream"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        run = subprocess.run([found, "-g", "200", *args], stdin=stream.stdout,
                             capture_output=True, text=True, timeout=timeout, check=False)
        return [line.strip() for line in run.stdout.splitlines()
                if "|" in line and not line.strip().startswith(("stdin_input_raw", "test_name",
                                                                 "#"))
                and line.split("|")[-1].strip() in ("PASSED", "WEAK", "FAILED")]
    except subprocess.TimeoutExpired:
        return []
    finally:
        assert stream.stdout is not None
        stream.stdout.close()
        stream.kill()
        stream.wait()
