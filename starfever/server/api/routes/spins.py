"""Spins: one request, one round, settled in the group commit of ADR 0009."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Response, status

from starfever.server.api.convert import reality_check, round_public
from starfever.server.api.deps import ContextDep, SpinnerDep
from starfever.server.schemas import SpinCreate, SpinPublic, is_idempotency_key
from starfever.server.services import rounds
from starfever.server.services.errors import BadRequest

router = APIRouter(prefix="/spins", tags=["spins"])


_REPLAYED = {"model": SpinPublic,
             "description": "A retry of a key already settled: the same round, no money moved"}


@router.post("", status_code=status.HTTP_201_CREATED, responses={status.HTTP_200_OK: _REPLAYED})
async def spin(body: SpinCreate, context: ContextDep, player: SpinnerDep, response: Response,
               idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
               ) -> SpinPublic:
    """Bet ``line_bet`` x 20 and play a round. Send a fresh ``Idempotency-Key`` per spin and
    the same one when retrying: a retry returns the same round and moves no money."""
    if idempotency_key is None:
        raise BadRequest("send an Idempotency-Key header", code="idempotency_key_required")
    if not is_idempotency_key(idempotency_key):
        raise BadRequest("the Idempotency-Key must be 1-128 characters of A-Z a-z 0-9 _ . : -",
                         code="invalid_idempotency_key")
    if context.operator is not None:  # the operator's wallet: debit, settle, credit
        job = rounds.queued_spin(context.settings, context.model, player, body.line_bet,
                                 idempotency_key, body.test_draws)
        outcome = await context.operator.spin(job)
    else:
        outcome = await rounds.spin_awaiting(context.db, context.settings, context.model,
                                             context.wallet, player, body.line_bet,
                                             idempotency_key, body.test_draws)
    if outcome.replayed:
        response.status_code = status.HTTP_200_OK
    return SpinPublic(round=round_public(outcome.round), balance=outcome.balance,
                      replayed=outcome.replayed,
                      reality_check=reality_check(outcome.reality_check))
