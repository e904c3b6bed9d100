"""The money boundary: the only place where multiples of a bet become euro cents.

The rules core works in multiples (line wins in multiples of the line bet, Hold & Cash values in
multiples of the total bet); every amount a player or the ledger sees passes through here, in
integer cents, with the one rounding rule of the game (€€€ shares round down).
"""

from __future__ import annotations

from fractions import Fraction

from starfever.engine.symbols import LINE_COUNT, Cents

JACKPOT_SHARE_BASE = 100
"""A line bet of 100 cents (EUR 1.00) wins 100 % of the pool; 1 cent wins 1 %."""


def total_bet(line_bet: Cents) -> Cents:
    """The total bet of a spin: line bet x 20 fixed lines."""
    return Cents(line_bet * LINE_COUNT)


def line_win(factor: int, line_bet: Cents) -> Cents:
    """A line win of ``factor`` x line bet, in cents."""
    return Cents(factor * line_bet)


def feature_win(multiple: int, line_bet: Cents) -> Cents:
    """A Hold & Cash amount of ``multiple`` x total bet, in cents."""
    return Cents(multiple * total_bet(line_bet))


def progressive_share(pool: Cents, line_bet: Cents) -> Cents:
    """What one €€€ line wins: line bet / EUR 1.00 of the pool, rounded down to the cent."""
    return Cents(pool * line_bet // JACKPOT_SHARE_BASE)


def progressive_contribution(bet: Cents, rate: Fraction, carry: Fraction) -> tuple[Cents, Fraction]:
    """Split ``bet x rate`` into whole cents for the pool now and the fraction carried on.

    The carry is kept with the pool, so over many spins the pool receives exactly ``rate`` of
    every bet, although each booking is a whole number of cents.
    """
    exact = bet * rate + carry
    whole = exact.numerator // exact.denominator
    return Cents(whole), exact - whole
