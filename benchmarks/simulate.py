"""Throughput of ``starfever simulate``: spins per second on 1 core, on all cores, and the
"ceiling loop" (the same generator drawing 5 reel stops and reading one table entry per spin),
which bounds what the full-game kernel could reach. Not a test: prints one table.

The all-cores row is end to end, as a user sees it: it includes starting the worker processes
(about 2 s), so it plays 4x as many spins per core to keep that overhead small. On a machine
shared with other work the figures move a lot: the load average is printed beside them.

    python benchmarks/simulate.py [--spins N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import numpy.typing as npt
from numba import njit

from starfever.engine.model import load_model
from starfever.sim import simulate
from starfever.sim.rng import StreamState, below, chunk_states
from starfever.sim.runner import default_workers
from starfever.sim.tables import kernel_tables


@njit(cache=True)
def ceiling_loop(lengths: npt.NDArray[np.int64], windows: npt.NDArray[np.int8],
                 line_pay: npt.NDArray[np.int32], state: StreamState, spins: int) -> int:
    """5 unbiased reel stops and one line-pay lookup (the middle row) per spin."""
    total = 0
    for _ in range(spins):
        s0 = below(state, lengths[0])
        s1 = below(state, lengths[1])
        s2 = below(state, lengths[2])
        s3 = below(state, lengths[3])
        s4 = below(state, lengths[4])
        total += line_pay[windows[0, s0, 1], windows[1, s1, 1], windows[2, s2, 1],
                          windows[3, s3, 1], windows[4, s4, 1]]
    return total


def _ceiling(spins: int) -> float:
    t = kernel_tables(load_model("default"))
    state = chunk_states(0, 1)[0]
    ceiling_loop(t.base_lengths, t.base_windows, t.line_pay, state, 10)  # compile / load
    started = time.perf_counter()
    ceiling_loop(t.base_lengths, t.base_windows, t.line_pay, state, spins)
    return spins / (time.perf_counter() - started)


def _full_game(spins: int, workers: int) -> float:
    return simulate(load_model("default"), spins, 1, workers=workers).spins_per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spins", type=int, default=20_000_000, help="spins per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="measurements per row")
    args = parser.parse_args()
    cores = default_workers()
    _full_game(1000, 1)  # compile / load the kernel once
    rows = [
        ("full game, 1 core", 1, lambda: _full_game(args.spins, 1)),
        (f"full game, {cores} cores", cores, lambda: _full_game(4 * args.spins * cores, cores)),
        ("ceiling loop, 1 core", 1, lambda: _ceiling(args.spins)),
    ]
    print(f"{'what':<24} {'median M spins/s':>17} {'best':>8} {'per core':>9}"
          f"   ({args.repeat} runs; load average before: {os.getloadavg()[0]:.2f})")
    for label, n_cores, measure in rows:
        rates = [measure() / 1e6 for _ in range(args.repeat)]
        median = statistics.median(rates)
        print(f"{label:<24} {median:>17.2f} {max(rates):>8.2f} {median / n_cores:>9.2f}")


if __name__ == "__main__":
    main()
