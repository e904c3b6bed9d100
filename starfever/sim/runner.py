"""Running the kernel over many chunks, in one or several processes, and merging exactly.

Reproducibility: the spins are cut into chunks of :data:`CHUNK_SPINS` whatever the number of
workers; chunk ``i`` plays from the ``i``-th child of ``SeedSequence(seed).spawn(chunks)`` and
returns integer sums, which add up to the same totals in any order. So a (model, seed, spins)
triple always gives the same :class:`SimulationResult`, on one process or many.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from starfever.engine.model import MathModel
from starfever.engine.symbols import CELLS
from starfever.sim import kernel
from starfever.sim.result import Moments, SimulationResult
from starfever.sim.rng import StreamState, chunk_state
from starfever.sim.tables import kernel_tables

CHUNK_SPINS = 1 << 18
"""Spins per chunk. Changing it changes every seeded result: treat it as part of the format."""
IN_PROCESS_CHUNKS = 8
"""With the default worker count, runs of at most this many chunks (a fraction of a second)
play in this process: starting workers would take longer than the run."""
BATCH_CHUNKS = 16
"""Most chunks one task plays (about 0.1 s): few enough messages, small enough to balance."""
BAND_EDGES_X = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
"""The upper ends of the PAR sheet's win bands (0, (0,1], (1,2], ...), in total bets."""
HISTOGRAM_EDGES = tuple(sorted({float(10 ** (k / 5)) for k in range(-5, 26)}
                               | {x + 1 / 40 for x in BAND_EDGES_X}))
"""Bin edges of the win histograms, in total bets: 0.1 to 100,000, 5 bins per decade, and
each band end plus half the smallest win step (1/20 total bet), so that a bin [e, e') starting
there begins just above the band end: the bands (a, b] are sums of whole bins."""
JACKPOT_ROWS = 64
"""Rows a chunk first gets for its €€€ rounds (about 9 expected); a chunk with more plays
again with room for all of them (same stream, same result)."""

JACKPOT_COLUMNS = 4
"""Columns of a chunk's €€€ rounds: spin, base lines, respin lines, game win (line bets)."""

_SQUARE_CARRY = 1 << 62
_WORKER_TABLES: kernel.KernelArgs | None = None


@dataclass(frozen=True, slots=True)
class ChunkOutcome:
    """What one chunk returns: its index and its integer sums."""

    index: int
    """Chunk number (its seed child)."""
    sums: npt.NDArray[np.int64]
    """The kernel's sums, laid out as ``kernel.SPINS`` ... ``kernel.N_SUMS``."""
    win_hist: npt.NDArray[np.int64]
    """Rounds per game-win bin."""
    hold_hist: npt.NDArray[np.int64]
    """Hold & Cash features per payout bin."""
    jackpots_at: npt.NDArray[np.int64]
    """``[k, 4]``: (spin within the chunk, €€€ lines of the base spin, of the respin, game win
    in line bets) of each round with €€€ lines."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Consecutive chunks one task plays: a few integers, so any machine can take it."""

    seed: int
    """Root seed of the run."""
    first: int
    """Index of the first chunk."""
    sizes: tuple[int, ...]
    """Spins of each chunk."""


def default_workers() -> int:
    """All cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def play_chunk(tables: kernel.KernelArgs, index: int, state: StreamState,
               spins: int) -> ChunkOutcome:
    """Play one chunk in this process."""
    edges = np.array(HISTOGRAM_EDGES, dtype=np.float64)
    rows = max(JACKPOT_ROWS, spins >> 12)  # ample for any game with €€€ below 1 in 4096
    while True:
        sums = np.zeros(kernel.N_SUMS, dtype=np.int64)
        win_hist = np.zeros(len(edges) + 2, dtype=np.int64)
        hold_hist = np.zeros(len(edges) + 2, dtype=np.int64)
        jackpots_at = np.zeros((rows, JACKPOT_COLUMNS), dtype=np.int64)
        kernel.run_chunk(tables, np.array(state, dtype=np.uint64), spins, sums, win_hist,
                         hold_hist, edges, jackpots_at)
        found = int(sums[kernel.JACKPOT_ROUNDS])
        if found <= rows:
            return ChunkOutcome(index, sums, win_hist, hold_hist, jackpots_at[:found].copy())
        rows = found  # replay the same stream with room for every €€€ round


def play_batch(tables: kernel.KernelArgs, batch: Batch) -> list[ChunkOutcome]:
    """Play a batch's chunks, each from its own spawned stream."""
    return [play_chunk(tables, batch.first + i, chunk_state(batch.seed, batch.first + i), size)
            for i, size in enumerate(batch.sizes)]


def _init_worker(tables: kernel.KernelArgs) -> None:
    global _WORKER_TABLES
    _WORKER_TABLES = tables
    _warm_up(tables)


