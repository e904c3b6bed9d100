"""The one line evaluator: every line win in the project (engine, math, simulator tables) comes
from :func:`evaluate_line`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from starfever.engine.errors import InputError
from starfever.engine.symbols import (
    COIN,
    HOLD_AND_CASH_COINS,
    JACKPOT,
    JACKPOT_REELS,
    LINES,
    MWILD,
    MWILD_MULTIPLIER,
    PAYING_SYMBOLS,
    PAYTABLE,
    REELS,
    ROWS,
    STAR_WILD_COINS,
    SYMBOLS,
    WILD,
    WILDS,
    Symbol,
)


class InvalidGrid(InputError):
    """A grid that is not 5 reels of 3 known symbol codes."""


@dataclass(frozen=True, slots=True)
class LinePay:
    """What one line's symbols pay, before the line bet is applied."""

    symbol: Symbol
    """The symbol the line pays as (``WILD`` for a run of wilds alone)."""
    count: int
    """Length of the winning run from reel 0 (3, 4 or 5)."""
    multiplier: int
    """3 when the winning run holds a Multiplier Wild, else 1."""
    factor: int
    """Paytable factor times multiplier: the win in multiples of the line bet."""


@dataclass(frozen=True, slots=True)
class LineWin:
    """A paying line in a window."""

    line: int
    """Line number, 1..20."""
    pay: LinePay
    """What the line pays."""


@dataclass(frozen=True, slots=True)
class GridEvaluation:
    """Line evaluation of one fixed window (no feature play)."""

    line_wins: tuple[LineWin, ...]
    """Paying lines in line-number order."""
    line_factor: int
    """Sum of all line wins in multiples of the line bet."""
    jackpot_lines: tuple[int, ...]
    """Line numbers with JACKPOT on reels 0, 1 and 2."""
    star_coins: int
    """Number of COIN symbols in the window."""
    feature: str | None
    """``"star_wild"`` (exactly 4 coins), ``"hold_and_cash"`` (5 or more) or ``None``."""


def _run_length(cells: Sequence[Symbol], symbol: Symbol | None) -> tuple[int, bool]:
    """Length of the run from reel 0 that reads as ``symbol`` (``None``: wilds only), and
    whether that run holds a Multiplier Wild."""
    n = 0
    has_mwild = False
    for cell in cells:
        if cell in WILDS:
            has_mwild = has_mwild or cell == MWILD
        elif cell != symbol:
            break
        n += 1
    return n, has_mwild


def evaluate_line(cells: Sequence[Symbol]) -> LinePay | None:
    """The highest pay of one line's 5 cells (reel 0..4), or ``None`` if it pays nothing.

    Wilds substitute for every paying symbol, never for COIN or JACKPOT; each wild is read as
    whichever symbol gives the highest win, and a run of wilds alone pays as WILD. On equal wins
    the wild reading is reported, then the more valuable symbol.
    """
    best: LinePay | None = None
    for symbol in (None, *reversed(PAYING_SYMBOLS)):
        if symbol is not None and cells[0] not in WILDS and cells[0] != symbol:
            continue
        count, has_mwild = _run_length(cells, symbol)
        if count < 3:
            continue
        multiplier = MWILD_MULTIPLIER if has_mwild else 1
        name = WILD if symbol is None else symbol
        factor = PAYTABLE[name][count - 3] * multiplier
        if best is None or factor > best.factor:
            best = LinePay(symbol=name, count=count, multiplier=multiplier, factor=factor)
    return best


def is_jackpot_line(cells: Sequence[Symbol]) -> bool:
    """True when reels 0, 1 and 2 of the line all show JACKPOT (wilds never substitute)."""
    return all(cell == JACKPOT for cell in cells[:JACKPOT_REELS])


def check_grid(grid: object) -> tuple[tuple[Symbol, ...], ...]:
    """Validate a ``grid[reel][row]`` of symbol codes and return it as tuples."""
    if not isinstance(grid, (list, tuple)) or len(grid) != REELS:
        raise InvalidGrid(f"grid must be a list of {REELS} reels, got {grid!r}")
    reels: list[tuple[Symbol, ...]] = []
    for index, reel in enumerate(grid):
        if not isinstance(reel, (list, tuple)) or len(reel) != ROWS:
            raise InvalidGrid(f"reel {index} must be a list of {ROWS} symbols, got {reel!r}")
        for cell in reel:
            if not isinstance(cell, str) or cell not in SYMBOLS:
                raise InvalidGrid(
                    f"unknown symbol {cell!r} on reel {index}; known: {', '.join(SYMBOLS)}"
                )
        reels.append(tuple(reel))
    return tuple(reels)


def feature_for(star_coins: int) -> str | None:
    """The feature a number of Star Coins after a spin triggers."""
    if star_coins == STAR_WILD_COINS:
        return "star_wild"
    if star_coins >= HOLD_AND_CASH_COINS:
        return "hold_and_cash"
    return None


@cache
def _prefix_outcome(first: Symbol, second: Symbol, third: Symbol) -> tuple[bool, bool]:
    """Of a line whose reels 0-2 show these symbols: whether it can pay at all, and whether it
    is a €€€ line. A pay needs a run of 3 from reel 0, so COIN (which nothing substitutes)
    on reels 3 and 4 pays exactly when the line can; the €€€ rule reads reels 0-2 only. At
    most 12^3 prefixes, remembered: most of a spin's 20 lines stop here."""
    return (evaluate_line((first, second, third, COIN, COIN)) is not None,
            is_jackpot_line((first, second, third)))


def evaluate_grid(grid: Sequence[Sequence[Symbol]]) -> GridEvaluation:
    """Evaluate all 20 lines, the €€€ lines and the coin count of one window."""
    wins: list[LineWin] = []
    jackpots: list[int] = []
    first, second, third, fourth, fifth = grid  # ValueError unless 5 reels
    for number, (r0, r1, r2, r3, r4) in enumerate(LINES, start=1):
        can_pay, jackpot = _prefix_outcome(first[r0], second[r1], third[r2])
        if can_pay:
            pay = evaluate_line((first[r0], second[r1], third[r2], fourth[r3], fifth[r4]))
            if pay is not None:
                wins.append(LineWin(line=number, pay=pay))
        if jackpot:
            jackpots.append(number)
    coins = sum(cell == COIN for reel in grid for cell in reel)
    return GridEvaluation(
        line_wins=tuple(wins),
        line_factor=sum(w.pay.factor for w in wins),
        jackpot_lines=tuple(jackpots),
        star_coins=coins,
        feature=feature_for(coins),
    )
