"""The public €€€ pool."""

from __future__ import annotations

from fastapi import APIRouter

from starfever.server.api.deps import ContextDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import JackpotPublic
from starfever.server.services import jackpot

router = APIRouter(prefix="/jackpot", tags=["jackpot"], route_class=RetryOnDisconnect)


@router.get("")
def pool(context: ContextDep) -> JackpotPublic:
    """The pool every player shares, in cents."""
    view = jackpot.read(context.db)
    model = context.model
    rate = model.contribution_rate
    return JackpotPublic(pool=view.pool if view else model.seed_cents,
                         seed=view.seed if view else model.seed_cents,
                         contribution_rate=f"{rate.numerator}/{rate.denominator}",
                         updated_at=view.updated_at if view else None)
