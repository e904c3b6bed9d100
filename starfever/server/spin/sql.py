"""The SQL of a settler's batch (ADR 0009, 0026, 0027): the reads that lock the books in the
order of ADR 0005 (the players' wallets sorted by account, then the €€€ pool and the chain head
in one statement) and read them into :class:`rule.Books`, and the writes of a
:class:`rule.Settlement`, one statement per table (``statements``), in a
``transaction.Batch``: two round trips on PostgreSQL. Also the chain head's lock for the
callers outside a batch (``anchor``) and the first pool row and chain head of a new database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from fractions import Fraction
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Select,
    Table,
    Text,
    and_,
    bindparam,
    cast,
    func,
    select,
    true,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.engine.model import MathModel
from starfever.server.db import Database
from starfever.server.models import (
    Account,
    ChainHead,
    FreeRoundCampaign,
    FreeRoundGrant,
    GameControl,
    JackpotPool,
    LedgerEntry,
    Round,
    RoundRow,
    SessionToken,
    Wallet,
    WalletCall,
)
from starfever.server.services import events, jackpot
from starfever.server.services.chain import GENESIS_HASH, ROUNDS_CHAIN_ID
from starfever.server.services.control_rules import Maintenance
from starfever.server.services.errors import utcnow
from starfever.server.services.free_round_rules import GrantState, grant_ref
from starfever.server.spin.rule import Books, Job, Login, Player, Settlement
from starfever.server.spin.transaction import Batch, Query, among

CHAIN_ID = ROUNDS_CHAIN_ID
_ROUNDS: Table = Round.__table__  # type: ignore[assignment]
_LEDGER: Table = LedgerEntry.__table__  # type: ignore[assignment]
_WALLETS: Table = Wallet.__table__  # type: ignore[assignment]
_SESSIONS: Table = SessionToken.__table__  # type: ignore[assignment]
_POOL: Table = JackpotPool.__table__  # type: ignore[assignment]
_HEAD: Table = ChainHead.__table__  # type: ignore[assignment]
_ACCOUNTS: Table = Account.__table__  # type: ignore[assignment]
_CALLS: Table = WalletCall.__table__  # type: ignore[assignment]
_GRANTS: Table = FreeRoundGrant.__table__  # type: ignore[assignment]
_CAMPAIGNS: Table = FreeRoundCampaign.__table__  # type: ignore[assignment]
_CONTROLS: Table = GameControl.__table__  # type: ignore[assignment]
_PROTECTION = (_ACCOUNTS.c.excluded_until, _ACCOUNTS.c.birth_date, _ACCOUNTS.c.play_started_at,
               _ACCOUNTS.c.reality_check_at, _ACCOUNTS.c.net_result,
               _ACCOUNTS.c.reality_check_seconds)
"""What the settlement needs of a player's account: exclusion, age, reality-check clock and
interval."""


@dataclass(frozen=True)
class _Reads:
    """The batch's reads, for one dialect (:func:`batch.among`: one statement text a read)."""

    wallets: Select[Any]
    """The ledger-mode players' wallets with their accounts, locked (sorted by account)."""
    operator_players: Select[Any]
    """Operator mode: the players have no wallet here (the operator holds the balance)."""
    rounds: Select[Any]
    """The rounds already stored under the batch's (account, key) pairs: on PostgreSQL joined
    with the pairs (``unnest`` of the two aligned lists: one probe of the unique index a
    pair; ``= ANY`` on both columns probed every account with every key, a batch's size
    squared); elsewhere by account, then key, a row whose pair is not one of the batch's left
    out after reading."""
    sessions: Select[Any]
    debits: Select[Any]
    """Operator mode: the batch's debits, locked, so that the retrier cannot roll one back
    while its round is being stored."""
    grants: Select[Any]
    """The free-round grants the batch's free rounds name, locked (after the wallets, before
    the pool): two workers' free rounds on one grant are settled one after the other, so
    they can never play more rounds than it gives (ADR 0064)."""


def _reads(*, postgres: bool) -> _Reads:
    return _Reads(
        wallets=(select(_ACCOUNTS.c.id, _WALLETS.c.balance, *_PROTECTION)
                 .join(_ACCOUNTS, _ACCOUNTS.c.id == _WALLETS.c.account_id)
                 .where(among(_WALLETS.c.account_id, "ids", postgres=postgres))
                 .order_by(_WALLETS.c.account_id).with_for_update(of=_WALLETS)),
        operator_players=(select(_ACCOUNTS.c.id, *_PROTECTION)
                          .where(among(_ACCOUNTS.c.id, "ids", postgres=postgres))),
        rounds=_stored_rounds(postgres=postgres),
        sessions=(select(_SESSIONS.c.id, _SESSIONS.c.revoked_at, _SESSIONS.c.expires_at,
                         _SESSIONS.c.terminated_at, _SESSIONS.c.ended_because)
                  .where(among(_SESSIONS.c.id, "ids", postgres=postgres))),
        debits=(select(_CALLS.c.transaction_id, _CALLS.c.status)
                .where(among(_CALLS.c.transaction_id, "ids", postgres=postgres))
                .order_by(_CALLS.c.transaction_id).with_for_update()),
        grants=(select(*_GRANTS.c, _CAMPAIGNS.c.operator_id.label("campaign_ref"))
                .select_from(_GRANTS.outerjoin(_CAMPAIGNS,
                                               _CAMPAIGNS.c.id == _GRANTS.c.campaign_id))
                .where(among(_GRANTS.c.id, "ids", postgres=postgres))
                .order_by(_GRANTS.c.id).with_for_update(of=_GRANTS)))


