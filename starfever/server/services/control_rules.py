"""The operator's controls as pure rules (ADR 0067): no database, no clock, so the spin's
settlement rule (``spin.rule``) and the call book can apply them to what they read in their
own transaction. Their state lives in the database (``services.controls``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from starfever.server.services.errors import Unauthorized, Unavailable

MAINTENANCE = "maintenance"
SESSION_TERMINATED = "session_terminated"


@dataclass(frozen=True, slots=True)
class Maintenance:
    """The game's maintenance switch as read (``since is None``: open)."""

    since: datetime | None
    retry_after_seconds: int = 300


OPEN = Maintenance(since=None)


def closed(maintenance: Maintenance) -> Unavailable:
    """The refusal of anything new while the game is closed: ``503 maintenance`` with its
    ``Retry-After``."""
    return Unavailable("the game is closed for maintenance; nothing was played or changed: "
                       f"try again in {maintenance.retry_after_seconds} s", code=MAINTENANCE,
                       retry_after=maintenance.retry_after_seconds)


def check_open(maintenance: Maintenance) -> None:
    """``503 maintenance`` while the game is closed."""
    if maintenance.since is not None:
        raise closed(maintenance)


def check_not_terminated(terminated_at: datetime | None) -> None:
    """``401 session_terminated`` for a session the operator ended."""
    if terminated_at is not None:
        raise Unauthorized("the operator ended this game session; launch the game again from "
                           "the operator", code=SESSION_TERMINATED)


__all__ = ["MAINTENANCE", "OPEN", "SESSION_TERMINATED", "Maintenance", "check_not_terminated",
           "check_open", "closed"]
