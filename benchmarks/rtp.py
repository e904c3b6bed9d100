"""How long ``starfever rtp`` takes, end to end as a user runs it (process start included):

- *seen*: a model seen before (its figures cached per model hash, or shipped with the package);
- *new*: a model never seen (the model with one more BLANK weight in Hold & Cash, written to a
  file: a new hash, so every figure is computed, in a fresh, empty cache directory);
- *full cycle*: ``starfever rtp --full-cycle`` (every base stop combination enumerated and
  checked against the calculator), the figures themselves from the cache.

Not a test: prints one table with the machine's load average before and after each part (the
figures move with it: other work on the machine's cores slows every part).

    python benchmarks/rtp.py [--model NAME] [--repeat R] [--repeat-new N] [--skip-new]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from starfever.engine.model import load_model, model_from_dict


def run(args: list[str], env: dict[str, str]) -> float:
    """Seconds one ``starfever rtp --json ARGS`` takes, process start included."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "starfever.cli", "rtp", "--json", *args],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def report(label: str, times: list[float], before: str) -> None:
    print(f"{label}: median {statistics.median(times):.2f} s, best {min(times):.2f} s over "
          f"{len(times)} runs (load average {before} before, {load()} after)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--repeat", type=int, default=5, help="runs of seen and full cycle")
    parser.add_argument("--repeat-new", type=int, default=3, help="runs of a new model")
    parser.add_argument("--skip-new", action="store_true", help="leave out the new model")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, python {sys.version.split()[0]}")
    env = dict(os.environ)
    before = load()
    report(f"starfever rtp --model {args.model}, seen before",
           [run(["--model", args.model], env) for _ in range(args.repeat)], before)
    before = load()
    report(f"starfever rtp --model {args.model} --full-cycle",
           [run(["--model", args.model, "--full-cycle"], env) for _ in range(args.repeat)],
           before)
    if args.skip_new:
        return
    data = load_model(args.model).to_dict()
    with tempfile.TemporaryDirectory() as scratch:
        times = []
        before = load()
        for k in range(args.repeat_new):
            data["name"] = f"{args.model}-bench-{k}"
            data["hold_and_cash"]["cell_weights"]["BLANK"] += 1  # a new model every run
            path = Path(scratch) / f"new-{k}.json"
            path.write_text(json.dumps(data), encoding="utf-8")
            model_from_dict(data)  # refuses a model the tool would refuse
            cache = Path(scratch) / f"cache-{k}"  # empty: nothing seen before
            times.append(run(["--model", str(path)], dict(env, XDG_CACHE_HOME=str(cache),
                                                           STARFEVER_CACHE_DIR="")))
        report(f"starfever rtp --model NEW (from {args.model}, every figure computed)", times,
               before)


if __name__ == "__main__":
    main()
