"""``/metrics``: the server's figures in the Prometheus text format (``prometheus_client``).

Two kinds (ADR 0019):

- **process counters and histograms**, counted where things happen: rounds, bets and wins in
  minor units per currency and bet class (non-test rounds, after their batch committed; never
  a sum of two currencies, ADR 0078), the settle transaction's duration and batch size, HTTP
  requests, the operator wallet's call latency and failures, failed log-ins. ``starfever
  serve`` runs every worker in ``prometheus_client``'s multiprocess mode
  (``PROMETHEUS_MULTIPROC_DIR``, a fresh directory per start), so a scrape of any worker
  answers the sum over all workers of that server; several machines are several scrape
  targets, summed in PromQL.
- **database gauges**, read at scrape time, the same from every worker and machine: the €€€
  pool and its refills, operator mode's pending credits, and per model, currency and bet
  class the realised game RTP minus the theoretical one, with the 99 % interval's half width
  (for models whose exact figures are cached: the shipped ones, and any ``starfever rtp`` has
  seen; a scrape never spends the seconds of computing them). Their sums are kept per process
  and extended by the rounds stored since the last scrape (round ids only grow), so a scrape
  reads only new rows.

Operator mode adds the **wallet probe's gauges** (``starfever_wallet_up``, the last probe's
seconds; the most recent probe of any worker), and every server the **process and runtime
figures** (ADR 0057): ``process_*`` of each live process of the server (the ``starfever serve``
supervisor and its workers) read from ``/proc`` at scrape time, labelled ``pid`` (the scraping
worker reads its siblings': the pids that wrote to the multiprocess directory and still run),
``python_info``, and the garbage collector's collections per generation and the pauses of
generations 1 and 2 (a counter and a histogram every worker adds to).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    PLATFORM_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import Float, cast, func, select

from starfever.server.models import JackpotPool, Round, WalletCall
from starfever.server.services import unpaid
from starfever.server.services.rtp_meters import RtpRow, theoretical
from starfever.server.spin.calls import CallKind, CallState

if TYPE_CHECKING:
    from starfever.server.db import Database

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

ROUNDS = Counter("starfever_rounds", "Rounds settled (test rounds left out)",
                 ["currency", "line_bet"], registry=None)
BETS = Counter("starfever_bets_cents", "Total bets of settled rounds, in minor units of their "
               "currency", ["currency", "line_bet"], registry=None)
WINS = Counter("starfever_wins_cents", "Total wins (€€€ shares included) of settled rounds, "
               "in minor units of their currency", ["currency", "line_bet"], registry=None)
SETTLE_SECONDS = Histogram(
    "starfever_settle_seconds", "Duration of one settle transaction (a batch of spins)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5), registry=None)
BATCH_SIZE = Histogram("starfever_settle_batch_size", "Spins per settle transaction",
                       buckets=(1, 2, 4, 8, 16, 32, 64), registry=None)
HTTP_SECONDS = Histogram(
    "starfever_http_request_seconds", "HTTP request duration by route",
    ["method", "route"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
    registry=None)
HTTP_RESPONSES = Counter("starfever_http_responses", "HTTP responses by route and status",
                         ["method", "route", "status"], registry=None)
WALLET_SECONDS = Histogram(
    "starfever_wallet_call_seconds", "Operator mode: duration of a call of the operator's "
    "wallet", ["method"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=None)
WALLET_ERRORS = Counter("starfever_wallet_call_errors", "Operator mode: wallet calls that "
                        "failed (unavailable: no valid answer; refused: a 4xx)",
                        ["method", "reason"], registry=None)
LOGIN_FAILURES = Counter("starfever_login_failures", "Refused log-ins", ["role"],
                         registry=None)
DRAINING = Counter("starfever_drain_refusals", "Spins answered 503 while draining",
                   registry=None)

GC_SECONDS = Histogram("starfever_gc_pause_seconds", "Pauses of the garbage collector's "
                       "collections of generation 1 and 2", ["generation"],
                       buckets=(0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
                       registry=None)
GC_COLLECTIONS = Counter("starfever_gc_collections", "Collections of the garbage collector, "
                         "per generation", ["generation"], registry=None)

PROCESS_METRICS: tuple[Any, ...] = (ROUNDS, BETS, WINS, SETTLE_SECONDS, BATCH_SIZE,
                                    HTTP_SECONDS, HTTP_RESPONSES, WALLET_SECONDS, WALLET_ERRORS,
                                    LOGIN_FAILURES, DRAINING, GC_SECONDS,
                                    GC_COLLECTIONS)
_wallet_gauges: list[Gauge] = []
"""``starfever_wallet_up`` and ``starfever_wallet_probe_seconds``, made by the first probe
(operator mode only: a ledger server exports neither, so no alert fires on it)."""
DATABASE_METRICS = ("starfever_pool_cents", "starfever_pool_refills_cents",
                    "starfever_pool_hits", "starfever_pending_credits",
                    "starfever_unpaid_wins", "starfever_unpaid_wins_cents",
                    "starfever_rtp_realised_minus_theoretical",
                    "starfever_rtp_interval_99_half_width", "starfever_rounds_stored")
"""The names the database collector exports."""
WALLET_METRICS = ("starfever_wallet_up", "starfever_wallet_probe_seconds")
"""The wallet probe's gauges (operator mode only)."""


