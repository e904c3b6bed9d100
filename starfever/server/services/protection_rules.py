"""The protection rules that need no database (``protection`` keeps those that do): a
player's age, a running self-exclusion, the reality check. ``now`` is an argument, so the pure
settlement rule (``spin.rule``) and a test apply them to plain values at any instant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from starfever.server.services.errors import Conflict, Forbidden

if TYPE_CHECKING:
    from starfever.server.settings import Settings

ADULT_AGE = 18
"""Players are admitted from this age (RULES.md, "Players")."""


def age_on(birth: date, day: date) -> int:
    """Whole years from ``birth`` to ``day``."""
    return day.year - birth.year - ((day.month, day.day) < (birth.month, birth.day))


@dataclass(frozen=True, slots=True)
class RealityCheck:
    """What the reality check says now."""

    due: bool
    elapsed_seconds: int
    """Seconds since the player's play period began."""
    net_result: int
    """Wins minus bets of the play period's rounds, in cents."""
    interval_seconds: int
    next_due_at: datetime


def check_adult(birth: date | None, now: datetime, action: str) -> None:
    """``403 age_unknown`` without a birth date, ``403 under_age`` under :data:`ADULT_AGE`."""
    if birth is None:
        raise Forbidden(f"the player's age is not known: {action} refused until a birth date "
                        "is on record", code="age_unknown")
    if age_on(birth, now.date()) < ADULT_AGE:
        raise Forbidden(f"players must be {ADULT_AGE} or older: {action} refused",
                        code="under_age")


def check_exclusion(excluded_until: datetime | None, now: datetime, action: str) -> None:
    """``Forbidden`` ``self_excluded`` while a self-exclusion (``excluded_until``) runs."""
    if excluded_until is not None and excluded_until > now:
        raise Forbidden(f"self-excluded until {excluded_until.isoformat()}: "
                        f"{action} refused", code="self_excluded")


def check_reality_acknowledged(check: RealityCheck) -> None:
    """``409 reality_check_due`` while the session's reality check waits to be acknowledged:
    play stops until the player has seen it (``POST /reality-check/acknowledge``)."""
    if check.due:
        raise Conflict("the reality check is due: acknowledge it (POST "
                       "/api/v1/reality-check/acknowledge) to play on",
                       code="reality_check_due")


def interval_of(settings: Settings, chosen_seconds: int | None) -> int:
    """The player's reality-check interval in seconds: the one their launch set (operator
    mode, ``accounts.reality_check_seconds``), else the server's."""
    return settings.reality_check_seconds if chosen_seconds is None else chosen_seconds


def reality_check_of(settings: Settings, started_at: datetime | None,
                     reality_check_at: datetime | None, net_result: int,
                     now: datetime, chosen_seconds: int | None) -> RealityCheck:
    """The reality check of a player with these clock fields (a clock not started yet, from
    before migration 0004, counts from now) and this chosen interval (``None``: the
    server's, :func:`interval_of`)."""
    seconds = interval_of(settings, chosen_seconds)
    next_due = (reality_check_at or now) + timedelta(seconds=seconds)
    return RealityCheck(due=now >= next_due,
                        elapsed_seconds=int((now - (started_at or now)).total_seconds()),
                        net_result=net_result, interval_seconds=seconds, next_due_at=next_due)


def check_play_time(play_ends_at: datetime | None, now: datetime) -> None:
    """``403 session_time_limit_reached`` once the session's time limit (the launch's
    ``session_time_limit_seconds``) has run out: no new spin in this session. A spin taken
    before it (its debit recorded) still finishes and is credited."""
    if play_ends_at is not None and now >= play_ends_at:
        raise Forbidden(f"the session's time limit ran out at {play_ends_at.isoformat()}: no "
                        "more spins in this session (launch the game again from the operator)",
                        code="session_time_limit_reached")


def play_time_left(play_ends_at: datetime | None, now: datetime) -> int | None:
    """Whole seconds left of the session's time limit (0 once reached; ``None``: no limit)."""
    if play_ends_at is None:
        return None
    return max(0, int((play_ends_at - now).total_seconds()))


__all__ = ["ADULT_AGE", "RealityCheck", "age_on", "check_adult", "check_exclusion",
           "check_play_time", "check_reality_acknowledged", "interval_of", "play_time_left",
           "reality_check_of"]
