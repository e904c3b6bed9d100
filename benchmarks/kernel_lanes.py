"""The simulator kernel with independent streams in SIMD lanes (ADR 0022's last named step),
measured against the shipped single-stream kernel and the ceiling loop. Not a test, and not
the shipped kernel: the variant here exists to be measured.

The variant plays ``L`` chunks at once. Each lane is one xoshiro256** stream and plays exactly
what the shipped ``run_chunk`` plays from that stream (same draws, same order, its features on
its own stream); the script checks that the variant's sums equal those of ``L`` single-stream
chunks before it times anything. One step of the variant:

1. one loop over the ``L`` lanes advances every generator by one output and decodes the five
   stops with the same chain of 32 x 32-bit products as ``rng.spin_stops_local``. The lanes'
   words live in one flat array (so that LLVM can prove the lanes' loads and stores apart) and
   the strip lengths are masked to 32 bits (so that a product is one ``vpmuludq``): LLVM
   vectorises this loop (the script counts the ``vpmuludq`` in the compiled code);
2. one scalar loop over the lanes plays each accepted draw's round with the shipped
   ``_base_spin`` and, off the hot path, ``_feature_round`` on that lane's stream.

Rows, each in turn within a repeat, per CPU-second (``process_time``), medians: the draws
alone (five stops a spin, summed) from one stream and in 8 lanes; ``kernel, 1 stream`` (the
shipped ``run_chunk``), ``lanes, L`` for each ``--lanes``, and the ceiling loop of
``benchmarks/simulate.py``; each with its ratio to the kernel and its share of the ceiling
loop.

    python benchmarks/kernel_lanes.py [--spins N] [--repeat R] [--lanes 8 16 32]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from starfever.engine.model import load_model
from starfever.engine.symbols import STAR_WILD_COINS
from starfever.sim import kernel
from starfever.sim.kernel import SCRATCH, KernelArgs, _base_spin, _feature_round, _fold_tally
from starfever.sim.rng import chunk_states, next_local, spin_radix, spin_stops_local
from starfever.sim.runner import HISTOGRAM_EDGES, JACKPOT_COLUMNS, play_chunk
from starfever.sim.tables import (
    T_BASE_LENGTHS,
    T_FEATURE,
    T_HOT_STRIDE,
    T_SPIN_THRESHOLD,
    kernel_tables,
)

sys.path.insert(0, str(Path(__file__).parent))
from simulate import ceiling_loop  # the ceiling loop of the README's table

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ZERO = np.uint64(0)
_TALLY = kernel._TALLY
_WORDS = 10
"""Per lane in the flat array: 4 generator words, 5 stops, the draw's acceptance."""


@njit(cache=False, nogil=True, inline="always")
def _lane_step(w: npt.NDArray[np.uint64], lanes: int, n0: np.uint64, n1: np.uint64,
               n2: np.uint64, n3: np.uint64, n4: np.uint64, limit: np.uint64) -> None:
    """Every lane's next draw (``rng.next_local``) and its five stops (the chain of
    ``rng.spin_stops_local``, one draw, no retry: a rejected draw leaves the lane without a
    spin this step, as the retry would draw the lane's next output), written to ``w``; the
    strip lengths masked to 32 bits. LLVM vectorises this loop when ``lanes`` is a constant."""
    for lane in range(lanes):
        out, x0, x1, x2, x3 = next_local(w[lane], w[lanes + lane], w[2 * lanes + lane],
                                         w[3 * lanes + lane])
        w[lane], w[lanes + lane] = x0, x1
        w[2 * lanes + lane], w[3 * lanes + lane] = x2, x3
        m = (out >> _S32) * n0
        w[4 * lanes + lane] = m >> _S32
        m = (m & _M32) * n1
        w[5 * lanes + lane] = m >> _S32
        m = (m & _M32) * n2
        w[6 * lanes + lane] = m >> _S32
        m = (m & _M32) * n3
        w[7 * lanes + lane] = m >> _S32
        m = (m & _M32) * n4
        w[8 * lanes + lane] = m >> _S32
        w[9 * lanes + lane] = (m & _M32) >= limit