def observe_batch(rounds: Sequence[Mapping[str, Any]], seconds: float, size: int) -> None:
    """A committed settle transaction: its duration and size, and its rounds' money."""
    SETTLE_SECONDS.observe(seconds)
    BATCH_SIZE.observe(size)
    # per currency and line bet: rounds, bets, wins (one update each); a line bet is a
    # number of minor units of its round's currency, so two currencies never share a series
    sums: dict[tuple[str, int], list[int]] = {}
    for r in rounds:
        if r.get("test"):
            continue
        found = sums.setdefault((r.get("currency") or "EUR", r["line_bet"]), [0, 0, 0])
        found[0] += 1
        found[1] += r["total_bet"]
        found[2] += r["total_win"]
    for (currency, line_bet), (count, bets, wins) in sums.items():
        label = str(line_bet)
        ROUNDS.labels(currency, label).inc(count)
        BETS.labels(currency, label).inc(bets)
        WINS.labels(currency, label).inc(wins)


def observe_wallet_call(method: str, seconds: float, failure: str | None) -> None:
    """One call of the operator's wallet (``failure``: ``unavailable``, ``refused`` or None)."""
    WALLET_SECONDS.labels(method).observe(seconds)
    if failure is not None:
        WALLET_ERRORS.labels(method, failure).inc()


def observe_wallet_probe(answered: bool, seconds: float) -> None:
    """One probe of the operator's wallet (``services.wallet_probe``): up or down, and how
    long it took (the most recent probe of any worker is exported)."""
    if not _wallet_gauges:
        _wallet_gauges.append(Gauge(
            WALLET_METRICS[0], "Operator mode: 1 if the last probe of the operator's "
            "wallet got a signed answer in time, else 0", multiprocess_mode="mostrecent",
            registry=None))
        _wallet_gauges.append(Gauge(
            WALLET_METRICS[1], "Operator mode: duration of the last probe of "
            "the operator's wallet", multiprocess_mode="mostrecent", registry=None))
    up, duration = _wallet_gauges
    up.set(1 if answered else 0)
    duration.set(seconds)


_gc_started: list[float] = [0.0]
_gc_pauses: deque[tuple[int, float]] = deque(maxlen=100_000)
_gc_counted: list[int] = [0, 0, 0]
GC_FLUSH_SECONDS = 5.0


def _on_gc(phase: str, info: dict[str, int]) -> None:
    """Times the collections of generations 1 and 2 (a young one takes microseconds and comes
    thousands of times a second under load: it returns at once). Only a timestamp and an
    append: observing the histogram takes the multiprocess values' lock, which the interrupted
    code of this thread may hold (a deadlock)."""
    if not info["generation"]:
        return
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        _gc_pauses.append((info["generation"], time.perf_counter() - _gc_started[0]))


def flush_gc() -> None:
    """Move the timed pauses into the histogram and the collections made since the last
    flush (``gc.get_stats``, every generation) into the counter, outside any collection."""
    import gc

    while _gc_pauses:
        generation, seconds = _gc_pauses.popleft()
        GC_SECONDS.labels(str(generation)).observe(seconds)
    for generation, stats in enumerate(gc.get_stats()[:3]):
        made = stats["collections"] - _gc_counted[generation]
        if made > 0:
            GC_COLLECTIONS.labels(str(generation)).inc(made)
            _gc_counted[generation] = stats["collections"]


