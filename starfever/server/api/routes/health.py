"""Liveness (``/health``: the server runs and reads its database) and readiness (``/ready``:
the database takes a committed write)."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from starfever.server.api.deps import ContextDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import ErrorPublic, HealthPublic, ReadyPublic
from starfever.server.services import readiness

router = APIRouter(tags=["health"], route_class=RetryOnDisconnect)


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
