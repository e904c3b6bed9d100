"""Who a request is from, and whether its session still lives: no database, no hashing, no
clock (``now`` is an argument), so the pure settlement rule (``spin.rule``) can check a spin's
session as the batch stood when it was read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from starfever.server.services.errors import Unauthorized


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a valid bearer token belongs to."""

    account_id: int
    """The account."""
    username: str
    """Its name."""
    role: str
    """``player`` or ``operator``."""
    session_id: int
    """The log-in session the token opened."""
    play_ends_at: datetime | None = None
    """Operator mode: when the session's time limit from its launch runs out (``None``: no
    limit); it never changes, so a principal remembered from memory carries it too."""


def check_session_live(revoked_at: datetime | None, expires_at: datetime,
                       now: datetime) -> None:
    """``invalid_token`` for a logged-out session, ``token_expired`` for an expired one."""
    if revoked_at is not None:
        raise Unauthorized("the session was logged out", code="invalid_token")
    if expires_at <= now:
        raise Unauthorized("the bearer token has expired; log in again", code="token_expired")


__all__ = ["Principal", "check_session_live"]
