"""Unpaid wins (operator mode, OPERATOR-WALLET.md rule 5): a round whose credit the operator's
wallet refused with a final ``4xx``. Its win was never paid, so nothing may show, report,
meter or audit it as paid: this module is the one place that says which rounds are unpaid,
derived from the ``wallet_calls`` rows (a credit with status ``refused``), so no new column can
disagree with the calls that decide it.

A round's *payment* is ``paid`` (its credit acknowledged, or the ledger wallet paid it in the
round's own transaction), ``pending`` (its credit not answered yet: resent until it is, rule 4)
or ``unpaid`` (refused).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, select
from sqlalchemy.orm import Session, aliased

from starfever.server.db import Database
from starfever.server.models import Account, WalletCall
from starfever.server.spin.calls import CallKind, CallState

PAID = "paid"
PENDING = "pending"
UNPAID = "unpaid"
PAYMENTS = (PAID, PENDING, UNPAID)
_PAYMENT_OF: dict[str, str] = {CallState.REFUSED: UNPAID, CallState.PENDING: PENDING}


def is_unpaid() -> ColumnElement[bool]:
    """The ``wallet_calls`` rows that make their round unpaid: refused credits."""
    return and_(WalletCall.kind == CallKind.CREDIT, WalletCall.status == CallState.REFUSED)


def unpaid_rounds() -> Select[int | None, int]:
    """``(round_id, amount)`` of every unpaid round (a subquery for reports and audits)."""
    return select(WalletCall.round_id, WalletCall.amount).where(is_unpaid())


def payments(session: Session, round_ids: Iterable[int]) -> dict[int, str]:
    """Each round's payment (rounds without a credit call: ``paid``, the ledger's way)."""
    ids = list(round_ids)
    found = {rid: PAID for rid in ids}
    if not ids:
        return found
    rows = session.execute(select(WalletCall.round_id, WalletCall.status).where(
        WalletCall.kind == CallKind.CREDIT, WalletCall.round_id.in_(ids))).all()
    for rid, status in rows:
        if rid is not None:
            found[int(rid)] = _PAYMENT_OF.get(str(status), PAID)
    return found


def payments_of(db: Database, round_ids: Iterable[int]) -> dict[int, str]:
    """:func:`payments` in a read transaction of its own."""
    with db.read() as session:
        return payments(session, round_ids)


def totals(session: Session) -> tuple[int, int]:
    """How many unpaid wins there are and their cents."""
    n, cents = session.execute(select(func.count(), func.coalesce(func.sum(WalletCall.amount), 0))
                               .where(is_unpaid())).one()
    return int(n), int(cents)


@dataclass
class UnpaidWins:
    """The unpaid wins, oldest first: their count and cents, and a page of them."""

    count: int = 0
    amount: int = 0
    oldest: datetime | None = None
    wins: list[dict[str, Any]] = field(default_factory=list)


def unpaid_wins(db: Database, limit: int = 50) -> UnpaidWins:
    """Every unpaid win with both sides' ids: Star Fever's round id, the ``round_id`` the
    operator was sent, the credit's and the debit's transaction ids, the operator's player id
    and its own id of the debit; the amount (its €€€ share), since when (the refusal), and the
    operator's answer (its error code)."""
    debit = aliased(WalletCall)
    with db.read() as session:
        n, cents = totals(session)
        oldest = session.scalar(select(func.min(WalletCall.updated_at)).where(is_unpaid()))
        rows = session.execute(
            select(WalletCall.round_id, WalletCall.round_ref, WalletCall.transaction_id,
                   WalletCall.debit_transaction_id, debit.operator_transaction_id,
                   WalletCall.amount, WalletCall.jackpot_amount, WalletCall.error,
                   WalletCall.attempts, WalletCall.created_at, WalletCall.updated_at,
                   Account.username, Account.external_id)
            .join(Account, Account.id == WalletCall.account_id)
            .outerjoin(debit, debit.transaction_id == WalletCall.debit_transaction_id)
            .where(is_unpaid()).order_by(WalletCall.updated_at, WalletCall.id)
            .limit(limit)).all()
    return UnpaidWins(count=n, amount=cents, oldest=oldest, wins=[
        {"round_id": r[0], "round_ref": r[1], "transaction_id": r[2],
         "debit_transaction_id": r[3], "operator_debit_transaction_id": r[4],
         "amount": r[5], "jackpot_amount": r[6], "error": r[7], "attempts": r[8],
         "played_at": r[9], "since": r[10], "username": r[11], "external_id": r[12]}
        for r in rows])


__all__ = ["PAID", "PAYMENTS", "PENDING", "UNPAID", "UnpaidWins", "is_unpaid", "payments",
           "payments_of", "totals", "unpaid_rounds", "unpaid_wins"]
