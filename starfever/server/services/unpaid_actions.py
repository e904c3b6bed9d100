"""What an operator does about an unpaid win (OPERATOR-WALLET.md rule 5, ADR 0061): send its
credit again once the operator has fixed its side, or settle it manually outside the wallet,
with a reason, proposed by one operator account and approved by another.

- **Resend** hands the refused credit back to be sent (``refused`` -> ``pending``, the same
  ``transaction_id``: the operator's idempotency keeps it one transaction) and sends it once
  at once (:meth:`CreditResender.resend_credit`). Acknowledged, the round is paid; refused
  again, it stays unpaid with the new answer; unanswered, it stays pending and the resender
  sends it until it is answered (rule 4).
- **Manual settlement**: :func:`propose` records the proposal (``win_settlements``) and the
  round stays unpaid; :func:`approve` by another account makes it ``settled_manually``;
  :func:`withdraw` drops a proposal not yet approved. The wallet never paid such a win, so
  the reports keep it out of wins and GGR and show it apart (``services.unpaid``).

Every step locks the round's credit row first (``FOR UPDATE``; SQLite's write lock is one
already), so a resend, a proposal and approvals of one round take turns and each sees what
the one before it committed: two approvers settle it once, a resend and an approval never
both succeed. Each step writes its significant event in its own transaction, and
:func:`record_answer` (called by the seamless wallet where it records an answer) writes the
wallet's answers that decide a round's payment: ``credit_refused`` and ``unpaid_win_paid``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import WalletCall, WinSettlement
from starfever.server.services import events, unpaid
from starfever.server.services.errors import Conflict, Forbidden, NotFound, utcnow
from starfever.server.spin.calls import CallKind, CallState


class CreditResender(Protocol):
    """The wallet that sends a credit handed back by :func:`resend` (the seamless wallet)."""

    @property
    def resend_hold(self) -> timedelta:
        """How long the resender leaves a handed-back credit to the request sending it."""
        ...

    def resend_credit(self, transaction_id: str) -> None:
        """Send the pending credit once now and record its answer (none: left pending)."""
        ...


@dataclass(frozen=True, slots=True)
class Resent:
    """A credit sent again, and the round's payment after it."""

    round_id: int
    transaction_id: str
    payment: str
    error: str | None
    operator_transaction_id: str | None


@dataclass(frozen=True, slots=True)
class Settlement:
    """A manual settlement (a ``win_settlements`` row) and its round's payment now."""

    round_id: int
    transaction_id: str
    amount: int
    status: str
    reason: str
    proposed_by: str
    proposed_at: datetime
    approved_by: str | None
    approved_at: datetime | None
    payment: str


def _credit(session: Session, round_id: int) -> WalletCall:
    """The round's credit, locked; ``404 no_unpaid_win`` for a round without one (no such
    round, or a round the ledger paid)."""
    row = session.scalar(select(WalletCall).where(WalletCall.kind == CallKind.CREDIT,
                                                  WalletCall.round_id == round_id)
                         .with_for_update())
    if row is None:
        raise NotFound(f"round {round_id} has no credit of the operator's wallet",
                       code="no_unpaid_win")
    return row


def _require_unpaid(session: Session, credit: WalletCall) -> None:
    rid = int(credit.round_id or 0)
    payment = unpaid.payments(session, [rid])[rid]
    if payment != unpaid.UNPAID:
        raise Conflict(f"the win of round {rid} is not unpaid: it is {payment}",
                       code="not_unpaid")


def _settlement(session: Session, round_id: int) -> WinSettlement | None:
    found: WinSettlement | None = session.scalar(
        select(WinSettlement).where(WinSettlement.round_id == round_id).with_for_update())
    return found


def _view(session: Session, row: WinSettlement) -> Settlement:
    return Settlement(round_id=row.round_id, transaction_id=row.transaction_id,
                      amount=int(row.amount), status=row.status, reason=row.reason,
                      proposed_by=row.proposed_by, proposed_at=row.proposed_at,
                      approved_by=row.approved_by, approved_at=row.approved_at,
                      payment=unpaid.payments(session, [row.round_id])[row.round_id])


def resend(db: Database, wallet: CreditResender, round_id: int, *, actor: str,
           client: str | None = None) -> Resent:
    """Send an unpaid win's credit again (``409 not_unpaid`` unless the round is unpaid)."""
    now = utcnow()
    with db.write() as session:
        credit = _credit(session, round_id)
        _require_unpaid(session, credit)
        events.record(session, "unpaid_win_resent", actor=actor, client=client, detail={
            "round_id": round_id, "transaction_id": credit.transaction_id,
            "amount": int(credit.amount), "refusal": credit.error})
        # the refusal's code stays in ``error`` while pending: the answer that clears it is
        # an acknowledgement of a credit refused before (``unpaid_win_paid``)
        credit.status, credit.updated_at = CallState.PENDING, now
        credit.next_attempt_at = now + wallet.resend_hold
        transaction_id = credit.transaction_id
    wallet.resend_credit(transaction_id)
    with db.read() as session:
        after = session.scalar(select(WalletCall)
                               .where(WalletCall.transaction_id == transaction_id))
        payment = unpaid.payments(session, [round_id])[round_id]
    assert after is not None
    return Resent(round_id=round_id, transaction_id=transaction_id, payment=payment,
                  error=after.error if after.status == CallState.REFUSED else None,
                  operator_transaction_id=after.operator_transaction_id)


