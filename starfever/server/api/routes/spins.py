"""Spins: one request, one round, settled in the group commit of ADR 0009."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Response, status
from starlette.concurrency import run_in_threadpool

from starfever.engine.symbols import BET_CLASSES, LINE_COUNT
from starfever.markets import load_market
from starfever.server import logs
from starfever.server.api.convert import details_url, reality_check, round_public
from starfever.server.api.deps import Context, ContextDep, SpinnerDep
from starfever.server.schemas import (
    FreeRoundPublic,
    SpinCreate,
    SpinPublic,
    is_idempotency_key,
)
from starfever.server.services import free_rounds, market_rules, pacing
from starfever.server.services.auth import Principal
from starfever.server.services.control_rules import MAINTENANCE
from starfever.server.services.errors import (
    BadRequest,
    Conflict,
    ServiceError,
    utcnow,
)
from starfever.server.services.protection_rules import play_time_left
from starfever.server.spin import draw
from starfever.server.spin.rule import SpinOutcome

router = APIRouter(prefix="/spins", tags=["spins"])


_REPLAYED = {"model": SpinPublic,
             "description": "A retry of a key already settled: the same round, no money moved"}


@router.post("", status_code=status.HTTP_201_CREATED, responses={status.HTTP_200_OK: _REPLAYED})
async def spin(body: SpinCreate, context: ContextDep, player: SpinnerDep, response: Response,
               idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
               ) -> SpinPublic:
    """Bet ``line_bet`` x 20 and play a round. Send a fresh ``Idempotency-Key`` per spin and
    the same one when retrying: a retry returns the same round and moves no money. The
    market profile's largest stake and least time per round hold here (``422
    stake_above_market_limit``, ``422 stake_above_age_limit`` for a young adult's stake above
    the market's cap for that age, ``429 round_too_soon``: nothing debited)."""
    if idempotency_key is None:
        raise BadRequest("send an Idempotency-Key header", code="idempotency_key_required")
    if not is_idempotency_key(idempotency_key):
        raise BadRequest("the Idempotency-Key must be 1-128 characters of A-Z a-z 0-9 _ . : -",
                         code="invalid_idempotency_key")
    played = await play(context, player, body, idempotency_key)
    if played.replayed:
        response.status_code = status.HTTP_200_OK
    return played


async def play(context: Context, player: Principal, body: SpinCreate,
               idempotency_key: str) -> SpinPublic:
    """The spin of a request already read: the caller, its body and its well-formed key (the
    one implementation behind both front doors, the route above and ``spin_route``'s)."""
    market = load_market(context.settings.market)
    total_bet = body.line_bet * LINE_COUNT
    # the market's cap, and where the stake is above its young adults' cap, the player's by
    # age (ADR 0077)
    if body.line_bet in BET_CLASSES and market_rules.check_stake(market, total_bet):
        await run_in_threadpool(market_rules.check_age_stake, context.db, market,
                                player.account_id, total_bet)
    held = None
    if market.min_round_ms:
        held = await run_in_threadpool(pacing.claim, context.db, player.account_id,
                                       idempotency_key, market.min_round_ms)
    try:
        return await _spin(body, context, player, idempotency_key)
    except ServiceError as refused:
        # refused (also closed for maintenance, ADR 0067): nothing played, no pace used
        if held is not None and (refused.status < 500 or refused.code == MAINTENANCE):
            await run_in_threadpool(pacing.release, context.db, held)
        raise


async def _spin(body: SpinCreate, context: Context, player: Principal,
                idempotency_key: str) -> SpinPublic:
    grant = None
    if body.grant_id is not None:  # a free round: checked before any money moves
        grant = await run_in_threadpool(free_rounds.check_before_spin, context.db,
                                        player.account_id, body.grant_id, body.line_bet,
                                        utcnow())
    job = draw.queued_spin(context.settings, context.model, player, body.line_bet,
                           idempotency_key, body.test_draws, draw=False, grant=grant)
    outcome = await context.wallet.spin(job)  # the bet taken, the round drawn and settled
    logs.bind(round_id=outcome.round.id)
    free = None if body.grant_id is None else await run_in_threadpool(_free_round, context,
                                                                      outcome)
    return SpinPublic(round=round_public(outcome.round, details_url(context, outcome.round.id),
                                         payment=outcome.payment,
                                         free=None if free is None else free[1]),
                      balance=outcome.balance,
                      replayed=outcome.replayed,
                      reality_check=reality_check(outcome.reality_check),
                      session_time_left_seconds=play_time_left(player.play_ends_at, utcnow()),
                      free_round=None if free is None else free[0])


def _free_round(context: Context, outcome: SpinOutcome,
                ) -> tuple[FreeRoundPublic, free_rounds.RoundGrant]:
    """A free round's grant after it (from the settlement, or read again for a retry) and
    the grant as the round's recall names it."""
    r = outcome.round
    grant = outcome.grant
    if grant is None and r.grant_id is not None:
        with context.db.read() as session:
            grant = free_rounds.state(session, r.grant_id)
    if grant is None or r.grant_id is None:  # a retry of a key first used for a paid spin
        raise Conflict("this Idempotency-Key was used for a different spin request",
                       code="idempotency_key_reused")
    paid = r.paid_win or 0
    return (FreeRoundPublic(grant_id=grant.id, rounds_left=grant.rounds_left,
                            winnings=grant.winnings, paid_win=paid,
                            withheld=r.total_win - paid),
            free_rounds.RoundGrant(grant.id, grant.grant_ref, grant.campaign_ref, paid,
                                   r.total_win - paid))
