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
    currency: str = "EUR"
    """The session's currency (``sessions.currency``, ADR 0076): its stakes feed that
    currency's pool, and every wallet call of the session names it; it never changes."""


SESSION_REPLACED = "replaced"
"""``sessions.ended_because`` of a session ended by a later one of the same player (a market
with one session per player, ADR 0075)."""
SESSION_PANIC = "panic"
"""``sessions.ended_because`` of a session ended by the player's panic button (ADR 0075)."""


def check_session_live(revoked_at: datetime | None, expires_at: datetime,
                       now: datetime, ended_because: str | None = None) -> None:
    """``invalid_token`` for a logged-out session, ``token_expired`` for an expired one;
    ``session_replaced`` for one a later session of the player ended (one session per player),
    ``panic_button_pressed`` for one the player's panic button ended."""
    if revoked_at is not None and ended_because == SESSION_REPLACED:
        raise Unauthorized("this session ended because the player started another one (one "
                           "session at a time in this market)", code="session_replaced")
    if revoked_at is not None and ended_because == SESSION_PANIC:
        raise Unauthorized("this session ended with the panic button: play is excluded for "
                           "24 hours", code="panic_button_pressed")
    if revoked_at is not None:
        raise Unauthorized("the session was logged out", code="invalid_token")
    if expires_at <= now:
        raise Unauthorized("the bearer token has expired; log in again", code="token_expired")


__all__ = ["SESSION_PANIC", "SESSION_REPLACED", "Principal", "check_session_live"]
