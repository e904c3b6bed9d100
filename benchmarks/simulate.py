"""Throughput of ``starfever simulate``: spins per second on 1 core, on all cores, end to end,
and the "ceiling loop" (the same generator drawing the 5 reel stops of a spin, one bounded
draw, and summing one table entry per spin), which bounds what the full-game kernel could reach.
Not a test: prints one table, with each row's share of the ceiling loop.

Rows:
- ``kernel, 1 core``: ``run_chunk`` alone, one call, in this process (no chunks, no merge).
- ``simulate(), 1 worker``: the library call, in this process: 2^18-spin chunks, each from
  its own spawned stream, merged exactly.
- ``command, 1 worker``: ``starfever simulate --spins N --workers 1 --seed 1 --json`` in a
  child process; the rate it reports (spins over the time spent playing), and its whole
  wall-clock time (start-up, numba's cache, the exact figures, the report) in the last column.
- ``full game, K cores``: ``simulate()`` on all cores, end to end (workers started), with 4x as
  many spins per core to keep that overhead small.
- ``ceiling loop, 1 core``.

The rows are measured in turn within each repeat, so load from other work falls on all of
them alike. On a machine shared with other work the wall-clock figures move a lot: the 1-core
rows also give the rate per CPU-second (``process_time``, or the child's CPU time), and the
load average is printed.

    python benchmarks/simulate.py [--spins N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

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


Rates = tuple[float, float, float]
"""(spins per wall-clock second, spins per CPU-second, whole command's wall-clock seconds)."""
_NAN = float("nan")
_STARFEVER = str(Path(sys.executable).with_name("starfever"))
"""The ``starfever`` command of this environment."""


def _timed(spins: int, run: Callable[[], object]) -> Rates:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return spins / (time.perf_counter() - wall), spins / (time.process_time() - cpu), _NAN


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


def _in_process(spins: int) -> Rates:
    """``simulate(workers=1)``: chunks, their streams and the merge, in this process."""
    model = load_model("default")
    cpu = time.process_time()
    result = simulate(model, spins, 1, workers=1)
    return result.spins_per_second, spins / (time.process_time() - cpu), _NAN


def _command(spins: int) -> Rates:
    """``starfever simulate --workers 1`` as a user runs it, in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    out = subprocess.run([_STARFEVER, "simulate", "--spins", str(spins),
                          "--workers", "1", "--seed", "1", "--json"],
                         check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    reported = float(json.loads(out)["spins_per_second"])
    return reported, spins / cpu, wall


def _full_game(spins: int, workers: int) -> Rates:
    result = simulate(load_model("default"), spins, 1, workers=workers)
    return result.spins_per_second, _NAN, _NAN


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spins", type=int, default=50_000_000, help="spins per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="measurements per row")
    args = parser.parse_args()
    cores = default_workers()
    _full_game(1000, 1)  # compile / load the kernel once
    rows: list[tuple[str, int, Callable[[], Rates]]] = [
        ("kernel, 1 core", 1, lambda: _kernel(args.spins)),
        ("simulate(), 1 worker", 1, lambda: _in_process(args.spins)),
        ("command, 1 worker", 1, lambda: _command(args.spins)),
        (f"full game, {cores} cores", cores, lambda: _full_game(4 * args.spins * cores, cores)),
        ("ceiling loop, 1 core", 1, lambda: _ceiling(args.spins)),
    ]
    print(f"{'what':<24} {'median M spins/s':>17} {'best':>8} {'per core':>9} "
          f"{'per CPU-s':>10} {'of ceiling':>11} {'(per CPU-s)':>12} {'command s':>10}   "
          f"({args.repeat} runs, "
          f"{args.spins:,} spins; load average before: {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs)")
    rates: dict[str, list[Rates]] = {label: [] for label, _, _ in rows}
    for _ in range(args.repeat):  # each row in turn, so that load falls on all alike
        for label, _, measure in rows:
            rates[label].append(measure())
    medians = {label: tuple(statistics.median(r[k] for r in found) for k in range(3))
               for label, found in rates.items()}
    ceiling = medians["ceiling loop, 1 core"]
    for label, n_cores, _ in rows:
        wall, cpu, command = medians[label]
        share = wall / n_cores / ceiling[0]
        # per CPU-second, the share moves far less with other work's load than wall-clock
        cpu_share = "" if label == "command, 1 worker" or math.isnan(cpu) else (
            f"{cpu / ceiling[1]:.0%}")
        print(f"{label:<24} {wall / 1e6:>17.2f} {max(r[0] for r in rates[label]) / 1e6:>8.2f} "
              f"{wall / n_cores / 1e6:>9.2f} {cpu / 1e6:>10.2f} {share:>11.0%} "
              f"{cpu_share:>12} {command:>10.2f}")
    game = medians["command, 1 worker"]
    print(f"command --workers 1 / ceiling loop: {game[0] / ceiling[0]:.0%} wall-clock "
          f"(the rate it reports), {game[1] / ceiling[1]:.0%} per CPU-second of the whole "
          f"command (load average after: {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
