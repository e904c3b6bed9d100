"""The RNG evidence of the certification bundle, computed when the bundle is made:

1. the scaling proofs: for every range the game draws from with the model (each reel strip's
   length, each Hold & Cash weight total), every byte string the live source's rejection
   sampler can read is fed through it, and each value below the range must come from exactly
   the same number of strings (the mapping from CSPRNG bytes to draws is exactly uniform);
2. statistical tests of live outcomes drawn through ``SystemRandomSource`` (``os.urandom``):
   chi-square, runs and lag-1 serial correlation per reel, reel-against-reel independence,
   and whole live rounds (their first stops, win/no-win runs, the feature frequency against
   the exact one);
3. a dieharder subset on ``starfever rng-stream`` when dieharder is installed (else the bundle
   says so; the full battery is ``scripts/dieharder-full.sh``).
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from itertools import product
from typing import Any

from starfever.engine.model import MathModel
from starfever.engine.rng import SystemRandomSource
from starfever.engine.round import play_round
from starfever.math.stats import chi_square_uniform, runs_test, serial_correlation

ALPHA = 1e-4
"""A test 'fails' below this p-value: a sound generator fails one in 10,000 tests by chance."""
MAX_PROOF_BYTES = 2
"""Ranges whose rejection sampler reads up to this many bytes are proved by enumeration
(65,536 strings); every range of a model file in practice (strips, weight totals < 65,536)."""
DIEHARDER_TESTS = {"1": "diehard_operm5", "15": "diehard_runs", "101": "sts_runs"}

Progress = Callable[[int], None]


def ranges(model: MathModel) -> dict[str, int]:
    """Every range the live game draws from with ``model``, by what it draws."""
    out: dict[str, int] = {}
    for kind, reels in (("base", model.base_reels), ("star_wild", model.star_wild_reels)):
        for i, strip in enumerate(reels):
            out[f"{kind} reel {i + 1} stop"] = len(strip)
    hc = model.hold_and_cash
    out["Hold & Cash cell kind (weight total)"] = sum(hc.cell_weights)
    out["Hold & Cash coin value (weight total)"] = sum(hc.coin_values)
    out["Hold & Cash cash value (weight total)"] = sum(hc.cash_values)
    return out


def prove_uniform(n: int) -> dict[str, Any]:
    """Feed every byte string of the sampler's read size through ``randbelow(n)``."""
    bits = (n - 1).bit_length()
    size = (bits + 7) // 8
    if size > MAX_PROOF_BYTES:
        return {"range": n, "proved": False, "reason": f"reads {size} bytes per try"}
    strings = iter(product(range(256), repeat=size))

    def read(k: int) -> bytes:
        assert k == size
        return bytes(next(strings))

    source = SystemRandomSource(read=read)
    accepted = n * 2 ** (8 * size - bits)
    counts = Counter(source.randbelow(n) for _ in range(accepted))
    rejected = 256 ** size - accepted
    uniform = set(counts) == set(range(n)) and len(set(counts.values())) == 1
    return {"range": n, "bytes_per_try": size, "byte_strings": 256 ** size,
            "accepted": accepted, "rejected": rejected,
            "strings_per_value": accepted // n, "proved": uniform}


def reel_tests(model: MathModel, stops: int, progress: Progress) -> dict[str, Any]:
    """Live stops per reel: chi-square, runs, serial correlation; reel 1 against reel 2."""
    source = SystemRandomSource()
    out: dict[str, Any] = {}
    base_draws: list[list[int]] = []
    for kind, reels in (("base", model.base_reels), ("star_wild", model.star_wild_reels)):
        for i, strip in enumerate(reels):
            n = len(strip)
            drawn = [source.randbelow(n) for _ in range(stops)]
            if kind == "base":
                base_draws.append(drawn)
            values = [float(v) for v in drawn]
            out[f"{kind} reel {i + 1}"] = {
                "length": n, "stops": stops,
                "chi_square_p": chi_square_uniform(drawn, n).p_value,
                "runs_p": runs_test(values).p_value,
                "serial_correlation_p": serial_correlation(values).p_value}
            progress(stops)
    a, b = base_draws[0], base_draws[1]
    la, lb = len(model.base_reels[0]), len(model.base_reels[1])
    pairs = [(x * 10 // la) * 10 + y * 10 // lb for x, y in zip(a, b, strict=True)]
    out["base reel 1 x reel 2 (10 x 10 cells)"] = {
        "stops": stops, "chi_square_p": chi_square_uniform(pairs, 100).p_value}
    return out


def round_tests(model: MathModel, rounds: int, feature_p: float,
                progress: Progress) -> dict[str, Any]:
    """Whole live rounds: first reel's stops uniform, win/no-win runs, feature frequency."""
    source = SystemRandomSource()
    first: list[int] = []
    wins: list[int] = []
    features = 0
    step = max(1, rounds // 100)
    for i in range(rounds):
        r = play_round(model, 1, source)
        first.append(r.events[0]["stops"][0])
        wins.append(int(r.total_win > 0))
        features += r.feature is not None
        if (i + 1) % step == 0:
            progress(step)
    progress(rounds % step)
    sd = math.sqrt(rounds * feature_p * (1 - feature_p))
    z = (features - rounds * feature_p) / sd if sd else 0.0
    return {"rounds": rounds,
            "first_stop_chi_square_p": chi_square_uniform(first,
                                                          len(model.base_reels[0])).p_value,
            "win_runs_p": runs_test([float(w) for w in wins]).p_value,
            "features": features, "feature_frequency": features / rounds,
            "feature_frequency_exact": feature_p,
            "feature_z": z, "feature_p": math.erfc(abs(z) / math.sqrt(2))}


def dieharder(timeout: float = 300, say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """A dieharder subset on ``starfever rng-stream``, or why none was run. ``say`` hears a
    line as each test starts and ends (up to ``timeout`` seconds each), with its time."""
    found = shutil.which("dieharder")
    if found is None:
        return {"installed": False, "ran": False,
                "note": "dieharder is not installed on the machine that made this bundle: no "
                        "battery was run. Install it (Debian: apt-get install dieharder) and run"
                        " scripts/dieharder-full.sh for the full battery; docs/assurance.md "
                        "keeps the last full run's results."}
    results: dict[str, Any] = {"installed": True, "ran": True, "path": found, "tests": {}}
    for number, (test_id, name) in enumerate(DIEHARDER_TESTS.items(), 1):
        if say is not None:
            say(f"dieharder {name} ({number} of {len(DIEHARDER_TESTS)}, up to "
                f"{timeout:.0f} s) ...")
        started = time.perf_counter()
        stream = subprocess.Popen([sys.executable, "-m", "starfever.cli", "rng-stream"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            run = subprocess.run([found, "-g", "200", "-d", test_id], stdin=stream.stdout,
                                 capture_output=True, text=True, timeout=timeout, check=False)
            rows = [line.strip() for line in run.stdout.splitlines() if name in line]
        except subprocess.TimeoutExpired:
            rows = []
        finally:
            assert stream.stdout is not None
            stream.stdout.close()
            stream.kill()
            stream.wait()
        seconds = time.perf_counter() - started
        results["tests"][name] = {
            "rows": rows, "assessments": [row.split("|")[-1].strip() for row in rows],
            "seconds": round(seconds, 1)}
        if say is not None:
            verdict = ", ".join(results["tests"][name]["assessments"]) or "no result"
            say(f"dieharder {name} done in {seconds:.1f} s: {verdict}")
    # passed: every test gave a verdict (one cut off by the timeout gave none) and none FAILED
    results["passed"] = all(
        t["assessments"] and all(a in ("PASSED", "WEAK") for a in t["assessments"])
        for t in results["tests"].values())
    return results


def failures(evidence: dict[str, Any]) -> list[str]:
    """What in ``evidence`` did not hold (a proof that failed, a p-value below ALPHA)."""
    bad = [f"scaling of {name} ({p['range']}) is not uniform"
           for name, p in evidence["scaling_proofs"].items() if p["proved"] is False
           and "reason" not in p]
    for name, row in evidence["live_reels"].items():
        bad += [f"{name}: {key} {value:.2g}" for key, value in row.items()
                if key.endswith("_p") and value < ALPHA]
    rounds = evidence["live_rounds"]
    bad += [f"live rounds: {key} {rounds[key]:.2g}"
            for key in ("first_stop_chi_square_p", "win_runs_p", "feature_p")
            if rounds[key] < ALPHA]
    for name, row in evidence.get("volume", {}).get("strips", {}).items():
        bad += [f"volume {name}: {key} {value:.2g}" for key, value in row.items()
                if key.endswith("_p") and value < ALPHA]
    battery = evidence["dieharder"]
    if battery.get("ran") and not battery.get("passed"):
        which = "full battery" if battery.get("battery") == "full" else "subset"
        bad.append(f"dieharder {which}: a test FAILED or gave no result")
    return bad