def _stored_rounds(*, postgres: bool) -> Select[Any]:
    if not postgres:
        return select(_ROUNDS).where(among(_ROUNDS.c.account_id, "ids", postgres=False),
                                     among(_ROUNDS.c.idempotency_key, "keys", postgres=False))
    pairs = func.unnest(cast(bindparam("ids"), ARRAY(BigInteger)),
                        cast(bindparam("keys"), ARRAY(Text))).table_valued(
        "account_id", "idempotency_key").render_derived(name="wanted")
    return select(_ROUNDS).join(pairs, and_(
        _ROUNDS.c.account_id == pairs.c.account_id,
        _ROUNDS.c.idempotency_key == pairs.c.idempotency_key))


_READS = {postgres: _reads(postgres=postgres) for postgres in (False, True)}
MAINTENANCE_ID = 1
"""The one row of ``game_controls``."""
_LOCK_POOL_AND_HEAD = (
    select(_POOL.c.amount, _POOL.c.carry, _HEAD.c.last_round_id, _HEAD.c.last_hash,
           _HEAD.c.head_mac,
           select(_CONTROLS.c.maintenance_since).where(_CONTROLS.c.id == MAINTENANCE_ID)
           .scalar_subquery().label("maintenance_since"),
           select(_CONTROLS.c.retry_after_seconds).where(_CONTROLS.c.id == MAINTENANCE_ID)
           .scalar_subquery().label("retry_after_seconds"))
    .select_from(_POOL.join(_HEAD, true()))
    .where(_POOL.c.id == bindparam("pool_id"), _HEAD.c.id == CHAIN_ID).with_for_update())
"""Both rows in one statement, locked in the order of ADR 0005 (the batch's currency's pool,
then chain head), and
the maintenance switch beside them (two scalar subqueries of a one-row table, not locked: no
round trip of its own, ADR 0067)."""
_POOL_METERS = {name: f"jackpot_pool.{name} + {{{name}}}"
                for name in ("contributions", "wins", "refills", "hits")}
"""The pool's meters grow by the batch's."""
_NET = {"net_result": "accounts.net_result + {net_result}"}
"""The player's reality-check net result grows by the batch's (the clock is the player's,
across sessions)."""
_DEBIT = {"operator_transaction_id":
          "coalesce({operator_transaction_id}, wallet_calls.operator_transaction_id)"}
"""Operator mode: a played debit, acknowledged with the operator's answer, names its round;
an answer without the operator's id keeps the one recorded before."""


def _player(row: Any, balance: int | None, *, vouched: bool) -> Player:
    return Player(balance=balance, excluded_until=row.excluded_until, birth_date=row.birth_date,
                  play_started_at=row.play_started_at, reality_check_at=row.reality_check_at,
                  net_result=row.net_result, vouched=vouched,
                  reality_check_seconds=row.reality_check_seconds)


