"""The operators' handling of unpaid wins, ``/operator/unpaid-wins/{round_id}/...`` (operators
only; ADR 0061): resend a refused credit once the operator has fixed its side, or settle the
win manually with a reason, proposed by one operator account and approved by another. The
list itself is ``GET /operator/unpaid-wins`` (``routes.operator``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from starfever.server.api.deps import ContextDep, OperatorDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import MAX_ID, ResendPublic, SettlementCreate, SettlementPublic
from starfever.server.services import unpaid_actions

router = APIRouter(prefix="/operator/unpaid-wins", tags=["operator"],
                   route_class=RetryOnDisconnect)
RoundPath = Annotated[int, Path(ge=1, le=MAX_ID)]


def _client(request: Request) -> str | None:
    return request.client.host if request.client else None


def _public(found: unpaid_actions.Settlement) -> SettlementPublic:
    return SettlementPublic(round_id=found.round_id, transaction_id=found.transaction_id,
                            amount=found.amount, status=found.status, reason=found.reason,
                            proposed_by=found.proposed_by, proposed_at=found.proposed_at,
                            approved_by=found.approved_by, approved_at=found.approved_at,
                            payment=found.payment)


@router.post("/{round_id}/resend")
def resend(context: ContextDep, operator_: OperatorDep, request: Request,
           round_id: RoundPath) -> ResendPublic:
    """Send an unpaid win's credit again, after the operator fixed its side: the same credit
    transaction (its ``transaction_id``), sent once now. ``payment`` says what came of it:
    ``paid`` (acknowledged), ``unpaid`` (refused again, ``error`` the new answer) or
    ``pending`` (no answer: resent until answered). ``404 no_unpaid_win`` for a round
    without a credit; ``409 not_unpaid`` for one not unpaid (paid, pending or settled)."""
    done = unpaid_actions.resend(context.db, context.wallet, round_id,
                                 actor=operator_.username, client=_client(request))
    return ResendPublic(round_id=done.round_id, transaction_id=done.transaction_id,
                        payment=done.payment, error=done.error,
                        operator_transaction_id=done.operator_transaction_id)


@router.post("/{round_id}/settlement", status_code=201)
def propose(body: SettlementCreate, context: ContextDep, operator_: OperatorDep,
            request: Request, round_id: RoundPath) -> SettlementPublic:
    """Propose a manual settlement of an unpaid win, with the reason (10-500 characters: how
    it was settled outside the wallet, the operator's reference). The win stays unpaid until
    another operator account approves. ``409 settlement_proposed`` while one awaits a
    decision, ``409 not_unpaid`` for a win not unpaid."""
    return _public(unpaid_actions.propose(context.db, round_id, body.reason,
                                          actor=operator_.username, client=_client(request)))


@router.post("/{round_id}/settlement/approve")
def approve(context: ContextDep, operator_: OperatorDep, request: Request,
            round_id: RoundPath) -> SettlementPublic:
    """Approve another operator's proposal: the round is ``settled_manually`` (out of the
    unpaid list, never counted as paid by the wallet). ``403 own_proposal`` for its
    proposer, ``409 already_settled`` once approved, ``404 no_settlement_proposed``."""
    return _public(unpaid_actions.approve(context.db, round_id, actor=operator_.username,
                                          client=_client(request)))


@router.delete("/{round_id}/settlement")
def withdraw(context: ContextDep, operator_: OperatorDep, request: Request,
             round_id: RoundPath) -> SettlementPublic:
    """Withdraw a proposal not yet approved; the win stays unpaid."""
    return _public(unpaid_actions.withdraw(context.db, round_id, actor=operator_.username,
                                           client=_client(request)))