def propose(db: Database, round_id: int, reason: str, *, actor: str,
            client: str | None = None) -> Settlement:
    """Propose to settle an unpaid win manually; it stays unpaid until another operator
    approves (``409 settlement_proposed`` while a proposal awaits a decision)."""
    now = utcnow()
    with db.write() as session:
        credit = _credit(session, round_id)
        _require_unpaid(session, credit)
        found = _settlement(session, round_id)
        if found is not None and found.status == unpaid.PROPOSED:
            raise Conflict(f"a settlement of round {round_id} is already proposed by "
                           f"{found.proposed_by}: approve or withdraw it first",
                           code="settlement_proposed")
        if found is None:
            found = WinSettlement(round_id=round_id)
            session.add(found)
        found.transaction_id, found.amount = credit.transaction_id, int(credit.amount)
        found.reason, found.status = reason, unpaid.PROPOSED
        found.proposed_by, found.proposed_at = actor, now
        found.approved_by = found.approved_at = None
        events.record(session, "settlement_proposed", actor=actor, client=client, detail={
            "round_id": round_id, "transaction_id": credit.transaction_id,
            "amount": int(credit.amount), "reason": reason})
        session.flush()
        return _view(session, found)


def _proposed(session: Session, round_id: int) -> WinSettlement:
    found = _settlement(session, round_id)
    if found is not None and found.status == unpaid.APPROVED:
        raise Conflict(f"round {round_id} is settled already (approved by "
                       f"{found.approved_by})", code="already_settled")
    if found is None or found.status != unpaid.PROPOSED:
        raise NotFound(f"no settlement of round {round_id} is proposed",
                       code="no_settlement_proposed")
    return found


def approve(db: Database, round_id: int, *, actor: str,
            client: str | None = None) -> Settlement:
    """Approve another operator's proposal: the round becomes ``settled_manually``. The
    proposer cannot (``403 own_proposal``); a second approval finds it settled (``409
    already_settled``); a round paid or resent meanwhile is ``409 not_unpaid``."""
    now = utcnow()
    with db.write() as session:
        credit = _credit(session, round_id)  # first: approvals and resends take turns here
        found = _proposed(session, round_id)
        if found.proposed_by == actor:
            raise Forbidden("a manual settlement needs a second operator's approval: you "
                            "proposed this one", code="own_proposal")
        _require_unpaid(session, credit)
        found.status, found.approved_by, found.approved_at = unpaid.APPROVED, actor, now
        events.record(session, "settlement_approved", actor=actor, client=client, detail={
            "round_id": round_id, "transaction_id": found.transaction_id,
            "amount": int(found.amount), "reason": found.reason,
            "proposed_by": found.proposed_by})
        session.flush()
        return _view(session, found)


def withdraw(db: Database, round_id: int, *, actor: str,
             client: str | None = None) -> Settlement:
    """Withdraw a proposal not yet approved (any operator: its proposer, or one who would not
    approve it); the round stays unpaid and may be proposed again."""
    with db.write() as session:
        _credit(session, round_id)
        found = _proposed(session, round_id)
        found.status = unpaid.WITHDRAWN
        events.record(session, "settlement_withdrawn", actor=actor, client=client, detail={
            "round_id": round_id, "transaction_id": found.transaction_id,
            "amount": int(found.amount), "reason": found.reason,
            "proposed_by": found.proposed_by})
        session.flush()
        return _view(session, found)


def record_answer(session: Session, transaction_id: str, status: str, *,
                  error: str | None = None, operator_transaction_id: str | None = None) -> None:
    """Before the wallet records an answer to a pending call (in the same transaction): a
    refused credit is a ``credit_refused`` event (its win is unpaid), and the acknowledgement
    of a credit refused before (resent by an operator) an ``unpaid_win_paid`` one."""
    if status not in (CallState.REFUSED, CallState.ACKNOWLEDGED):
        return
    row = session.execute(select(WalletCall.kind, WalletCall.status, WalletCall.error,
                                 WalletCall.round_id, WalletCall.amount)
                          .where(WalletCall.transaction_id == transaction_id)).one_or_none()
    if row is None or row.kind != CallKind.CREDIT or row.status != CallState.PENDING:
        return
    detail: dict[str, object] = {"round_id": row.round_id, "transaction_id": transaction_id,
                                 "amount": int(row.amount)}
    if status == CallState.REFUSED:
        events.record(session, "credit_refused", actor=None, detail={**detail, "error": error})
    elif row.error is not None:
        events.record(session, "unpaid_win_paid", actor=None, detail={
            **detail, "operator_transaction_id": operator_transaction_id,
            "refused_before": row.error})


__all__ = ["CreditResender", "Resent", "Settlement", "approve", "propose", "record_answer",
           "resend", "withdraw"]
