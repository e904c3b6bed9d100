"""Liveness and database reachability."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from starfever.server.api.deps import ContextDep
from starfever.server.schemas import HealthPublic

router = APIRouter(tags=["health"])


@router.get("/health")
def health(context: ContextDep) -> HealthPublic:
    """The server runs and reaches its database."""
    with context.db.read() as session:
        session.execute(text("SELECT 1"))
    return HealthPublic(status="ok", database="ok", model=context.model.name,
                        model_version=context.model.version,
                        test_mode=context.settings.test_mode)
