"""Throughput of ``starfever simulate``: spins per second on 1 core, on all cores, and the
"ceiling loop" (the same generator drawing the 5 reel stops of a spin, one bounded draw, and
summing one table entry per spin), which bounds what the full-game kernel could reach. Not a
test: prints one table, with the full game's share of the ceiling.

The all-cores row is end to end, as a user sees it: it includes starting the worker processes
(about 2 s), so it plays 4x as many spins per core to keep that overhead small. On a machine
shared with other work the wall-clock figures move a lot: the 1-core rows also give the rate
per CPU-second of this process (``process_time``), and the load average is printed.

    python benchmarks/simulate.py [--spins N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from numba import njit

from starfever.engine.model import load_model
from starfever.sim import simulate
from starfever.sim.rng import StreamState, chunk_states, spin_radix, spin_stops_local
from starfever.sim.runner import default_workers, play_chunk
from starfever.sim.tables import kernel_tables


@njit(cache=True)
def ceiling_loop(lengths: npt.NDArray[np.int64], threshold: int,
                 windows: npt.NDArray[np.int8], line_pay: npt.NDArray[np.int32],
                 state: StreamState, spins: int) -> int:
    """The 5 stops of a spin (one draw, as the kernel) and one line-pay lookup (middle row)."""
    total = 0
    radix = spin_radix(lengths, threshold)
    x0, x1, x2, x3 = state[0], state[1], state[2], state[3]
    for _ in range(spins):
        (s0, s1, s2, s3, s4), (x0, x1, x2, x3) = spin_stops_local(x0, x1, x2, x3, radix)
        total += line_pay[windows[0, s0, 1], windows[1, s1, 1], windows[2, s2, 1],
                          windows[3, s3, 1], windows[4, s4, 1]]
    state[0], state[1], state[2], state[3] = x0, x1, x2, x3
    return total


Rates = tuple[float, float]
"""(spins per wall-clock second, spins per CPU-second of this process)."""


def _timed(spins: int, run: Callable[[], object]) -> Rates:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return spins / (time.perf_counter() - wall), spins / (time.process_time() - cpu)


def _ceiling(spins: int) -> Rates:
    t = kernel_tables(load_model("default"))
    state = chunk_states(0, 1)[0]
    threshold = int(t.spin_threshold[0])
    ceiling_loop(t.base_lengths, threshold, t.base_windows, t.line_pay, state, 10)  # compile
    return _timed(spins, lambda: ceiling_loop(t.base_lengths, threshold, t.base_windows,
                                              t.line_pay, state, spins))


def _kernel(spins: int) -> Rates:
    """The full-game kernel alone, in this process (no workers, no merge)."""
    tables = kernel_tables(load_model("default")).as_tuple()
    state = chunk_states(0, 1)[0]
    return _timed(spins, lambda: play_chunk(tables, 0, state, spins))


def _full_game(spins: int, workers: int) -> Rates:
    result = simulate(load_model("default"), spins, 1, workers=workers)
    return result.spins_per_second, float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spins", type=int, default=50_000_000, help="spins per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="measurements per row")
    args = parser.parse_args()
    cores = default_workers()
    _full_game(1000, 1)  # compile / load the kernel once
    rows: list[tuple[str, int, Callable[[], Rates]]] = [
        ("full game, 1 core", 1, lambda: _kernel(args.spins)),
        (f"full game, {cores} cores", cores, lambda: _full_game(4 * args.spins * cores, cores)),
        ("ceiling loop, 1 core", 1, lambda: _ceiling(args.spins)),
    ]
    print(f"{'what':<24} {'median M spins/s':>17} {'best':>8} {'per core':>9} "
          f"{'per CPU-s':>10}   ({args.repeat} runs; load average before: "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    medians = {}
    for label, n_cores, measure in rows:
        rates = [measure() for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in rates) / 1e6
        cpu = statistics.median(r[1] for r in rates) / 1e6
        medians[label] = (wall, cpu)
        print(f"{label:<24} {wall:>17.2f} {max(r[0] for r in rates) / 1e6:>8.2f} "
              f"{wall / n_cores:>9.2f} {cpu:>10.2f}")
    game, ceiling = medians["full game, 1 core"], medians["ceiling loop, 1 core"]
    print(f"full game / ceiling loop: {game[0] / ceiling[0]:.0%} wall-clock, "
          f"{game[1] / ceiling[1]:.0%} per CPU-second "
          f"(load average after: {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
