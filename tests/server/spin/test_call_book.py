"""Operator mode's books of wallet calls on real databases: the group commit
(``services.call_book.CallBook``) outlives a request that gave up waiting, and the
retrier's stale-debit search reads its index."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from starfever.seamless.client import WalletReply
from starfever.server.db import Database, migrate
from starfever.server.services.auth import Principal
from starfever.server.services.errors import Unauthorized, utcnow
from starfever.server.settings import Settings
from starfever.server.spin import call_book
from starfever.server.spin.call_book import CallBook, DebitIds
from starfever.server.spin.rule import Job
from starfever.server.spin.seamless_wallet import refusal, stale_debits
from tests.harness import DATABASE_KINDS, DatabaseKind, Databases
from tests.server.helpers import model


def test_a_request_that_gave_up_waiting_does_not_stop_the_books(tmp_path: Path) -> None:
    """A spin's request cancelled while its acknowledgement is being written (asyncio cancels
    the future it awaits) must not end the thread that writes every later one."""
    db = Database(f"sqlite:///{tmp_path / 'books.db'}")
    migrate(db)
    book = CallBook(db, refusal)
    try:
        with db.write():  # the books thread waits for its turn to write ...
            first = book.acknowledge("sfc-first", WalletReply(balance=100))
            time.sleep(0.2)
            assert first.cancel()  # ... while the request gives up
        second = book.acknowledge("sfc-second", WalletReply(balance=100))
        assert second.result(timeout=10) is True
    finally:
        book.close()
        db.dispose()


@pytest.mark.parametrize("kind", DATABASE_KINDS)
def test_the_stale_debit_search_reads_the_index_of_unplayed_debits(
        tmp_path: Path, kind: DatabaseKind) -> None:
    """The retrier's search (every few seconds in every worker) can be answered from the
    partial index of migration 0015, whatever the number of refused and rolled-back debits:
    its condition is the index's own (PostgreSQL is told to avoid a table scan where it can,
    so a plan without the index means the index does not match the query; SQLite is told to
    use the index, and refuses if it does not match)."""
    with Databases(tmp_path) as made:
        if kind == "postgresql" and not made.postgres_available:
            pytest.skip(f"no PostgreSQL answers at {made.shown_admin_url}")
        db = Database(made.new(kind))
        try:
            migrate(db)
            query = stale_debits(utcnow())
            with db.write_engine.connect() as conn:
                if kind == "postgresql":
                    conn.execute(text("SET enable_seqscan = off"))
                    compiled = query.compile(conn, compile_kwargs={"literal_binds": True})
                    plan = " ".join(str(row[0]) for row in conn.execute(
                        text(f"EXPLAIN {compiled}")))
                else:  # SQLite refuses INDEXED BY an index that cannot answer the query
                    compiled = str(query.compile(conn, compile_kwargs={"literal_binds": True}))
                    forced = compiled.replace(
                        "FROM wallet_calls", "FROM wallet_calls INDEXED BY "
                        "ix_wallet_calls_unplayed_debits", 1)
                    plan = " ".join(str(row[-1]) for row in conn.execute(
                        text(f"EXPLAIN QUERY PLAN {forced}")))
            assert "ix_wallet_calls_unplayed_debits" in plan, plan
        finally:
            db.dispose()


class _Counted(CallBook):
    """The books, with the size of each transaction they write."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, refusal)
        self.transactions: list[int] = []

    def _write(self, batch: Sequence[Any]) -> list[Any]:
        self.transactions.append(len(batch))
        return super()._write(batch)


def test_acknowledgements_wait_for_the_next_debit_to_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A credit's acknowledgement, which no answer waits for, is written with the next debit
    to record (which must be written before it is sent) or once ``ACK_LINGER_S`` has passed,
    not in a transaction of its own."""
    monkeypatch.setattr(call_book, "ACK_LINGER_S", 1.0)
    db = Database(f"sqlite:///{tmp_path / 'books.db'}")
    migrate(db)
    book = _Counted(db)
    try:
        first = book.acknowledge("sfc-first", WalletReply(balance=100))
        time.sleep(0.3)
        second = book.acknowledge("sfc-second", WalletReply(balance=100))
        time.sleep(0.2)
        assert not first.done() and not second.done()
        stranger = Principal(account_id=1, username="nobody", role="player", session_id=1)
        job = Job(settings=Settings(database_url=db.url), model=model(), principal=stranger,
                  bet=1, key="k", fingerprint="f", drawn=None, test=False)
        debit = book.prepare(job, DebitIds(debit="sfd-1", round_ref="r-1"))
        assert isinstance(debit.exception(timeout=10), Unauthorized)  # (no such session)
        assert first.result(timeout=10) is True and second.result(timeout=10) is True
        assert book.transactions == [3]
        started = time.monotonic()
        assert book.acknowledge("sfc-third", WalletReply(balance=100)).result(timeout=10)
        assert time.monotonic() - started >= 0.9  # alone, it waited out the linger
        assert book.transactions == [3, 1]
    finally:
        book.close()
        db.dispose()