def make_run_lanes(lanes: int) -> Any:
    """The variant compiled for ``lanes`` streams: the lane count is a constant of the compiled
    code (a closure variable), so the lane loops have a known trip count, as a shipped kernel
    of this shape would have them (with a run-time count LLVM adds checks and a remainder loop,
    and the variant measured 0.83-0.97x instead)."""

    @njit(cache=False, nogil=True)
    def run_lanes(t: KernelArgs, states: npt.NDArray[np.uint64], per_lane: int,
                  sums: npt.NDArray[np.int64], win_hist: npt.NDArray[np.int64],
                  hold_hist: npt.NDArray[np.int64], edges: npt.NDArray[np.float64],
                  jackpots_at: npt.NDArray[np.int64]) -> None:
        """``per_lane`` rounds from each of the ``lanes`` streams ``states[l]``, added to the
        sums as ``kernel.run_chunk`` adds them (``jackpots_at`` records a round's index
        within its lane)."""
        _play_lanes(t, states, lanes, per_lane, sums, win_hist, hold_hist, edges, jackpots_at)

    return run_lanes


@njit(cache=False, nogil=True, inline="always")
def _play_lanes(t: KernelArgs, states: npt.NDArray[np.uint64], lanes: int, per_lane: int,
                sums: npt.NDArray[np.int64], win_hist: npt.NDArray[np.int64],
                hold_hist: npt.NDArray[np.int64], edges: npt.NDArray[np.float64],
                jackpots_at: npt.NDArray[np.int64]) -> None:
    n0, n1, n2, n3, n4, limit = spin_radix(t[T_BASE_LENGTHS], t[T_SPIN_THRESHOLD][0])
    n0, n1, n2, n3, n4 = n0 & _M32, n1 & _M32, n2 & _M32, n3 & _M32, n4 & _M32
    stride = np.uint64(t[T_HOT_STRIDE][0])
    feature = t[T_FEATURE]
    scratch = np.zeros(SCRATCH, dtype=np.int64)
    tally = np.zeros(3 * _TALLY, dtype=np.int64)
    state = np.zeros(4, dtype=np.uint64)
    w = np.zeros(_WORDS * lanes, dtype=np.uint64)
    played = np.zeros(lanes, dtype=np.int64)
    for lane in range(lanes):
        for k in range(4):
            w[k * lanes + lane] = states[lane, k]
    left = lanes if per_lane > 0 else 0
    while left > 0:
        _lane_step(w, lanes, n0, n1, n2, n3, n4, limit)  # vectorised
        for lane in range(lanes):  # scalar: each accepted draw's round
            if w[9 * lanes + lane] == _ZERO or played[lane] >= per_lane:
                continue
            spin = played[lane]
            played[lane] = spin + 1
            left -= spin + 1 == per_lane
            s0, s1, s2 = w[4 * lanes + lane], w[5 * lanes + lane], w[6 * lanes + lane]
            s3, s4 = w[7 * lanes + lane], w[8 * lanes + lane]
            pay, jackpot_mask, n_coins = _base_spin(t, stride, s0, s1, s2, s3, s4)
            if n_coins < STAR_WILD_COINS and jackpot_mask == _ZERO and pay < _TALLY:
                tally[np.uint64(pay)] += 1
                continue
            state[0], state[1] = w[lane], w[lanes + lane]
            state[2], state[3] = w[2 * lanes + lane], w[3 * lanes + lane]
            scratch[0], scratch[1], scratch[2], scratch[3], scratch[4] = s0, s1, s2, s3, s4
            _feature_round(feature, scratch, state, spin, pay, int(jackpot_mask), n_coins,
                           tally, sums, win_hist, hold_hist, edges, jackpots_at)
            w[lane], w[lanes + lane] = state[0], state[1]
            w[2 * lanes + lane], w[3 * lanes + lane] = state[2], state[3]
    sums[kernel.SPINS] += per_lane * lanes
    _fold_tally(tally, sums, win_hist, edges)


