"""The long statistical run of the live RNG: 1,000,000 stops per reel drawn through
``SystemRandomSource`` (os.urandom, the live path), with chi-square frequency, runs (above/below
the median) and lag-1 serial correlation p-values per reel from ``starfever.math.stats``.

    python tests/assurance/rng_report.py [--stops 1000000] [--json]

Not collected by pytest (the short versions are tests/rng/). Each p-value is uniform on [0, 1]
for a good generator: expect about 1 in 20 below 0.05, and none at 1e-4 or below.
"""

from __future__ import annotations

import argparse
import json
import time

from starfever.engine.model import load_model
from starfever.engine.rng import SystemRandomSource
from starfever.math.stats import chi_square_uniform, runs_test, serial_correlation


def reel_report(length: int, stops: int, source: SystemRandomSource) -> dict[str, float]:
    """p-values for ``stops`` live stops on a strip of ``length``."""
    drawn = [source.randbelow(length) for _ in range(stops)]
    return {"length": length,
            "chi_square_p": chi_square_uniform(drawn, length).p_value,
            "runs_p": runs_test([float(v) for v in drawn]).p_value,
            "serial_correlation_p": serial_correlation([float(v) for v in drawn]).p_value}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", type=int, default=1_000_000, help="stops per reel")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    model = load_model("default")
    source = SystemRandomSource()
    started = time.perf_counter()
    rows = {f"{kind} reel {i}": reel_report(len(strip), args.stops, source)
            for kind, reels in (("base", model.base_reels), ("star_wild", model.star_wild_reels))
            for i, strip in enumerate(reels)}
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{args.stops:,} live stops per reel ({time.perf_counter() - started:.0f} s)")
    print(f"{'reel':<16}{'length':>7}{'chi-square p':>14}{'runs p':>10}{'serial p':>10}")
    for name, row in rows.items():
        print(f"{name:<16}{row['length']:>7}{row['chi_square_p']:>14.4f}{row['runs_p']:>10.4f}"
              f"{row['serial_correlation_p']:>10.4f}")


if __name__ == "__main__":
    main()