def watch_gc() -> None:
    """Count this process's collections and time the old generations' (``gc.callbacks``),
    flushed every :data:`GC_FLUSH_SECONDS` by a daemon thread (once per process)."""
    import gc

    if _on_gc in gc.callbacks:
        return
    _gc_counted[:] = [stats["collections"] for stats in gc.get_stats()[:3]]
    gc.callbacks.append(_on_gc)

    def flush_forever() -> None:
        while True:
            time.sleep(GC_FLUSH_SECONDS)
            flush_gc()

    threading.Thread(target=flush_forever, daemon=True, name="starfever-gc-metrics").start()


class WorkerProcesses(Collector):
    """``process_*`` of every live process of this server, labelled ``pid`` (Linux ``/proc``;
    nothing elsewhere). In multiprocess mode they are the pids of the directory's files that
    still run (the supervisor and its workers); else this process."""

    def collect(self) -> Iterable[Metric]:
        pids = _worker_pids()
        merged: dict[str, Metric] = {}
        for pid in pids:
            collector = ProcessCollector(registry=None, pid=functools.partial(int, pid))
            for family in collector.collect():
                into = merged.get(family.name)
                if into is None:
                    into = merged[family.name] = Metric(family.name, family.documentation,
                                                        family.type)
                for sample in family.samples:
                    into.add_sample(sample.name, {**sample.labels, "pid": str(pid)},
                                    sample.value)
        yield from merged.values()


def _worker_pids() -> list[int]:
    directory = multiprocess_dir()
    if directory is None:
        return [os.getpid()]
    import glob

    found = set()
    for path in glob.glob(os.path.join(directory, "*.db")):
        tail = os.path.basename(path)[:-3].rsplit("_", 1)[-1]
        if tail.isdigit() and os.path.exists(f"/proc/{tail}"):
            found.add(int(tail))
    found.add(os.getpid())
    return sorted(found)


class _RtpSums:
    """Per-process running sums of the non-test rounds, per model, version, currency and bet
    class (a bet class is minor units of its currency: two currencies are never one row)."""

    def __init__(self) -> None:
        self.last_id = 0
        self.rows: dict[tuple[str, str, str, int], RtpRow] = {}
        self.lock = threading.Lock()

    def update(self, db: Database) -> list[tuple[str, RtpRow]]:
        """Every row so far, each with its currency."""
        game = Round.total_win - Round.progressive_win
        with self.lock:
            with db.read() as session:
                top = session.scalar(select(func.max(Round.id))) or 0
                if top > self.last_id:
                    query = (select(Round.model_name, Round.model_version, Round.currency,
                                    Round.line_bet, func.count(), func.sum(Round.total_bet),
                                    func.sum(Round.total_win), func.sum(Round.progressive_win),
                                    func.sum(cast(game, Float) * cast(game, Float)),
                                    func.sum(cast(game, Float) * cast(Round.total_bet, Float)),
                                    func.sum(cast(Round.total_bet, Float)
                                             * cast(Round.total_bet, Float)))
                             .where(Round.id > self.last_id, Round.id <= top,
                                    Round.test.is_(False))
                             .group_by(Round.model_name, Round.model_version, Round.currency,
                                       Round.line_bet))
                    for name, version, code, bet, n, tb, tw, pw, gsq, gb, bsq in \
                            session.execute(query):
                        key = (name, version, code or "EUR", int(bet))
                        row = self.rows.setdefault(key, RtpRow(name, version, int(bet)))
                        row.add(RtpRow(name, version, int(bet), int(n), int(tb), int(tw),
                                       int(pw), float(gsq), float(gb), float(bsq)))
                    self.last_id = top
            return [(k[2], self.rows[k]) for k in sorted(self.rows)]


_sums: dict[int, _RtpSums] = {}


@lru_cache(maxsize=16)
def _known_figures(name: str, version: str) -> bool:
    """Whether the model's exact figures are cached or shipped: a scrape never computes them
    (a new model takes seconds of CPU; ``starfever rtp --model`` caches them)."""
    from starfever.engine.model import load_model_version
    from starfever.math.figures import cached

    model = load_model_version(name, version)
    return model is not None and cached(model) is not None