@njit(cache=False, nogil=True)
def draws_one_stream(radix: Any, state: npt.NDArray[np.uint64], spins: int) -> int:
    """The draws alone, as the shipped kernel makes them: ``spins`` spins' five stops from one
    stream, summed (so that nothing is optimised away)."""
    x0, x1, x2, x3 = state[0], state[1], state[2], state[3]
    total = np.uint64(0)
    for _ in range(spins):
        (s0, s1, s2, s3, s4), (x0, x1, x2, x3) = spin_stops_local(x0, x1, x2, x3, radix)
        total += s0 + s1 + s2 + s3 + s4
    return int(total)


def make_draws_in_lanes(lanes: int) -> Any:
    """The draws alone, as the variant makes them: one vectorised step for every lane, then the
    accepted draws' stops summed, until ``spins`` are drawn."""

    @njit(cache=False, nogil=True)
    def draws_in_lanes(radix: Any, states: npt.NDArray[np.uint64], spins: int) -> int:
        n0, n1, n2, n3, n4, limit = radix
        n0, n1, n2, n3, n4 = n0 & _M32, n1 & _M32, n2 & _M32, n3 & _M32, n4 & _M32
        w = np.zeros(_WORDS * lanes, dtype=np.uint64)
        for lane in range(lanes):
            for k in range(4):
                w[k * lanes + lane] = states[lane, k]
        total = np.uint64(0)
        drawn = 0
        while drawn < spins:
            _lane_step(w, lanes, n0, n1, n2, n3, n4, limit)
            for lane in range(lanes):
                if w[9 * lanes + lane] != _ZERO:
                    drawn += 1
                    total += (w[4 * lanes + lane] + w[5 * lanes + lane] + w[6 * lanes + lane]
                              + w[7 * lanes + lane] + w[8 * lanes + lane])
        return int(total)

    return draws_in_lanes


Outcome = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]
"""(sums, win histogram, Hold & Cash histogram)."""
_EDGES = np.array(HISTOGRAM_EDGES, dtype=np.float64)


_COMPILED: dict[int, Any] = {}


def run_lanes_for(lanes: int) -> Any:
    """The variant for ``lanes`` streams, compiled once."""
    if lanes not in _COMPILED:
        _COMPILED[lanes] = make_run_lanes(lanes)
    return _COMPILED[lanes]


def play_lanes(tables: KernelArgs, seed: int, lanes: int, per_lane: int) -> Outcome:
    """The variant on the streams of chunks ``0 .. lanes - 1`` of ``seed``."""
    states = np.array(chunk_states(seed, lanes), dtype=np.uint64)
    sums = np.zeros(kernel.N_SUMS, dtype=np.int64)
    win_hist = np.zeros(len(_EDGES) + 2, dtype=np.int64)
    hold_hist = np.zeros(len(_EDGES) + 2, dtype=np.int64)
    jackpots_at = np.zeros((max(64, lanes * per_lane >> 10), JACKPOT_COLUMNS), dtype=np.int64)
    run_lanes_for(lanes)(tables, states, per_lane, sums, win_hist, hold_hist, _EDGES,
                         jackpots_at)
    return sums, win_hist, hold_hist


def check_lanes(tables: KernelArgs, lanes: int, per_lane: int, seed: int = 7) -> None:
    """Exit unless the lanes' sums are those of ``lanes`` single-stream chunks of the same
    streams (added, the largest win taken as the largest)."""
    sums, win_hist, hold_hist = play_lanes(tables, seed, lanes, per_lane)
    chunks = [play_chunk(tables, i, state, per_lane)
              for i, state in enumerate(chunk_states(seed, lanes))]
    expected = np.sum([c.sums for c in chunks], axis=0)
    expected[kernel.MAX_WIN] = max(int(c.sums[kernel.MAX_WIN]) for c in chunks)
    same = (np.array_equal(sums, expected)
            and np.array_equal(win_hist, np.sum([c.win_hist for c in chunks], axis=0))
            and np.array_equal(hold_hist, np.sum([c.hold_hist for c in chunks], axis=0)))
    if not same:
        sys.exit(f"lanes={lanes}: the lanes' sums differ from {lanes} single-stream chunks")


