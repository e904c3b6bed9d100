"""Unpaid wins (operator mode, OPERATOR-WALLET.md rule 5): a round whose credit the operator's
wallet refused with a final ``4xx``. Its win was never paid, so nothing may show, report,
meter or audit it as paid: this module is the one place that says which rounds are unpaid,
derived from the ``wallet_calls`` rows (a credit with status ``refused``), so no new column can
disagree with the calls that decide it.

A round's *payment* is ``paid`` (its credit acknowledged, or the ledger wallet paid it in the
round's own transaction), ``pending`` (its credit not answered yet: resent until it is, rule 4),
``unpaid`` (refused) or ``settled_manually`` (refused, and a manual settlement outside the
wallet proposed by one operator account and approved by another, ``win_settlements``, ADR
0061). A settled win was still never paid by the wallet: reports keep it out of wins and GGR
as they keep an unpaid one, and show it apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Exists, Select, and_, exists, func, select
from sqlalchemy.orm import Session, aliased

from starfever.server.db import Database
from starfever.server.models import SETTLEMENT_STATES, Account, WalletCall, WinSettlement
from starfever.server.spin.calls import CallKind, CallState

PAID = "paid"
PENDING = "pending"
UNPAID = "unpaid"
SETTLED = "settled_manually"
PAYMENTS = (PAID, PENDING, UNPAID, SETTLED)
PROPOSED, APPROVED, WITHDRAWN = SETTLEMENT_STATES
"""The states of a manual settlement (``win_settlements.status``)."""
_PAYMENT_OF: dict[str, str] = {CallState.REFUSED: UNPAID, CallState.PENDING: PENDING}


def is_refused() -> ColumnElement[bool]:
    """The ``wallet_calls`` rows of wins the operator's wallet never paid: refused credits
    (unpaid, or settled manually outside the wallet)."""
    return and_(WalletCall.kind == CallKind.CREDIT, WalletCall.status == CallState.REFUSED)


def is_settled() -> Exists:
    """A manual settlement of the call's round was approved (``win_settlements``)."""
    return exists().where(WinSettlement.round_id == WalletCall.round_id,
                          WinSettlement.status == APPROVED)


def is_unpaid() -> ColumnElement[bool]:
    """The ``wallet_calls`` rows that make their round unpaid: refused credits not settled."""
    return and_(is_refused(), ~is_settled())


def unpaid_rounds() -> Select[int | None, int]:
    """``(round_id, amount)`` of every unpaid round (a subquery for reports and audits)."""
    return select(WalletCall.round_id, WalletCall.amount).where(is_unpaid())


def refused_rounds() -> Select[int | None, int, bool]:
    """``(round_id, amount, settled)`` of every round whose win the operator's wallet never
    paid (a subquery for reports: none of them is in wins or GGR; ``settled`` tells the
    manually settled apart from the unpaid)."""
    return select(WalletCall.round_id, WalletCall.amount,
                  is_settled().label("settled")).where(is_refused())


def payments(session: Session, round_ids: Iterable[int]) -> dict[int, str]:
    """Each round's payment (rounds without a credit call: ``paid``, the ledger's way)."""
    ids = list(round_ids)
    found = {rid: PAID for rid in ids}
    if not ids:
        return found
    rows = session.execute(select(WalletCall.round_id, WalletCall.status, is_settled()).where(
        WalletCall.kind == CallKind.CREDIT, WalletCall.round_id.in_(ids))).all()
    for rid, status, settled in rows:
        if rid is not None:
            found[int(rid)] = SETTLED if settled and status == CallState.REFUSED \
                else _PAYMENT_OF.get(str(status), PAID)
    return found


def payments_of(db: Database, round_ids: Iterable[int]) -> dict[int, str]:
    """:func:`payments` in a read transaction of its own."""
    with db.read() as session:
        return payments(session, round_ids)


def _of(currency: str | None) -> tuple[ColumnElement[bool], ...]:
    """The credits of ``currency`` (``None``: of every currency)."""
    return () if currency is None else (WalletCall.currency == currency,)


def totals(session: Session, currency: str | None = None) -> tuple[int, int]:
    """How many unpaid wins there are and their minor units: of ``currency``, or (``None``)
    their count over every currency with the sum only meaningful where one is served."""
    n, cents = session.execute(select(func.count(), func.coalesce(func.sum(WalletCall.amount), 0))
                               .where(is_unpaid(), *_of(currency))).one()
    return int(n), int(cents)


