"""The rules of a free-round grant (ADR 0064), pure: no database, no clock (``now`` is an
argument), so the settlement rule (``spin.rule``) and the spin's early check (``free_rounds``)
apply the very same ones.

A grant gives one player ``rounds`` rounds at one ``line_bet`` until ``expires_at``; its
``max_win``, when set, caps what all its rounds together pay. A round may be played on it
while it is the player's, not cancelled, not expired, at its bet, with a round left; each
refusal has its own code, and nothing is played or booked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from starfever.server.services.errors import Conflict, Forbidden, NotFound, Unprocessable

DEFAULT_VALID: Final = timedelta(days=30)
"""How long a grant is valid when its maker says nothing."""
MAX_VALID: Final = timedelta(days=90)
"""The longest a grant may be valid (issue 36)."""
MAX_ROUNDS: Final = 1000
"""The most rounds one grant may give."""

ACTIVE, FINISHED, EXPIRED, CANCELLED = "active", "finished", "expired", "cancelled"
"""A grant's state, derived (:func:`state_of`)."""


@dataclass(slots=True)
class GrantState:
    """A grant as the settlement sees it, locked."""

    id: int
    account_id: int
    line_bet: int
    rounds: int
    rounds_played: int
    winnings: int
    withheld: int
    max_win: int | None
    expires_at: datetime
    cancelled_at: datetime | None
    grant_ref: str
    """The grant's id as the operator knows it (its own, or ``sfg-<id>``)."""
    campaign_ref: str | None
    """The operator's id of its campaign, if any."""

    @property
    def rounds_left(self) -> int:
        return self.rounds - self.rounds_played


def grant_ref(grant_id: int, operator_id: str | None) -> str:
    """A grant's id for the operator: its own id, or Star Fever's ``sfg-<id>`` (a campaign's
    grant, or one made in the back office)."""
    return operator_id if operator_id is not None else f"sfg-{grant_id}"


def state_of(rounds: int, rounds_played: int, expires_at: datetime,
             cancelled_at: datetime | None, now: datetime) -> str:
    """``cancelled``, ``finished`` (every round played), ``expired`` or ``active``."""
    if cancelled_at is not None:
        return CANCELLED
    if rounds_played >= rounds:
        return FINISHED
    if now >= expires_at:
        return EXPIRED
    return ACTIVE


def check_playable(grant: GrantState | None, account_id: int, line_bet: int,
                   now: datetime) -> GrantState:
    """The grant a round of ``account_id`` at ``line_bet`` may be played on, or the refusal:
    ``404 grant_not_found``, ``403 grant_of_another_player``, ``409 grant_cancelled``,
    ``409 grant_expired``, ``422 grant_bet_mismatch``, ``409 grant_used_up``."""
    if grant is None:
        raise NotFound("no such free-round grant", code="grant_not_found")
    if grant.account_id != account_id:
        raise Forbidden("this free-round grant is another player's",
                        code="grant_of_another_player")
    if grant.cancelled_at is not None:
        raise Conflict("this free-round grant was cancelled", code="grant_cancelled")
    if now >= grant.expires_at:
        raise Conflict("this free-round grant has expired", code="grant_expired")
    if line_bet != grant.line_bet:
        raise Unprocessable(f"this free-round grant plays at a line bet of {grant.line_bet} "
                            f"cents, not {line_bet!r}", code="grant_bet_mismatch")
    if grant.rounds_played >= grant.rounds:
        raise Conflict("every round of this free-round grant has been played",
                       code="grant_used_up")
    return grant


@dataclass(frozen=True, slots=True)
class Payout:
    """What a free round pays of its win under its grant's cap."""

    game: int
    """The game part paid (from the house)."""
    jackpot: int
    """The €€€ part paid (from the pool)."""

    @property
    def total(self) -> int:
        return self.game + self.jackpot


def payout(game_win: int, jackpot_win: int, max_win: int | None, winnings: int) -> Payout:
    """The part of a round's win paid under a cap of ``max_win`` on the grant's total, of which
    ``winnings`` were paid before: the game win first, then the €€€ win, up to what is left."""
    if max_win is None:
        return Payout(game_win, jackpot_win)
    left = max(0, max_win - winnings)
    game = min(game_win, left)
    return Payout(game, min(jackpot_win, left - game))


def split_paid(game_win: int, paid_win: int) -> Payout:
    """A stored free round's paid win split as :func:`payout` split it (game part first)."""
    game = min(game_win, paid_win)
    return Payout(game, paid_win - game)


__all__ = ["ACTIVE", "CANCELLED", "DEFAULT_VALID", "EXPIRED", "FINISHED", "MAX_ROUNDS",
           "MAX_VALID", "GrantState", "Payout", "check_playable", "grant_ref", "payout",
           "split_paid", "state_of"]