def vectorised_products(lanes: int) -> int:
    """How many ``vpmuludq`` (packed 32 x 32-bit products) the variant for ``lanes`` holds."""
    return sum(code.count("vpmuludq") for code in run_lanes_for(lanes).inspect_asm().values())


def _per_cpu_second(spins: int, run: Callable[[], Any]) -> float:
    cpu = time.process_time()
    run()
    return spins / (time.process_time() - cpu)


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spins", type=int, default=40_000_000, help="spins per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="measurements per row")
    parser.add_argument("--lanes", type=int, nargs="+", default=[8, 16, 32],
                        help="lane counts to measure")
    args = parser.parse_args()
    if args.spins < 1 or args.repeat < 1 or any(n < 1 for n in args.lanes):
        parser.error("--spins, --repeat and --lanes must be positive")
    model = load_model("default")
    hot = kernel_tables(model)
    tables = hot.as_tuple()
    for lanes in args.lanes:
        check_lanes(tables, lanes, 1 << 14)
    threshold = int(hot.spin_threshold[0])
    ceiling_state = chunk_states(0, 1)[0]
    ceiling_loop(hot.base_lengths, threshold, hot.base_windows, hot.line_pay, ceiling_state, 10)
    single = chunk_states(0, 1)[0]
    radix = spin_radix(hot.base_lengths, threshold)
    lane_draws = make_draws_in_lanes(8)
    eight = np.array(chunk_states(0, 8), dtype=np.uint64)
    draws_one_stream(radix, single.copy(), 10)
    lane_draws(radix, eight, 10)
    rows: list[tuple[str, Callable[[], float]]] = [
        ("draws, 1 stream", lambda: _per_cpu_second(
            args.spins, lambda: draws_one_stream(radix, single.copy(), args.spins))),
        ("draws, 8 lanes", lambda: _per_cpu_second(
            args.spins, lambda: lane_draws(radix, eight, args.spins))),
        ("kernel, 1 stream", lambda: _per_cpu_second(
            args.spins, lambda: play_chunk(tables, 0, single, args.spins))),
        *[(f"lanes, {n}", lambda n=n: _per_cpu_second(
            args.spins, lambda: play_lanes(tables, 0, n, args.spins // n)))
          for n in args.lanes],
        ("ceiling loop", lambda: _per_cpu_second(args.spins, lambda: ceiling_loop(
            hot.base_lengths, threshold, hot.base_windows, hot.line_pay, ceiling_state,
            args.spins))),
    ]
    print(f"{_cpu_name()}, {os.cpu_count()} CPUs; load average before: "
          f"{os.getloadavg()[0]:.2f}; {args.repeat} runs of {args.spins:,} spins; the lanes' "
          f"sums checked equal to single-stream chunks; vpmuludq in the variants: "
          + ", ".join(f"{n} lanes {vectorised_products(n)}" for n in args.lanes))
    rates: dict[str, list[float]] = {label: [] for label, _ in rows}
    for _ in range(args.repeat):  # each row in turn, so that load falls on all alike
        for label, measure in rows:
            rates[label].append(measure())
    medians = {label: statistics.median(found) for label, found in rates.items()}
    base, ceiling = medians["kernel, 1 stream"], medians["ceiling loop"]
    print(f"{'what':<18} {'M spins/CPU-s':>14} {'ns a spin':>10} {'x kernel':>9} "
          f"{'of ceiling':>11}")
    for label, _ in rows:
        rate = medians[label]
        print(f"{label:<18} {rate / 1e6:>14.2f} {1e9 / rate:>10.2f} {rate / base:>9.2f} "
              f"{rate / ceiling:>11.0%}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
