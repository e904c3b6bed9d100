"""Liveness and readiness.

- ``/livez``: the process serves requests (nothing else is asked: a liveness probe that
  touches the database restarts healthy servers when the database is down).
- ``/readyz``: *this node* can take bets: not stopping (SIGTERM: from the signal on, through
  the grace period and the drain) and its database takes a
  committed write; ``503`` otherwise. The operator's wallet is every node's: its outage is not
  a reason to pull this node, so ``wallet`` only reports the background probe's last answer
  (``services.wallet_probe``, metric ``starfever_wallet_up``; ADR 0057).
- ``/api/v1/health`` (runs, reads its database, which model) and ``/api/v1/ready`` (the write)
  as before.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import text

from starfever.server.api.deps import ContextDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import (
    ErrorPublic,
    HealthPublic,
    LivePublic,
    ReadyPublic,
    ReadyzPublic,
)
from starfever.server.services import readiness
from starfever.server.services.errors import Unavailable

router = APIRouter(tags=["health"], route_class=RetryOnDisconnect)
probes = APIRouter(tags=["health"], route_class=RetryOnDisconnect)
"""``/livez`` and ``/readyz`` at the root, where probes of load balancers and orchestrators
look for them."""
NOT_READY: dict[int | str, dict[str, Any]] = {503: {
    "model": ErrorPublic,
    "description": "Not ready: draining, or the database takes no writes"}}


@router.get("/health")
def health(context: ContextDep) -> HealthPublic:
    """The server runs and reaches its database."""
    with context.db.read() as session:
        session.execute(text("SELECT 1"))
    return HealthPublic(status="ok", database="ok", model=context.model.name,
                        model_version=context.model.version,
                        test_mode=context.settings.test_mode)


@router.get("/ready", responses={503: {"model": ErrorPublic,
                                       "description": "The database takes no writes"}})
def ready(context: ContextDep) -> ReadyPublic:
    """Ready to take bets: a write to the database was committed just now (``503 not_ready``
    when it failed: a full disk, a read-only database). For load balancers; ``/health`` is the
    liveness check."""
    readiness.ready(context.db)
    return ReadyPublic(status="ready", database="writable")


@probes.get("/livez")
async def livez() -> LivePublic:
    """The process is alive and serves requests (no database asked)."""
    return LivePublic(status="alive")


@probes.get("/readyz", responses=NOT_READY)
def readyz(context: ContextDep, request: Request) -> ReadyzPublic:
    """This node can take bets: not draining and a committed database write. ``wallet`` says
    what the last probe of the operator's wallet found (``answers``, ``down``, ``unknown``
    before the first; ``none`` with the ledger), never asked here and never a reason for 503."""
    drain = request.app.state.drain
    if drain.stopping:
        raise Unavailable("the server is draining (SIGTERM): it takes no new spins" if
                          drain.draining else "the server is stopping (SIGTERM): it still "
                          "serves for its grace period, then drains")
    readiness.ready(context.db)
    return ReadyzPublic(status="ready", database="writable",
                        wallet=request.app.state.wallet_probe.state)