class DatabaseCollector(Collector):
    """The gauges read from the database at scrape time."""

    def __init__(self, db: Database, *, operator_mode: bool) -> None:
        self.db = db
        self.operator_mode = operator_mode

    def collect(self) -> Iterable[GaugeMetricFamily]:
        # one pool per currency (ADR 0076): each series labelled with its currency
        pool = GaugeMetricFamily("starfever_pool_cents", "The €€€ pool now, in minor units of "
                                 "its currency", labels=["currency"])
        refills = GaugeMetricFamily("starfever_pool_refills_cents",
                                    "Operator funding of the €€€ pool so far (seed included), "
                                    "in minor units of its currency", labels=["currency"])
        hits = GaugeMetricFamily("starfever_pool_hits", "€€€ jackpot wins so far",
                                 labels=["currency"])
        pending = GaugeMetricFamily("starfever_pending_credits", "Operator mode: credits "
                                    "not yet acknowledged by the operator's wallet")
        unpaid_wins = GaugeMetricFamily("starfever_unpaid_wins", "Operator mode: wins whose "
                                        "credit the operator's wallet refused (never paid)")
        unpaid_cents = GaugeMetricFamily("starfever_unpaid_wins_cents", "Operator mode: the "
                                         "minor units of the wins the operator's wallet "
                                         "refused, per currency", labels=["currency"])
        with self.db.read() as session:
            rows = list(session.scalars(select(JackpotPool).order_by(JackpotPool.currency)))
            pending_count = session.scalar(select(func.count()).select_from(WalletCall).where(
                WalletCall.kind == CallKind.CREDIT, WalletCall.status == CallState.PENDING)) \
                if self.operator_mode else 0
            refused = unpaid.totals_by_currency(session) if self.operator_mode else {}
        for row in rows:
            pool.add_metric([row.currency], row.amount)
            refills.add_metric([row.currency], row.refills)
            hits.add_metric([row.currency], row.hits)
        pending.add_metric([], int(pending_count or 0))
        unpaid_wins.add_metric([], sum(n for n, _ in refused.values()))
        # minor units per currency (ADR 0078): every pool's currency, and any other refused in
        for code in sorted({row.currency for row in rows} | set(refused)):
            unpaid_cents.add_metric([code], refused.get(code, (0, 0))[1])
        yield from (pool, refills, hits, pending, unpaid_wins, unpaid_cents)
        labels = ["model", "version", "currency", "line_bet"]
        drift = GaugeMetricFamily("starfever_rtp_realised_minus_theoretical",
                                  "Realised game RTP (€€€ shares left out) minus the exact "
                                  "theoretical one, over every non-test round of the currency "
                                  "and bet class", labels=labels)
        half = GaugeMetricFamily("starfever_rtp_interval_99_half_width",
                                 "Half width of the realised game RTP's 99 % interval",
                                 labels=labels)
        stored = GaugeMetricFamily("starfever_rounds_stored", "Non-test rounds in the database",
                                   labels=labels)
        sums = _sums.setdefault(id(self.db), _RtpSums())
        for code, r in sums.update(self.db):
            key = [r.model_name, r.model_version, code, str(r.line_bet)]
            stored.add_metric(key, r.rounds)
            if not _known_figures(r.model_name, r.model_version):
                continue
            theory = theoretical(r.model_name, r.model_version)
            if theory is None or r.actual_game_rtp is None:
                continue
            drift.add_metric(key, r.actual_game_rtp - float(theory.game))
            width = r.half_width_99
            if width is not None:
                half.add_metric(key, width)
        yield from (drift, half, stored)


def multiprocess_dir() -> str | None:
    """The multiprocess directory of this process (``None``: single-process counters)."""
    return os.environ.get(MULTIPROCESS_ENV) or None


def scrape(db: Database, *, operator_mode: bool) -> bytes:
    """The whole exposition: every worker's counters and the database gauges."""
    flush_gc()
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_dir():
        MultiProcessCollector(registry)
    else:
        for metric in (*PROCESS_METRICS, *_wallet_gauges):
            registry.register(metric)
    registry.register(WorkerProcesses())
    registry.register(PLATFORM_COLLECTOR)
    registry.register(DatabaseCollector(db, operator_mode=operator_mode))
    return generate_latest(registry)


class Timer:
    """``with Timer() as t: ...``; then ``t.seconds``."""

    seconds = 0.0

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.perf_counter() - self._start


def names(exposition: str) -> Iterator[str]:
    """The metric family names of an exposition (for tests and the alert-rule check)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(exposition):
        yield family.name


__all__ = ["CONTENT_TYPE", "DATABASE_METRICS", "MULTIPROCESS_ENV", "WALLET_METRICS",
           "DatabaseCollector",
           "observe_batch", "observe_wallet_call", "observe_wallet_probe", "scrape",
           "watch_gc"]
