"""The game's vocabulary: symbols, paytable, paylines, bet classes.

Everything here restates ``RULES.md`` (and the Austrian game conditions behind it). These are
rules of the game, not tunable numbers: tunable numbers (reel strips, weights) live in the math
model files under ``starfever/models``.
"""

from __future__ import annotations

from typing import Final, NewType

from starfever.engine.errors import InputError

Symbol = str
"""A symbol code as used everywhere (model files, APIs, events, tests), e.g. ``"LEMON"``."""

Cents = NewType("Cents", int)
"""An amount of money in euro cents. Money is never a float."""

Payline = tuple[int, int, int, int, int]
"""The row (0..2) a payline reads on each reel 0..4."""

Window = tuple[tuple[Symbol, ...], ...]
"""What the player sees: ``window[reel][row]``, 5 reels of 3 rows."""

REELS: Final = 5
ROWS: Final = 3
CELLS: Final = REELS * ROWS

LEMON: Final = "LEMON"
CHERRY: Final = "CHERRY"
MELON: Final = "MELON"
BAR: Final = "BAR"
GOLD: Final = "GOLD"
BELL: Final = "BELL"
SEVEN: Final = "SEVEN"
DIAMOND: Final = "DIAMOND"
WILD: Final = "WILD"
MWILD: Final = "MWILD"
COIN: Final = "COIN"
JACKPOT: Final = "JACKPOT"

PAYING_SYMBOLS: Final[tuple[Symbol, ...]] = (
    LEMON, CHERRY, MELON, BAR, GOLD, BELL, SEVEN, DIAMOND,
)
"""Symbols that pay on a line when 3, 4 or 5 of them (or wilds) start at reel 0."""

WILDS: Final[frozenset[Symbol]] = frozenset({WILD, MWILD})
SYMBOLS: Final[tuple[Symbol, ...]] = (*PAYING_SYMBOLS, WILD, MWILD, COIN, JACKPOT)
"""Every symbol code that can appear on a reel, in a fixed order (its index is its number)."""

PAYTABLE: Final[dict[Symbol, tuple[int, int, int]]] = {
    LEMON: (5, 10, 50),
    CHERRY: (5, 10, 50),
    MELON: (5, 20, 75),
    BAR: (5, 25, 75),
    GOLD: (10, 50, 200),
    BELL: (15, 100, 300),
    SEVEN: (20, 150, 400),
    DIAMOND: (25, 200, 600),
    WILD: (25, 200, 600),
}
"""Line win factors for 3, 4 and 5 of a kind, in multiples of the line bet."""

MWILD_MULTIPLIER: Final = 3
"""A line win whose winning run holds a Multiplier Wild is multiplied by this."""

LINES: Final[tuple[Payline, ...]] = (
    (1, 1, 1, 1, 1), (0, 0, 0, 0, 0), (2, 2, 2, 2, 2), (0, 1, 2, 1, 0), (2, 1, 0, 1, 2),
    (1, 2, 2, 2, 1), (1, 0, 0, 0, 1), (2, 2, 1, 0, 0), (0, 0, 1, 2, 2), (2, 1, 1, 1, 0),
    (0, 1, 1, 1, 2), (0, 0, 1, 0, 0), (2, 2, 1, 2, 2), (1, 0, 1, 2, 1), (1, 2, 1, 0, 1),
    (0, 1, 0, 1, 0), (2, 1, 2, 1, 2), (1, 1, 0, 1, 1), (1, 1, 2, 1, 1), (0, 1, 1, 1, 0),
)
"""The 20 fixed paylines; line number n (1..20) is ``LINES[n - 1]``."""

BET_CLASSES: Final[tuple[Cents, ...]] = tuple(
    Cents(c) for c in (1, 2, 3, 4, 5, 10, 25, 50, 75, 100)
)
"""The line bet classes in cents. Total bet = line bet x 20."""

LINE_COUNT: Final = len(LINES)

STAR_WILD_COINS: Final = 4
"""Exactly this many Star Coins after a spin trigger the Star Wild respin."""
HOLD_AND_CASH_COINS: Final = 5
"""This many or more Star Coins after a spin trigger Hold & Cash."""
JACKPOT_REELS: Final = 3
"""JACKPOT counts on reels 0..2 of a line (3 from the left, no wild substitution)."""

# Hold & Cash cells and payouts (multiples of the total bet).
BLANK: Final = "BLANK"
CASH: Final = "CASH"
MINOR: Final = "MINOR"
MAJOR: Final = "MAJOR"
UPGRADE: Final = "UPGRADE"
MULTIPLIER: Final = "MULTIPLIER"
CELL_KINDS: Final[tuple[str, ...]] = (BLANK, CASH, MINOR, MAJOR, UPGRADE, MULTIPLIER)
CASH_VALUES: Final[tuple[int, ...]] = (1, 2, 3, 4, 5)
"""A CASH symbol's value when it lands, in multiples of the total bet."""
MINOR_PAYS: Final = 20
MAJOR_PAYS: Final = 200
MEGA_PAYS: Final = 1000
HOLD_AND_CASH_RESPINS: Final = 3
"""Respins at the start of Hold & Cash, and what the counter resets to."""


class InvalidBet(InputError):
    """A line bet that is not one of the 10 bet classes."""


def check_line_bet(line_bet: int) -> Cents:
    """Return ``line_bet`` as cents if it is a bet class, else raise :class:`InvalidBet`."""
    if type(line_bet) is not int or line_bet not in BET_CLASSES:
        raise InvalidBet(
            f"line bet {line_bet!r} is not a bet class; choose one of "
            f"{', '.join(str(c) for c in BET_CLASSES)} cents"
        )
    return Cents(line_bet)
