"""Game recall: the player's own rounds."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from starfever.server.api.convert import details_url, round_public, round_summary
from starfever.server.api.deps import ContextDep, PlayerDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import MAX_ID, RoundPagePublic, RoundPublic
from starfever.server.services import free_rounds, recall, unpaid

router = APIRouter(prefix="/rounds", tags=["rounds"], route_class=RetryOnDisconnect)


@router.get("")
def list_rounds(context: ContextDep, player: PlayerDep,
                limit: Annotated[int, Query(ge=1, le=100)] = 20,
                before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> RoundPagePublic:
    """The player's rounds, newest first; page on with ``before`` = ``next_before``."""
    found = recall.list_rounds(context.db, player, limit, before)
    paid = unpaid.payments_of(context.db, [r.id for r in found])
    free = free_rounds.grants_of_rounds(context.db, found)
    return RoundPagePublic(rounds=[round_summary(r, details_url(context, r.id), payment=paid[r.id],
                                                 free=free.get(r.id)) for r in found],
                           next_before=found[-1].id if len(found) == limit else None)


@router.get("/{round_id}")
def get_round(context: ContextDep, player: PlayerDep,
              round_id: Annotated[int, Path(ge=1, le=MAX_ID)]) -> RoundPublic:
    """One round in full: bet, draws, event log, wins, balances, pool, model, hashes, the
    signed address of its details page, and whether its win was paid (``payment``)."""
    found = recall.get_round(context.db, player, round_id)
    return round_public(found, details_url(context, round_id),
                        payment=unpaid.payments_of(context.db, [found.id])[found.id],
                        free=free_rounds.grants_of_rounds(context.db, [found]).get(found.id))
