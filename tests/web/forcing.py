"""Draw lists that force a round's outcome on a test-mode server (``test_draws``).

The engine takes every random decision as one ``randbelow(n)`` in a fixed order (ADR 0001): 5 base
stops; then 5 Star Wild respin stops, or one draw per coin value and, per Hold & Cash respin, one
draw per empty cell in reading order plus one per CASH value. Every list built here is checked by
replaying it through the engine before a test sends it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from starfever.engine.lines import GridEvaluation, evaluate_grid
from starfever.engine.model import MathModel
from starfever.engine.round import RoundResult, replay_round, window
from starfever.engine.symbols import CASH, CASH_VALUES, CELL_KINDS, CELLS, HOLD_AND_CASH_RESPINS

Cell = tuple[int, int]
Landing = Sequence[tuple[str, int]]
"""What lands in one Hold & Cash respin, (kind, cash value in x total bet or 0) per item, placed
on the first empty cells in reading order (blanks elsewhere)."""


def weighted_draw(weights: Sequence[int], index: int) -> int:
    """The draw that makes ``weighted_index`` pick ``index``."""
    return sum(weights[:index])


def find_stops(strips: Sequence[Sequence[str]],
               accept: Callable[[list[int], GridEvaluation], bool],
               fixed: Mapping[int, int] | None = None, tries: int = 200_000) -> list[int]:
    """Base stops (some reels ``fixed``) whose window the engine evaluates as ``accept``-able."""
    rng = random.Random(7)
    fixed = dict(fixed or {})
    for _ in range(tries):
        stops = [fixed.get(r, rng.randrange(len(s))) for r, s in enumerate(strips)]
        if accept(stops, evaluate_grid(window(strips, stops))):
            return stops
    raise AssertionError("no stops found")


def checked(model: MathModel, line_bet: int, draws: list[int], pool: int) -> RoundResult:
    """Replay ``draws`` through the engine (it refuses missing or left-over draws)."""
    return replay_round(model, line_bet, draws, pool=pool)


def line_win_draws(model: MathModel) -> list[int]:
    """A plain spin with at least two paying lines and no feature."""
    return find_stops(model.base_reels, lambda _s, e: e.feature is None
                      and len(e.line_wins) >= 2 and not e.jackpot_lines)


def no_win_draws(model: MathModel) -> list[int]:
    """A spin that pays nothing."""
    return find_stops(model.base_reels, lambda _s, e: e.feature is None and not e.line_wins
                      and not e.jackpot_lines)


def star_wild_draws(model: MathModel) -> list[int]:
    """Star Wild with three stacked coins on reel 1 (Multiplier Wilds) and a paying respin."""
    coin_stack = next(i for i in range(len(model.base_reels[1]))
                      if all(model.base_reels[1][(i + k) % len(model.base_reels[1])] == "COIN"
                             for k in range(3)))
    base = find_stops(model.base_reels, lambda _s, e: e.feature == "star_wild",
                      fixed={1: coin_stack})
    rng = random.Random(11)
    for _ in range(50_000):
        respin = [rng.randrange(len(s)) for s in model.star_wild_reels]
        result = replay_round(model, 1, [*base, *respin])
        if result.star_wild_win > 0 and not result.progressive_win:
            return [*base, *respin]
    raise AssertionError("no paying respin found")


def hold_and_cash_draws(model: MathModel, coin_values: Sequence[int],
                        respins: Sequence[Landing], *,
                        respins_played: int | None = None) -> list[int]:
    """Hold & Cash from a base spin with 5+ coins: the coins get ``coin_values`` (x total bet)
    and respin n lands ``respins[n]`` (blank respins after the list). ``respins_played``: the
    feature ends after that many respins (a capped model ends it when the held values reach
    the cap)."""
    base = find_stops(model.base_reels, lambda _s, e: e.feature == "hold_and_cash"
                      and e.star_coins == len(coin_values) and not e.jackpot_lines)
    grid = window(model.base_reels, base)
    hc = model.hold_and_cash
    draws = list(base)
    held: set[Cell] = set()
    for reel in range(5):
        for row in range(3):
            if grid[reel][row] == "COIN":
                held.add((reel, row))
    for value in coin_values:
        draws.append(weighted_draw(hc.coin_values, CASH_VALUES.index(value)))
    left = HOLD_AND_CASH_RESPINS
    n = 0
    while left > 0 and len(held) < CELLS and (respins_played is None or n < respins_played):
        landing = list(respins[n]) if n < len(respins) else []
        n += 1
        empty = [(reel, row) for reel in range(5) for row in range(3) if (reel, row) not in held]
        placed = dict(zip(empty, landing, strict=False))
        for cell in empty:
            kind, value = placed.get(cell, ("BLANK", 0))
            draws.append(weighted_draw(hc.cell_weights, CELL_KINDS.index(kind)))
            if kind == CASH:
                draws.append(weighted_draw(hc.cash_values, CASH_VALUES.index(value)))
            if kind in (CASH, "MINOR", "MAJOR"):
                held.add(cell)
        left = HOLD_AND_CASH_RESPINS if landing else left - 1
    return draws


def jackpot_draws(model: MathModel) -> list[int]:
    """€€€ on reels 0-2 of the middle line (line 1), nothing else special."""
    fixed = {r: (model.base_reels[r].index("JACKPOT") - 1) % len(model.base_reels[r])
             for r in range(3)}
    return find_stops(model.base_reels, lambda _s, e: e.feature is None and bool(e.jackpot_lines),
                      fixed=fixed)


def capped_hold_and_cash_draws(model: MathModel) -> list[int]:
    """Hold & Cash on a model with ``max_win_x``: 5 coins of 5 x total bet and a MULTIPLIER
    in every respin, until the held values pass the cap (the engine ends the feature there
    and logs ``max_win``); the held values are then worth more than the round pays."""
    for played in range(1, 12):
        draws = hold_and_cash_draws(model, [5] * 5, [[("MULTIPLIER", 0)]] * played,
                                    respins_played=played)
        try:
            result = replay_round(model, 1, draws)
        except ValueError:  # the feature did not end there: one more respin
            continue
        if any(e["type"] == "max_win" for e in result.events):
            return draws
    raise AssertionError("no capped Hold & Cash found")
