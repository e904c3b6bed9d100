"""The money boundary: the only place where multiples of a bet become euro cents.

The rules core works in multiples of the line bet (line wins, and the Hold & Cash values, which
RULES.md states in total bets but the UPGRADE of a line-bet model raises by one line bet); every
amount a player or the ledger sees passes through here, in
integer cents, with the one rounding rule of the game (€€€ shares round down).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from starfever.engine.symbols import LINE_COUNT, Cents

NO_CENTS: Final = Cents(0)
"""Zero cents (a default of the dataclasses below)."""

JACKPOT_SHARE_BASE = 100
"""A line bet of 100 cents (EUR 1.00) wins 100 % of the pool; 1 cent wins 1 %."""


def total_bet(line_bet: Cents) -> Cents:
    """The total bet of a spin: line bet x 20 fixed lines."""
    return Cents(line_bet * LINE_COUNT)


def line_win(factor: int, line_bet: Cents) -> Cents:
    """A line win of ``factor`` x line bet, in cents."""
    return Cents(factor * line_bet)


def feature_win(multiple: int, line_bet: Cents) -> Cents:
    """An amount of ``multiple`` x total bet (a jackpot of Hold & Cash, the max-win cap), in
    cents."""
    return Cents(multiple * total_bet(line_bet))


def in_line_bets(amount: int, line_bet: Cents) -> Cents:
    """An amount of ``amount`` line bets (a Hold & Cash value or payout), in cents."""
    return Cents(amount * line_bet)


def progressive_share(pool: Cents, line_bet: Cents) -> Cents:
    """What one €€€ line wins: line bet / EUR 1.00 of the pool, rounded down to the cent."""
    return Cents(pool * line_bet // JACKPOT_SHARE_BASE)


ONE_SHARE_PER_SPIN: Final = "one_share_per_spin"
"""The €€€ rule of RULES.md: a spin wins at most one share, of the pool as it stood before."""
EACH_LINE_FROM_THE_REST: Final = "each_line_from_the_rest"
"""The earlier rule (model versions before it was replaced): every €€€ line of a spin wins a
share, each further line from what the earlier ones left. Kept so that rounds played under it
still replay and audit."""
JACKPOT_RULES: Final = (ONE_SHARE_PER_SPIN, EACH_LINE_FROM_THE_REST)


@dataclass(frozen=True, slots=True)
class JackpotAward:
    """What the €€€ lines of one spin win from the pool."""

    win: Cents
    """Cents paid to the player."""
    shares: tuple[Cents, ...]
    """The shares paid, in order: one (or none) under the current rule, one per line under
    the earlier one."""
    pool_left: Cents
    """The pool after the win, before any refill."""
    withheld: Cents = NO_CENTS
    """The part of the shares that the round's max-win cap left no room for: it was not paid
    and stayed in the pool."""


def jackpot_award(pool: Cents, line_bet: Cents, lines: int, rule: str,
                  room: Cents | None = None) -> JackpotAward:
    """The €€€ win of a spin showing ``lines`` €€€ lines against a pool of ``pool`` cents.

    The one home of the share rule: the engine, the simulator's pool replay and the server all
    call it. ``rule`` is the model's ``progressive.jackpot_rule``. ``room``: the cents the
    round's max-win cap leaves for this spin's €€€ (``None``: no cap on it); a share is paid up
    to it, and what it cuts off stays in the pool.
    """
    if rule not in JACKPOT_RULES:
        raise ValueError(f"unknown jackpot rule {rule!r}; known: {', '.join(JACKPOT_RULES)}")
    if room is not None and room < 0:
        raise ValueError(f"room under the cap must not be negative, got {room!r}")
    if lines <= 0:
        return JackpotAward(Cents(0), (), pool)
    count = 1 if rule == ONE_SHARE_PER_SPIN else lines
    shares: list[Cents] = []
    remaining = pool
    withheld = 0
    for _ in range(count):
        share = progressive_share(remaining, line_bet)
        paid = share if room is None else min(share, room - sum(shares))
        withheld += share - paid
        remaining = Cents(remaining - paid)
        shares.append(Cents(paid))
    return JackpotAward(Cents(sum(shares)), tuple(shares), remaining, Cents(withheld))


def pool_refill(pool_left: Cents, seed: Cents) -> Cents:
    """Operator funding that brings the pool back up to its seed after a €€€ win."""
    return Cents(max(0, seed - pool_left))


@dataclass(frozen=True, slots=True)
class JackpotRound:
    """The €€€ wins of one round's spins (base spin, Star Wild respin) and the refills."""

    awards: tuple[JackpotAward, ...]
    """One per spin that showed €€€ lines, in play order."""
    pools_before: tuple[Cents, ...]
    """The pool each of those spins won from."""
    refills: tuple[Cents, ...]
    """Operator funding after each of those spins (the earlier rule refills once, after the
    last)."""
    pool_after: Cents
    """The pool after the round."""

    @property
    def win(self) -> Cents:
        """Everything the round won from the pool."""
        return Cents(sum(a.win for a in self.awards))

    @property
    def refill(self) -> Cents:
        """Everything the operator added."""
        return Cents(sum(self.refills))

    @property
    def withheld(self) -> Cents:
        """What the max-win cap kept in the pool."""
        return Cents(sum(a.withheld for a in self.awards))


def jackpot_round(pool: Cents, line_bet: Cents, lines_per_spin: Sequence[int], seed: Cents,
                  rule: str, room: Cents | None = None) -> JackpotRound:
    """Pay the €€€ lines of a round's spins (``lines_per_spin``: one count per spin, in play
    order) from a pool of ``pool`` cents and refill it to ``seed``.

    Current rule: each spin wins at most one share of the pool as it stood before, and the pool
    is refilled to its seed after every win. Earlier rule: every line wins a share of what the
    lines before it (in the round) left, and the pool is refilled once, at the end.

    ``room``: the cents the round's max-win cap leaves above its game win (``None``: the cap,
    if any, does not hold the €€€); the shares are paid in play order while room is left, and
    what does not fit stays in the pool (``JackpotAward.withheld``).
    """
    awards: list[JackpotAward] = []
    befores: list[Cents] = []
    refills: list[Cents] = []
    for lines in lines_per_spin:
        if lines <= 0:
            continue
        award = jackpot_award(pool, line_bet, lines, rule, room)
        if room is not None:
            room = Cents(room - award.win)
        befores.append(pool)
        awards.append(award)
        pool = award.pool_left
        if rule == ONE_SHARE_PER_SPIN:
            refills.append(pool_refill(pool, seed))
            pool = Cents(pool + refills[-1])
    if awards and rule == EACH_LINE_FROM_THE_REST:
        refills = [Cents(0)] * (len(awards) - 1) + [pool_refill(pool, seed)]
        pool = Cents(pool + refills[-1])
    return JackpotRound(tuple(awards), tuple(befores), tuple(refills), pool)


def progressive_contribution(bet: Cents, rate: Fraction, carry: Fraction) -> tuple[Cents, Fraction]:
    """Split ``bet x rate`` into whole cents for the pool now and the fraction carried on.

    The carry is kept with the pool, so over many spins the pool receives exactly ``rate`` of
    every bet, although each booking is a whole number of cents.
    """
    exact = bet * rate + carry
    whole = exact.numerator // exact.denominator
    return Cents(whole), exact - whole
