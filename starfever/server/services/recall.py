"""Game recall: a player's own rounds, newest first, and one of them in full."""

from __future__ import annotations

from sqlalchemy import select

from starfever.server.db import Database
from starfever.server.models import Round
from starfever.server.services.auth import Principal
from starfever.server.services.errors import NotFound


def list_rounds(db: Database, principal: Principal, limit: int,
                before: int | None) -> list[Round]:
    """The player's rounds, newest first, ``limit`` of them with ids below ``before``."""
    query = select(Round).where(Round.account_id == principal.account_id)
    if before is not None:
        query = query.where(Round.id < before)
    with db.read() as session:
        return list(session.scalars(query.order_by(Round.id.desc()).limit(limit)))


def get_round(db: Database, principal: Principal, round_id: int) -> Round:
    """One of the player's rounds; ``round_not_found`` for unknown ids and other players'."""
    with db.read() as session:
        stored = session.get(Round, round_id)
    if stored is None or stored.account_id != principal.account_id:
        raise NotFound(f"no round {round_id} of yours", code="round_not_found")
    return stored


__all__ = ["get_round", "list_rounds"]
