"""The cashier: money entering (deposits) and leaving (withdrawals) a player's wallet, on an
operator's order. Deposits pass the player-protection checks under the wallet lock, so two
concurrent deposits can never pass the weekly limit together. Each one's wallet entry joins
the keyed cashier chain (``services.anchor``), so a deposit written straight into the
database fails the audit.

Idempotency (ADR 0017): a request sent with an ``Idempotency-Key`` is recorded under that key
(``cashier_transactions``, unique over the installation) in the transaction that books it. A
retry with the same key and the same request (kind, player, amount) answers the first
booking's result and books nothing; the same key with another request is refused
(``409 idempotency_key_reused``). The key is looked up after the cashier chain's head is
locked, which every cashier transaction takes: so two requests with one key are serialized,
and the second finds the first's row once it committed; the unique index is the last line.
A refused request records nothing, so its retry is decided afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import CASHIER, PLAYER, Account, CashierTransaction, LedgerEntry
from starfever.server.services import anchor, ledger, protection
from starfever.server.services.errors import Conflict, NotFound, utcnow
from starfever.server.settings import Settings

if TYPE_CHECKING:
    from starfever.server.spin.wallets import LedgerWallet

KINDS = (ledger.DEPOSIT, ledger.WITHDRAWAL)


@dataclass(frozen=True, slots=True)
class CashierResult:
    """A booked deposit or withdrawal."""

    username: str
    kind: str
    amount: int
    balance: int
    """The player's balance right after this booking (also when answered to a retry)."""
    entry_id: int
    """The wallet's ledger entry of the booking: the transaction's id."""
    created_at: datetime
    idempotency_key: str | None = None
    replayed: bool = False
    """A retry of a key already booked: the first answer, nothing moved now."""


def _player(session: Session, username: str) -> Account:
    account = session.scalar(select(Account).where(Account.username == username,
                                                      Account.role == PLAYER))
    if account is None:
        raise NotFound(f"no player {username!r}", code="player_not_found")
    return account


def _stored(session: Session, key: str) -> CashierTransaction | None:
    found: CashierTransaction | None = session.scalar(
        select(CashierTransaction).where(CashierTransaction.idempotency_key == key))
    return found


def _replay(session: Session, row: CashierTransaction, kind: str, account_id: int,
            amount: int) -> CashierResult:
    """The first answer of ``row``, if this request is the one it recorded."""
    if (row.kind, row.account_id, row.amount) != (kind, account_id, amount):
        raise Conflict("this Idempotency-Key was used for a different cashier request "
                       f"(a {row.kind} of {row.amount} cents)", code="idempotency_key_reused")
    username = session.scalar(select(Account.username).where(Account.id == row.account_id))
    return CashierResult(username=str(username), kind=row.kind, amount=row.amount,
                         balance=row.balance_after, entry_id=row.entry_id,
                         created_at=row.created_at, idempotency_key=row.idempotency_key,
                         replayed=True)


def _book(db: Database, settings: Settings, wallet: LedgerWallet, kind: str, username: str,
          amount: int, key: str | None, operator_id: int | None) -> CashierResult:
    now = utcnow()
    with db.write() as session:
        account = _player(session, username)
        wallet.lock(session, account.id)
        # the cashier chain's head before the entry is booked: entries then get their ids in
        # chain order, also when deposits of different players run at once (PostgreSQL); and
        # every request with one key waits here for the one before it
        head = anchor.lock_cashier_head(session)
        if key is not None and (row := _stored(session, key)) is not None:
            return _replay(session, row, kind, account.id, amount)
        if kind == ledger.DEPOSIT:
            protection.check_deposit(session, settings, account, amount, now)
            balance = wallet.credit(session, account.id, amount, kind, now)
            ledger.book(session, CASHIER, kind, -amount, now)
        else:
            balance = wallet.debit(session, account.id, amount, kind, now)
            ledger.book(session, CASHIER, kind, amount, now)
        previous = head.last_round_id
        anchor.chain_cashier_entry(session, settings.chain_key(), account.id, kind)
        entry_id = head.last_round_id  # the head names the entry just chained
        if key is not None:
            if entry_id == previous or session.get(LedgerEntry, entry_id) is None:
                raise RuntimeError("the cashier entry was not chained: no id to record")
            session.add(CashierTransaction(
                idempotency_key=key, kind=kind, account_id=account.id, operator_id=operator_id,
                amount=amount, entry_id=entry_id, balance_after=balance, created_at=now))
        return CashierResult(username=username, kind=kind, amount=amount, balance=balance,
                             entry_id=entry_id, created_at=now, idempotency_key=key)


def _booked(db: Database, settings: Settings, wallet: LedgerWallet, kind: str, username: str,
            amount: int, key: str | None, operator_id: int | None) -> CashierResult:
    try:
        return _book(db, settings, wallet, kind, username, amount, key, operator_id)
    except IntegrityError:
        # another transaction recorded this key first (only if it did not take the cashier
        # head's lock, which every cashier transaction of this package does): its answer
        if key is None:
            raise
        with db.read() as session:
            row = _stored(session, key)
            if row is None:
                raise
            return _replay(session, row, kind, _player(session, username).id, amount)


def deposit(db: Database, settings: Settings, wallet: LedgerWallet, username: str,
            amount: int, *, key: str | None = None,
            operator_id: int | None = None) -> CashierResult:
    """Credit ``amount`` cents to the player, within their limits (once per ``key``)."""
    return _booked(db, settings, wallet, ledger.DEPOSIT, username, amount, key, operator_id)


def withdraw(db: Database, settings: Settings, wallet: LedgerWallet, username: str,
             amount: int, *, key: str | None = None,
             operator_id: int | None = None) -> CashierResult:
    """Pay ``amount`` cents out of the player's wallet (``insufficient_funds`` if short; once
    per ``key``)."""
    return _booked(db, settings, wallet, ledger.WITHDRAWAL, username, amount, key, operator_id)


def lookup(db: Database, kind: str, username: str, key: str) -> CashierResult:
    """The deposit or withdrawal of the player booked under ``key`` (``404
    transaction_not_found`` if there is none: nothing was booked under it)."""
    with db.read() as session:
        account = _player(session, username)
        row = _stored(session, key)
        if row is None or row.kind != kind or row.account_id != account.id:
            raise NotFound(f"no {kind} of {username!r} with this Idempotency-Key",
                           code="transaction_not_found")
        return CashierResult(username=username, kind=row.kind, amount=row.amount,
                             balance=row.balance_after, entry_id=row.entry_id,
                             created_at=row.created_at, idempotency_key=row.idempotency_key,
                             replayed=True)


def audit_problems(session: Session) -> list[str]:
    """Every keyed cashier transaction against the wallet entry it names (for the audit)."""
    problems: list[str] = []
    rows = session.execute(select(CashierTransaction, LedgerEntry).outerjoin(
        LedgerEntry, LedgerEntry.id == CashierTransaction.entry_id)
        .order_by(CashierTransaction.id))
    for row, entry in rows:
        sign = 1 if row.kind == ledger.DEPOSIT else -1
        if entry is None or (entry.book, entry.kind, entry.account_id, entry.amount,
                             entry.balance_after) != ("wallet", row.kind, row.account_id,
                                                      sign * row.amount, row.balance_after):
            problems.append(f"cashier transaction {row.id} ({row.kind} of {row.amount}, key "
                            f"{row.idempotency_key!r}) does not match its entry {row.entry_id}")
    return problems