def _worker_batch(batch: Batch) -> list[ChunkOutcome]:
    assert _WORKER_TABLES is not None, "worker not initialised"
    return play_batch(_WORKER_TABLES, batch)


def cluster_batch(tables: kernel.KernelArgs, batch: Batch) -> list[ChunkOutcome]:
    """A Dask task: play one batch on whichever worker the scheduler picks."""
    return play_batch(tables, batch)


def _warm_up(tables: kernel.KernelArgs) -> None:
    """Compile (or load from numba's cache) before the clock and the pool start."""
    play_chunk(tables, 0, np.ones(4, dtype=np.uint64), 0)


def _check(spins: object, seed: object, workers: object) -> None:
    if type(spins) is not int or spins < 1:
        raise ValueError(f"spins must be a positive integer, got {spins!r}")
    if type(seed) is not int or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if workers is not None and (type(workers) is not int or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")


def batches(spins: int, seed: int, parallel: int) -> list[Batch]:
    """The run's chunks (all of :data:`CHUNK_SPINS`, the last one shorter), cut into batches of
    at most :data:`BATCH_CHUNKS`, at least about 4 per worker. Batches only group chunks: the
    chunks, and so the result, do not depend on them."""
    sizes = [CHUNK_SPINS] * (spins // CHUNK_SPINS)
    if spins % CHUNK_SPINS:
        sizes.append(spins % CHUNK_SPINS)
    per_batch = max(1, min(BATCH_CHUNKS, len(sizes) // (4 * parallel)))
    return [Batch(seed, first, tuple(sizes[first:first + per_batch]))
            for first in range(0, len(sizes), per_batch)]


class _Bar(tqdm):
    """tqdm without its monitor thread: a thread would make the next run spawn its workers."""

    monitor_interval = 0


def simulate(model: MathModel, spins: int, seed: int, workers: int | None = None,
             progress: bool = False, *, cluster: str | Any | None = None,
             meanwhile: Callable[[], object] | None = None) -> SimulationResult:
    """Play ``spins`` rounds of ``model`` from ``seed`` on ``workers`` processes (default: all
    cores, or this process alone for a short run; 1 plays in this process; never more processes
    than chunks) and return the merged result.

    ``cluster``: the address of a running Dask scheduler (``tcp://host:8786``) or a
    ``distributed.Client``; the chunks then play on its workers and ``workers`` is ignored.
    ``meanwhile`` is called in this process once the work is handed out, while the workers
    play (in-process runs call it first, before the clock starts: ``elapsed_seconds`` and
    ``spins_per_second`` time the playing, not the caller's other work).

    The result depends only on (model, seed, spins): not on ``workers`` nor on the cluster.
    ``progress`` shows a tqdm bar on stderr. Raises ``ValueError`` on bad arguments.
    """
    _check(spins, seed, workers)
    chunks = -(-spins // CHUNK_SPINS)
    if workers is None:
        workers = default_workers() if chunks > IN_PROCESS_CHUNKS else 1
    workers = min(workers, chunks)
    tables = kernel_tables(model).as_tuple()
    outcomes: list[ChunkOutcome] = []
    pool = None
    if cluster is None:
        _warm_up(tables)
        if workers > 1:
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(),
                                       initializer=_init_worker, initargs=(tables,))
    try:
        with _Bar(total=spins, unit="spin", unit_scale=True, disable=not progress,
                  desc="simulate", leave=False) as bar:
            def done(found: list[ChunkOutcome]) -> None:
                outcomes.extend(found)
                bar.update(sum(int(o.sums[kernel.SPINS]) for o in found))

            if pool is None and cluster is None and meanwhile is not None:
                meanwhile()  # in this process, before the clock: it is not the simulation
            started = time.perf_counter()
            if cluster is not None:
                workers = _run_on_cluster(cluster, tables, spins, seed, done, meanwhile)
            elif pool is None:
                for batch in batches(spins, seed, workers):
                    done(play_batch(tables, batch))
            else:
                submitted = [(pool.submit(_worker_batch, batch), batch)
                             for batch in batches(spins, seed, workers)]
                if meanwhile is not None:
                    meanwhile()
                pending = _play_while_workers_start(tables, submitted, done)
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        done(future.result())
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    elapsed = time.perf_counter() - started
    return _merge(model, seed, spins, workers, outcomes, elapsed, _cluster_name(cluster))


def _pool_context() -> multiprocessing.context.BaseContext:
    """``fork`` where the platform has it and this process runs no other thread: the workers
    then start at once with the kernel already loaded (spawned workers take about a second
    each to import and load it). Otherwise ``spawn``, as forking a threaded process is unsafe
    (so this module starts no thread of its own, not even tqdm's monitor)."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _cluster_name(cluster: str | Any | None) -> str | None:
    if cluster is None or isinstance(cluster, str):
        return cluster
    return str(cluster.scheduler.address)


def _play_while_workers_start(
        tables: kernel.KernelArgs, submitted: list[tuple[Future[list[ChunkOutcome]], Batch]],
        done: Callable[[list[ChunkOutcome]], None]) -> set[Future[list[ChunkOutcome]]]:
    """Spawned workers need a second or two to import and load the kernel (forked ones start
    at once, and this plays a batch at most while they take their first); meanwhile this
    process takes batches back from the end of the queue (those no worker has started) and
    plays them itself, until one of the first batches is done. Which process plays a chunk does
    not change the chunk. Returns the futures still to wait for."""
    pending = {future for future, _ in submitted}
    for future, batch in reversed(submitted):
        if any(f.done() for f, _ in submitted[:4]) or not future.cancel():
            break
        pending.discard(future)
        done(play_batch(tables, batch))
    return pending


def _run_on_cluster(cluster: str | Any, tables: kernel.KernelArgs, spins: int, seed: int,
                    done: Callable[[list[ChunkOutcome]], None],
                    meanwhile: Callable[[], object] | None) -> int:
    """Play every batch on a Dask cluster; returns how many workers it has."""
    from distributed import Client, as_completed

    client = cluster if isinstance(cluster, Client) else Client(cluster)
    try:
        n_workers = max(1, len(client.scheduler_info()["workers"]))
        [shared] = client.scatter([tables], broadcast=True)  # one object: the tuple
        futures = [client.submit(cluster_batch, shared, batch, pure=False)
                   for batch in batches(spins, seed, n_workers)]
        if meanwhile is not None:
            meanwhile()
        for future in as_completed(futures):
            done(future.result())
            future.release()
        return n_workers
    finally:
        if client is not cluster:
            client.close()


def _squares(sums: npt.NDArray[np.int64], at: int) -> int:
    return int(sums[at]) + int(sums[at + 1]) * _SQUARE_CARRY


def _merge(model: MathModel, seed: int, spins: int, workers: int,
           outcomes: list[ChunkOutcome], elapsed: float, cluster: str | None) -> SimulationResult:
    outcomes = sorted(outcomes, key=lambda o: o.index)

    def total(at: int) -> int:
        return sum(int(o.sums[at]) for o in outcomes)

    def squares(at: int) -> int:
        return sum(_squares(o.sums, at) for o in outcomes)

    moments = {
        name: Moments(total(at), squares(at + 1))
        for name, at in (("lines", kernel.LINES_SUM), ("star_wild", kernel.STAR_WILD_SUM),
                         ("hold_and_cash", kernel.HOLD_SUM), ("game", kernel.GAME_SUM))
    }
    counts = {name: total(at) for name, at in (
        ("hits", kernel.HITS), ("winning_rounds", kernel.WINNING_ROUNDS),
        ("star_wilds", kernel.STAR_WILDS), ("holds", kernel.HOLDS), ("megas", kernel.MEGAS),
        ("minors", kernel.MINORS), ("majors", kernel.MAJORS),
        ("hold_respins", kernel.HOLD_RESPINS), ("jackpot_spins", kernel.JACKPOT_SPINS),
        ("jackpot_lines", kernel.JACKPOT_LINES),
        ("respin_jackpot_lines", kernel.RESPIN_JACKPOT_LINES),
        ("jackpot_rounds", kernel.JACKPOT_ROUNDS))}
    if total(kernel.SPINS) != spins:
        raise AssertionError(f"chunks played {total(kernel.SPINS)} spins, not {spins}")
    return SimulationResult(
        model=model.name,
        seed=seed,
        spins=spins,
        workers=workers,
        chunk_spins=CHUNK_SPINS,
        contribution_rate=float(model.contribution_rate),
        moments=moments,
        counts=counts,
        max_win=max(int(o.sums[kernel.MAX_WIN]) for o in outcomes)
        / kernel.LINE_BETS_PER_TOTAL_BET,
        histogram_edges=HISTOGRAM_EDGES,
        win_histogram=tuple(int(x) for x in np.sum([o.win_hist for o in outcomes], axis=0)),
        hold_and_cash_histogram=tuple(
            int(x) for x in np.sum([o.hold_hist for o in outcomes], axis=0)),
        chunk_spin_counts=tuple(int(o.sums[kernel.SPINS]) for o in outcomes),
        chunk_game_wins=tuple(int(o.sums[kernel.GAME_SUM]) for o in outcomes),
        elapsed_seconds=elapsed,
        jackpot_rounds_at=tuple(
            (o.index * CHUNK_SPINS + int(spin), int(base), int(respin), int(game))
            for o in outcomes for spin, base, respin, game in o.jackpots_at),
        holds_by_coins=tuple(total(kernel.HOLDS_BY_COINS + n) for n in range(CELLS + 1)),
        lines_by_coins=tuple(total(kernel.LINES_BY_COINS + n) for n in range(CELLS + 1)),
        lines_x_star_wild=total(kernel.LINES_X_STAR_WILD),
        cluster=cluster,
    )
