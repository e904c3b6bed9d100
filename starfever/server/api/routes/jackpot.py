"""The public €€€ pool."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from starfever.server.api.deps import ContextDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import JackpotPublic
from starfever.server.services import jackpot
from starfever.server.services.currency import served_currency

router = APIRouter(prefix="/jackpot", tags=["jackpot"], route_class=RetryOnDisconnect)


@router.get("")
def pool(context: ContextDep,
         currency: Annotated[str | None, Query(pattern=r"^[A-Z]{3}$")] = None) -> JackpotPublic:
    """A currency's pool (default: the first served), shared by every player of that
    currency, in its minor units; ``422 currency_not_served`` for one not served."""
    code = served_currency(context.settings, currency)
    view = jackpot.read(context.db, code)
    model = context.model
    rate = model.contribution_rate
    return JackpotPublic(pool=view.pool if view else model.seed_cents,
                         seed=view.seed if view else model.seed_cents, currency=code,
                         contribution_rate=f"{rate.numerator}/{rate.denominator}",
                         updated_at=view.updated_at if view else None)