def read_books(txn: Batch, postgres: bool, jobs: Sequence[Job]) -> Books | None:
    """The batch's books, locked: wallets (sorted), then pool, then chain head (ADR 0005),
    every read in one round trip on PostgreSQL; ``None`` if the pool or the chain head does
    not exist yet (a new database). A batch is of one currency (``settler``): its pool is that
    currency's (ADR 0076)."""
    reads = _READS[postgres]
    ledger_ids = sorted({j.principal.account_id for j in jobs if j.debit is None})
    operator_ids = sorted({j.principal.account_id for j in jobs if j.debit is not None})
    debit_ids = sorted({j.debit.transaction_id for j in jobs if j.debit is not None})
    wanted = sorted({(j.principal.account_id, j.key) for j in jobs})  # each pair once
    wanted_reads: dict[str, Query] = {
        "wallets": (reads.wallets, {"ids": ledger_ids}),
        "operator_players": (reads.operator_players, {"ids": operator_ids}),
        "rounds": (reads.rounds, {"ids": [aid for aid, _ in wanted],
                                  "keys": [key for _, key in wanted]}),
        "sessions": (reads.sessions, {"ids": sorted({j.principal.session_id for j in jobs})}),
        "debits": (reads.debits, {"ids": debit_ids}),
        "grants": (reads.grants, {"ids": sorted({j.grant_id for j in jobs
                                                  if j.grant_id is not None})}),
        "head": (_LOCK_POOL_AND_HEAD, {"pool_id": jackpot.pool_id(jobs[0].currency)})}
    names = [name for name, (_, params) in wanted_reads.items()
             if name == "head" or params["ids"]]  # a read of nothing is not sent
    found = dict(zip(names, txn.fetch([wanted_reads[name] for name in names]), strict=True))
    wallets, players_here, stored, sessions, debit_rows, grant_rows, head = (
        found.get(name, []) for name in wanted_reads)
    if not head:
        return None
    players = {row.id: _player(row, row.balance, vouched=False) for row in wallets}
    players.update({row.id: _player(row, None, vouched=True) for row in players_here})
    pairs = set(wanted)
    settled = {(row.account_id, row.idempotency_key): RoundRow(**row._asdict())
               for row in stored if (row.account_id, row.idempotency_key) in pairs}
    logins = {row.id: Login(revoked_at=row.revoked_at, expires_at=row.expires_at,
                            terminated_at=row.terminated_at,
                            ended_because=row.ended_because)
              for row in sessions}
    pool, carry, last_id, last_hash, head_mac, since, retry_after = head[0]
    return Books(players=players, logins=logins, settled=settled, pool=pool,
                 carry=Fraction(carry), last_id=last_id, last_hash=last_hash,
                 debits={row.transaction_id: row.status for row in debit_rows},
                 head_mac=head_mac, grants={row.id: _grant(row) for row in grant_rows},
                 maintenance=Maintenance(since=_utc(since), retry_after_seconds=retry_after
                                         or 300))


def _grant(row: Any) -> GrantState:
    return GrantState(id=row.id, account_id=row.account_id, line_bet=row.line_bet,
                      rounds=row.rounds, rounds_played=row.rounds_played,
                      winnings=row.winnings, withheld=row.withheld, max_win=row.max_win,
                      expires_at=row.expires_at, cancelled_at=row.cancelled_at,
                      grant_ref=grant_ref(row.id, row.operator_id),
                      campaign_ref=row.campaign_ref)


def _utc(value: Any) -> Any:
    """A timestamp of a scalar subquery (no column type to make it aware): UTC, or ``None``."""
    if value is None:
        return None
    if isinstance(value, str):  # SQLite answers a subquery's timestamp as text
        from datetime import datetime

        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def write(txn: Batch, done: Settlement, now: Any, currency: str) -> None:
    """The settlement's rows, one statement per table (``statements``), and the commit: in one
    round trip on PostgreSQL. ``currency``: the batch's, whose pool the rounds moved."""
    txn.insert(_ROUNDS, done.rounds)
    txn.insert(_LEDGER, done.entries)
    txn.insert(_CALLS, done.calls)
    txn.update(_CALLS, "transaction_id", done.debits, _DEBIT)
    txn.update(_GRANTS, "id", done.grants)
    txn.update(_WALLETS, "account_id", [
        {"account_id": aid, "balance": balance, "updated_at": now}
        for aid, balance in done.balances.items()])
    txn.update(_ACCOUNTS, "id", [
        {"id": aid, "net_result": delta} for aid, delta in done.nets.items()], _NET)
    pool = done.pool
    txn.update(_POOL, "id", [{
        "id": jackpot.pool_id(currency), "amount": pool.amount, "carry": str(pool.carry),
        "contributions": pool.contributions, "wins": pool.wins, "refills": pool.refills,
        "hits": pool.hits, "updated_at": now}], _POOL_METERS)
    txn.update(_HEAD, "id", [
        {"id": CHAIN_ID, "last_round_id": done.head[0], "last_hash": done.head[1],
         "head_mac": done.head_mac}])
    txn.insert(events.TABLE, events.refill_rows(done.rounds, now))  # rare: a refill
    txn.commit()


def create_pool_and_head(db: Database, model: MathModel, currency: str) -> None:
    """A new database (or a currency's first round): create ``currency``'s pool row and the
    chain head (another process may race to do the same: then its rows stand)."""
    try:
        with db.write() as session:
            jackpot.lock_pool(session, model, utcnow(), currency)
            lock_chain(session)
    except IntegrityError:
        pass


def lock_chain(session: Session) -> ChainHead:
    """The chain head, locked until the transaction ends (created at genesis if missing)."""
    head = session.scalar(select(ChainHead).where(ChainHead.id == CHAIN_ID).with_for_update())
    if head is None:
        head = ChainHead(id=CHAIN_ID, last_round_id=0, last_hash=GENESIS_HASH)
        session.add(head)
    return head


__all__ = ["CHAIN_ID", "create_pool_and_head", "lock_chain", "read_books", "write"]
