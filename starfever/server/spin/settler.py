"""Group commit of spins (ADR 0009; the engine is ``group_commit``'s): inside one server
process, every spin is handed to one settler thread, which settles the spins waiting at that
moment (up to :data:`MAX_BATCH`) in ONE transaction, in the order they arrived, then answers
each of them. The settlers of a host's
processes take turns (``Database.settle_turn``, ADR 0028): a settler takes its queue only once
the turn is its own, so the spins that arrive while another process settles join its batch
instead of waiting at the pool's row lock for a batch of their own.

The transaction locks the players' wallets (sorted by account id, so two processes' batches
never deadlock), then the €€€ pool, then the chain head — the order of ADR 0005 — once per batch
instead of once per round, and reads them into :class:`rule.Books`. The rule itself is
the pure :func:`rule.settle` (ADR 0012): it returns the rows to write and an answer per
spin, and this module writes them. It is the only path a spin is settled on. If the batch
transaction itself fails, every spin of it is settled again alone (a batch of one), so an
unexpected error reaches only the request that caused it.

Nothing is answered before the commit: a crash loses the whole batch, and none of its rounds
was ever shown to anyone.

The batch's SQL is ``sql``'s. It runs as few statements as it can, in a
``transaction.Batch`` (ADR 0027): the reads (wallets with their accounts, locked; rounds
already stored under the batch's keys; the sessions; the pool row and the chain head locked
together), then one write per table, all of a table's rows in one statement (``statements``,
ADR 0026), and the commit. On PostgreSQL that is two round trips: the reads in one message,
the writes and ``COMMIT`` in the next, each statement prepared once per connection. A
connection found dead (the database restarted) costs the batch one more try.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future

from starfever.server import metrics
from starfever.server.db import Database
from starfever.server.services.errors import ServiceError, utcnow
from starfever.server.spin import rule, sql
from starfever.server.spin.group_commit import GroupCommit
from starfever.server.spin.rule import Job, SpinOutcome
from starfever.server.spin.transaction import begin

MAX_BATCH = 64
"""The most spins one transaction settles."""
IDLE_EXIT_S = 5.0
"""The settler thread ends after this long without work (the next spin starts a new one)."""


class Settler:
    """The one writer of spins of a :class:`Database` in this process: a group commit
    (``group_commit``) whose batches are settled by :func:`settle_batch`."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.commits: GroupCommit[Job, SpinOutcome] = GroupCommit(
            self._settle, name="starfever-settler", max_batch=MAX_BATCH, fits=_same_rule,
            turn=lambda: db.settle_turn.held(), idle_exit_s=IDLE_EXIT_S)

    def enqueue(self, job: Job) -> Future[SpinOutcome]:
        """Queue ``job``; its future resolves once its batch is committed (or it was refused).
        For an event loop, which must not block: ``await asyncio.wrap_future(...)``."""
        return self.commits.submit(job)

    def _settle(self, batch: list[Job]) -> list[SpinOutcome | ServiceError]:
        return settle_batch(self.db, batch)


def _same_rule(first: Job, job: Job) -> bool:
    """Whether ``job`` settles in one batch with ``first``: under the same model and
    settings, in the same currency, whose pool the batch locks (the others wait for a batch
    of their own)."""
    return (job.model is first.model and job.settings is first.settings
            and job.currency == first.currency)


_settlers: dict[int, Settler] = {}
_settlers_lock = threading.Lock()


def settler(db: Database) -> Settler:
    """The settler of ``db`` in this process (made on first use)."""
    found = _settlers.get(id(db))
    if found is not None and found.db is db:
        return found
    with _settlers_lock:
        found = _settlers.get(id(db))
        if found is None or found.db is not db:
            found = _settlers[id(db)] = Settler(db)
        return found


def settle_batch(db: Database, jobs: Sequence[Job]) -> list[SpinOutcome | ServiceError]:
    """Settle ``jobs`` in order in one transaction; a refused job gets its error instead:
    read the books, :func:`rule.settle` them, write what it returns. The jobs are of one
    currency (the settler's batches are: ``_same_rule``), whose pool the batch locks."""
    if len({job.currency for job in jobs}) > 1:
        raise ValueError("a batch settles the rounds of one currency (its pool's)")
    started = time.perf_counter()
    for first_try in (True, False):
        with begin(db) as txn:
            now = utcnow()
            books = sql.read_books(txn, not db.is_sqlite, jobs)
            if books is not None:
                done = rule.settle(books, list(jobs), now)
                if done.writes:
                    sql.write(txn, done, now, jobs[0].currency)
                break
        if not first_try:
            raise RuntimeError("the pool row or the chain head is still missing")
        sql.create_pool_and_head(db, jobs[0].model, jobs[0].currency)
    metrics.observe_batch(done.rounds, time.perf_counter() - started, len(jobs))
    return done.results


__all__ = ["MAX_BATCH", "Job", "Settler", "SpinOutcome", "settle_batch", "settler"]
