"""One resender per installation (issue 35 item 4, ADR 0062): two workers' resenders on one
database never send the same call, the lease passes on when its holder stops or dies, and a
call's backoff is capped so that rounds in doubt close within seconds of the wallet's
recovery. In process, on SQLite and on PostgreSQL, against the reference wallet behind a
counting proxy (every call that reaches the wallet, repeats included)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select

from starfever.server import clock
from starfever.server.db import Database, open_migrated
from starfever.server.models import Account, Lease, WalletCall
from starfever.server.seamless_config import OperatorConfig
from starfever.server.services.errors import utcnow
from starfever.server.services.lease import Lease as LeaseHandle
from starfever.server.spin.calls import CallKind, call_row
from starfever.server.spin.resender import RESENDER_LEASE, Resender, resend_now
from starfever.server.spin.seamless_wallet import MAX_BACKOFF_S, SeamlessWallet
from tests.harness import DatabaseKind, Databases, OperatorWallet
from tests.seamless.mitm import ManInTheMiddle, mitm
from tests.seamless.operator_mode import wait_for

TIMEOUT_S = 1.0
RETRY_S = 0.05


@pytest.fixture
def db(kind: DatabaseKind, databases: Databases) -> Iterator[Database]:
    url = databases.new(kind)
    database = open_migrated(url)
    yield database
    database.dispose()
    databases.drop(url)


@pytest.fixture
def proxy(wallet: OperatorWallet) -> Iterator[ManInTheMiddle]:
    with mitm(wallet.url) as counting:
        yield counting


def _player(db: Database, wallet: OperatorWallet) -> int:
    player_id = f"op-player-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 1_000)
    with db.write() as session:
        account = Account(username=f"op-{uuid.uuid4().hex[:12]}", password_hash="-",
                          role="player", created_at=utcnow(), external_id=player_id,
                          net_result=0)
        session.add(account)
        session.flush()
        return account.id


def _rollbacks_due(db: Database, account_id: int, count: int) -> list[str]:
    """``count`` rollbacks, each tried once before and due now (an outage's backlog)."""
    ids = [f"sfb-{uuid.uuid4().hex}" for _ in range(count)]
    now = utcnow()
    with db.write() as session:
        for transaction_id in ids:
            row = call_row(CallKind.ROLLBACK, transaction_id, account_id=account_id,
                           session_id=None, round_ref=f"sfr-{uuid.uuid4().hex}", now=now,
                           amount=20, debit_id=f"sfd-{uuid.uuid4().hex}")
            session.add(WalletCall(**{**row, "attempts": 1}))
    return ids


def _statuses(db: Database, ids: list[str]) -> set[str]:
    with db.read() as session:
        return set(session.scalars(select(WalletCall.status)
                                   .where(WalletCall.transaction_id.in_(ids))))


def _worker(db: Database, wallet: OperatorWallet, url: str,
            timeout: float = TIMEOUT_S) -> SeamlessWallet:
    """One worker's operator-mode wallet on a database connection pool of its own."""
    return SeamlessWallet(Database(db.url), OperatorConfig(url=url, secret=wallet.secret,
                                                           timeout=timeout, retry=RETRY_S),
                          details_key=b"k" * 32)


def _sent(proxy: ManInTheMiddle, ids: list[str]) -> Counter[str]:
    return Counter(body["transaction_id"] for _, body in proxy.requests
                   if body.get("transaction_id") in ids)


def _holder(db: Database) -> str | None:
    with db.read() as session:
        found: str | None = session.scalar(select(Lease.holder)
                                           .where(Lease.name == RESENDER_LEASE))
        return found


def test_two_workers_resenders_send_each_call_once_and_hand_over_when_one_stops(
        db: Database, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    """Two workers' resenders on one database and a backlog of 30 due rollbacks, each call
    held 30 ms by the wallet (so two passes would overlap): every rollback reaches the wallet
    once. The holder then stops: the other takes the lease over and sends the next backlog,
    again once each."""
    account = _player(db, wallet)
    wallet.fault("rollback", "delay", times=40, seconds=0.03)
    first = _rollbacks_due(db, account, 30)
    workers = [_worker(db, wallet, proxy.url) for _ in range(2)]
    resenders = [Resender(worker).start() for worker in workers]
    try:
        wait_for(lambda: _statuses(db, first) == {"acknowledged"})
        assert _sent(proxy, first) == Counter({i: 1 for i in first})
        holder = _holder(db)
        stopping = next(r for r in resenders if r.lease.holder == holder)
        staying = next(r for r in resenders if r is not stopping)
        stopping.stop()
        second = _rollbacks_due(db, account, 10)
        wait_for(lambda: _statuses(db, second) == {"acknowledged"})
        assert _holder(db) == staying.lease.holder
        assert _sent(proxy, second) == Counter({i: 1 for i in second})
    finally:
        wallet.clear_faults()
        for resender in resenders:
            resender.stop()
        for worker in workers:
            worker.client.close()
            worker.db.dispose()


def test_a_lease_whose_holder_died_passes_on_once_it_expires(db: Database) -> None:
    """A holder that died never released its lease: another process takes it only once it
    expired (on the server's clock, moved here), and a released one at once."""
    alive, dead = (LeaseHandle(db, RESENDER_LEASE, ttl=10) for _ in range(2))
    assert dead.hold() and dead.hold()
    assert not alive.hold()
    try:
        clock.advance(9)
        assert not alive.hold()
        clock.advance(2)
        assert alive.hold()
        assert _holder(db) == alive.holder
        alive.release()
        assert dead.hold()  # released: taken at once, no waiting for the expiry
    finally:
        clock.reset()


def test_a_calls_backoff_is_capped_and_a_pass_ends_at_the_first_failure(
        db: Database, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    """After many failed attempts a call is tried again within ``MAX_BACKOFF_S`` (it waited
    up to a minute, and a round stayed in doubt that long after the wallet came back); while
    the wallet fails, a pass of the resender sends one call, not its whole backlog."""
    account = _player(db, wallet)
    worker = _worker(db, wallet, proxy.url)
    try:
        ids = _rollbacks_due(db, account, 5)
        wallet.fault("rollback", "error", times=5)
        assert resend_now(worker) == 0
        assert sum(_sent(proxy, ids).values()) == 1
        with db.write() as session:
            session.execute(WalletCall.__table__.update()  # type: ignore[attr-defined]
                            .where(WalletCall.transaction_id.in_(ids)).values(attempts=12))
            rows = list(session.scalars(select(WalletCall)
                                        .where(WalletCall.transaction_id.in_(ids))))
        before = utcnow()
        worker.postpone(rows[0])
        with db.read() as session:
            due = session.scalar(select(WalletCall.next_attempt_at)
                                 .where(WalletCall.transaction_id == ids[0]))
        assert due is not None
        assert due - before <= timedelta(seconds=MAX_BACKOFF_S + 0.5)
    finally:
        wallet.clear_faults()
        worker.client.close()
        worker.db.dispose()


def test_a_probe_held_by_a_hanging_wallet_does_not_hold_up_the_recovery(
        db: Database, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    """The wallet answers the first resend with a 500 (it is down), then holds the next one
    for a minute (applied, the answer lost), then recovers; the timeout is 30 s. The next
    ticks' probes go out while the held one is under way, the first answered one starts the
    drain, which sends the held call again (answered with its first answer): the backlog is
    closed long before the held call's timeout (ADR 0080; it waited for it, then a retry
    interval)."""
    account = _player(db, wallet)
    ids = _rollbacks_due(db, account, 6)
    wallet.fault("rollback", "error")
    wallet.fault("rollback", "delay", seconds=60)
    worker = _worker(db, wallet, proxy.url, timeout=30.0)
    resender = Resender(worker).start()
    try:
        wait_for(lambda: _statuses(db, ids) == {"acknowledged"}, seconds=15)
        held = proxy.requests[1][1]["transaction_id"]
        assert _sent(proxy, [held])[held] == 2  # held by the wallet, sent again meanwhile
        assert held in resender._probes.under_way  # its first send is still held
    finally:
        wallet.clear_faults()
        resender.stop()
        worker.client.close()
        worker.db.dispose()


def test_after_a_recovery_calls_postponed_or_recorded_before_it_are_due_at_once(
        db: Database, wallet: OperatorWallet) -> None:
    """Once the wallet answers after it gave none, the calls it failed are sent whatever
    their backoff, and those recorded before the recovery at once (their requests' own sends
    may be held by the wallet until their timeout); one postponed after the recovery keeps
    its backoff, and without a recovery a never-tried call is left to its request for one
    timeout (on the server's clock, moved here)."""
    account = _player(db, wallet)
    worker = _worker(db, wallet, wallet.url)
    try:
        start = utcnow()
        postponed, fresh, late = (f"sfb-{uuid.uuid4().hex}" for _ in range(3))
        with db.write() as session:
            for transaction_id, attempts in ((postponed, 1), (fresh, 0)):
                row = call_row(CallKind.ROLLBACK, transaction_id, account_id=account,
                               session_id=None, round_ref=f"sfr-{uuid.uuid4().hex}",
                               now=start, amount=20, debit_id=f"sfd-{uuid.uuid4().hex}")
                session.add(WalletCall(**{**row, "attempts": attempts,
                                          "next_attempt_at": start + timedelta(seconds=2)
                                          if attempts else start}))
        clock.advance(0.5)
        recovered = utcnow()
        clock.advance(0.1)
        with db.write() as session:
            row = call_row(CallKind.ROLLBACK, late, account_id=account, session_id=None,
                           round_ref=f"sfr-{uuid.uuid4().hex}", now=utcnow(), amount=20,
                           debit_id=f"sfd-{uuid.uuid4().hex}")
            session.add(WalletCall(**{**row, "attempts": 1,
                                      "next_attempt_at": utcnow() + timedelta(seconds=2)}))

        def due(**recovery: object) -> set[str]:
            return {row.transaction_id for row, _ in worker.due(10, **recovery)} \
                & {postponed, fresh, late}

        assert due() == set()
        assert due(recovered=recovered) == {postponed, fresh}
        clock.advance(TIMEOUT_S)
        assert due() == {fresh}
        clock.advance(2)
        assert due() == {postponed, fresh, late}
    finally:
        clock.reset()
        worker.client.close()
        worker.db.dispose()