def totals_by_currency(session: Session) -> dict[str, tuple[int, int]]:
    """:func:`totals` per currency (ADR 0076: no figure adds two currencies' minor units)."""
    rows = session.execute(select(WalletCall.currency, func.count(),
                                  func.coalesce(func.sum(WalletCall.amount), 0))
                           .where(is_unpaid()).group_by(WalletCall.currency)).all()
    return {code: (int(n), int(cents)) for code, n, cents in rows}


@dataclass
class UnpaidWins:
    """The unpaid wins, oldest first: their count and cents, and a page of them."""

    count: int = 0
    amount: int = 0
    oldest: datetime | None = None
    settled_count: int = 0
    """Refused wins settled manually (no longer unpaid, never paid by the wallet)."""
    settled_amount: int = 0
    wins: list[dict[str, Any]] = field(default_factory=list)


def settled_totals(session: Session, currency: str | None = None) -> tuple[int, int]:
    """How many refused wins (of ``currency``) were settled manually, and their cents."""
    n, cents = session.execute(select(func.count(), func.coalesce(func.sum(WalletCall.amount), 0))
                               .where(is_refused(), is_settled(), *_of(currency))).one()
    return int(n), int(cents)


def unpaid_wins(db: Database, limit: int = 50, currency: str | None = None) -> UnpaidWins:
    """Every unpaid win with both sides' ids: Star Fever's round id, the ``round_id`` the
    operator was sent, the credit's and the debit's transaction ids, the operator's player id
    and its own id of the debit; the amount (its €€€ share), since when (the refusal), the
    operator's answer (its error code), and a manual settlement proposed for it (awaiting a
    second operator's approval), if any. Of ``currency``'s credits (``None``: of every
    currency, for an installation that serves one)."""
    debit = aliased(WalletCall)
    proposal = aliased(WinSettlement)
    with db.read() as session:
        n, cents = totals(session, currency)
        oldest = session.scalar(select(func.min(WalletCall.updated_at)).where(
            is_unpaid(), *_of(currency)))
        settled_n, settled_cents = settled_totals(session, currency)
        rows = session.execute(
            select(WalletCall.round_id, WalletCall.round_ref, WalletCall.transaction_id,
                   WalletCall.debit_transaction_id, debit.operator_transaction_id,
                   WalletCall.amount, WalletCall.jackpot_amount, WalletCall.error,
                   WalletCall.attempts, WalletCall.created_at, WalletCall.updated_at,
                   Account.username, Account.external_id, proposal.reason,
                   proposal.proposed_by, proposal.proposed_at)
            .join(Account, Account.id == WalletCall.account_id)
            .outerjoin(debit, debit.transaction_id == WalletCall.debit_transaction_id)
            .outerjoin(proposal, and_(proposal.round_id == WalletCall.round_id,
                                      proposal.status == PROPOSED))
            .where(is_unpaid(), *_of(currency)).order_by(WalletCall.updated_at, WalletCall.id)
            .limit(limit)).all()
    return UnpaidWins(count=n, amount=cents, oldest=oldest, settled_count=settled_n,
                      settled_amount=settled_cents, wins=[
        {"round_id": r[0], "round_ref": r[1], "transaction_id": r[2],
         "debit_transaction_id": r[3], "operator_debit_transaction_id": r[4],
         "amount": r[5], "jackpot_amount": r[6], "error": r[7], "attempts": r[8],
         "played_at": r[9], "since": r[10], "username": r[11], "external_id": r[12],
         "settlement": None if r[13] is None else {
             "status": PROPOSED, "reason": r[13], "proposed_by": r[14], "proposed_at": r[15]}}
        for r in rows])


__all__ = ["APPROVED", "PAID", "PAYMENTS", "PENDING", "PROPOSED", "SETTLED", "UNPAID",
           "WITHDRAWN", "UnpaidWins", "is_refused", "is_settled", "is_unpaid", "payments",
           "payments_of", "refused_rounds", "settled_totals", "totals", "totals_by_currency",
           "unpaid_rounds",
           "unpaid_wins"]
