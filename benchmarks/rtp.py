"""How long ``starfever rtp`` takes, end to end as a user runs it: for a model seen before
(its figures cached per model hash, or shipped with the package) and for a model never seen
(a fresh, empty cache directory: every exact figure computed). Not a test: prints one table
with the machine's load average.

    python benchmarks/rtp.py [--model NAME] [--repeat R] [--cold]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(model: str, env: dict[str, str]) -> float:
    """Seconds one ``starfever rtp --json`` takes, process start included."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "starfever.cli", "rtp", "--json", "--model", model],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--repeat", type=int, default=5, help="warm runs (default 5)")
    parser.add_argument("--cold", action="store_true",
                        help="also one run with an empty cache (minutes on 2 cores)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    warm = [run(args.model, dict(os.environ)) for _ in range(args.repeat)]
    print(f"starfever rtp --model {args.model}, seen before: median {statistics.median(warm):.2f}"
          f" s, best {min(warm):.2f} s over {len(warm)} runs")
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            # --no-cache: the shipped figures would otherwise answer even with an empty cache
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "starfever.cli", "rtp", "--json", "--no-cache",
                            "--model", args.model], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            print(f"starfever rtp --model {args.model} --no-cache (every figure computed): "
                  f"{time.perf_counter() - started:.1f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
