"""Hold & Cash, played cell by cell in the order RULES.md fixes.

Values are kept in line bets while playing (a CASH value of 1..5 x total bet is 20..100 line
bets, a MINOR 400): the UPGRADE of a model whose ``upgrade_unit`` is ``line_bet`` adds one line
bet, so only the line bet keeps every value a whole number, and a ``total_bet`` model, whose
values all stay multiples of 20, plays exactly as it did when values were kept in total bets.
Events carry cents (through the money boundary) so a client can show them as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from starfever.engine import money
from starfever.engine.model import HoldAndCashModel
from starfever.engine.rng import RandomSource, weighted_index
from starfever.engine.symbols import (
    BLANK,
    CASH,
    CASH_VALUES,
    CELL_KINDS,
    CELLS,
    HOLD_AND_CASH_RESPINS,
    LINE_COUNT,
    MAJOR,
    MAJOR_PAYS,
    MEGA_PAYS,
    MINOR,
    MINOR_PAYS,
    REELS,
    ROWS,
    UPGRADE,
    Cents,
)

Cell = tuple[int, int]
"""A (reel, row) position."""
Event = dict[str, Any]

CASH_LINE_BETS: tuple[int, ...] = tuple(v * LINE_COUNT for v in CASH_VALUES)
"""The CASH values 1..5 x total bet, in line bets (the order the value weights pick from)."""
JACKPOT_LINE_BETS: dict[str, int] = {MINOR: MINOR_PAYS * LINE_COUNT, MAJOR: MAJOR_PAYS * LINE_COUNT}
"""What a held MINOR or MAJOR is worth, in line bets."""
MEGA_LINE_BETS = MEGA_PAYS * LINE_COUNT
"""The Mega jackpot, in line bets."""


@dataclass(frozen=True, slots=True)
class HoldAndCashOutcome:
    """The end of one Hold & Cash feature."""

    line_bets: int
    """Total payout, in line bets."""
    cash_line_bets: int
    """Sum of held CASH values, in line bets."""
    minors: int
    """MINOR symbols held."""
    majors: int
    """MAJOR symbols held."""
    mega: bool
    """Whether all 15 cells were filled (Mega jackpot)."""
    respins: int
    """Respins played."""
    capped: bool = False
    """Whether the feature ended because the round reached the model's max-win cap."""

    @property
    def multiple(self) -> Fraction:
        """Total payout in total bets (a whole number when the UPGRADE adds total bets)."""
        return Fraction(self.line_bets, LINE_COUNT)

    @property
    def cash(self) -> Fraction:
        """Sum of held CASH values, in total bets."""
        return Fraction(self.cash_line_bets, LINE_COUNT)


def play_hold_and_cash(
    coins: list[Cell], weights: HoldAndCashModel, line_bet: Cents, source: RandomSource,
    events: list[Event], *, room: Cents | None = None,
) -> HoldAndCashOutcome:
    """Play the feature from the triggering coins; append its events; return the outcome.

    ``room``: the cents left below the round's max-win cap; the feature ends as soon as the
    held values (cash + Minors + Majors) are worth at least that much.

    Every value is kept in line bets (:data:`CASH_LINE_BETS`, :data:`JACKPOT_LINE_BETS`); an
    UPGRADE adds ``weights.upgrade_line_bets``."""
    def cents(amount: int) -> Cents:
        return money.in_line_bets(amount, line_bet)

    upgrade = weights.upgrade_line_bets
    held: dict[Cell, tuple[str, int]] = {}
    for cell in sorted(coins):
        value = CASH_LINE_BETS[weighted_index(source, weights.coin_values)]
        held[cell] = (CASH, value)
    events.append({
        "type": "hold_and_cash_start",
        "cells": [_cell_json(c, k, v, cents) for c, (k, v) in sorted(held.items())],
        "respins_left": HOLD_AND_CASH_RESPINS,
    })
    def reached() -> bool:
        if room is None:
            return False
        value = sum(v if k == CASH else JACKPOT_LINE_BETS[k] for k, v in held.values())
        return cents(value) >= room

    respins_left = HOLD_AND_CASH_RESPINS
    played = 0
    while respins_left > 0 and len(held) < CELLS and not reached():
        played += 1
        landed: list[Event] = []
        boosters: list[tuple[Cell, str]] = []
        for cell in ((reel, row) for reel in range(REELS) for row in range(ROWS)):
            if cell in held:
                continue
            kind = CELL_KINDS[weighted_index(source, weights.cell_weights)]
            if kind == BLANK:
                continue
            value = 0
            if kind == CASH:
                value = CASH_LINE_BETS[weighted_index(source, weights.cash_values)]
            if kind in (CASH, MINOR, MAJOR):
                held[cell] = (kind, value)
            else:
                boosters.append((cell, kind))
            landed.append(_cell_json(cell, kind, value, cents))
        booster_events = []
        for cell, kind in boosters:  # reading order, after the new symbols are held
            for target, (held_kind, value) in held.items():
                if held_kind == CASH:
                    held[target] = (CASH, value + upgrade if kind == UPGRADE else value * 2)
            booster_events.append({
                "reel": cell[0], "row": cell[1], "kind": kind,
                "values": [_cell_json(c, k, v, cents) for c, (k, v) in sorted(held.items())
                           if k == CASH],
            })
        respins_left = HOLD_AND_CASH_RESPINS if landed else respins_left - 1
        events.append({
            "type": "respin", "index": played, "landed": landed, "boosters": booster_events,
            "respins_left": respins_left if len(held) < CELLS else 0,
        })
    kinds = [k for k, _ in held.values()]
    cash = sum(v for k, v in held.values() if k == CASH)
    mega = len(held) == CELLS
    win = (cash + JACKPOT_LINE_BETS[MINOR] * kinds.count(MINOR)
           + JACKPOT_LINE_BETS[MAJOR] * kinds.count(MAJOR) + (MEGA_LINE_BETS if mega else 0))
    if mega:
        events.append({"type": "mega", "win": cents(MEGA_LINE_BETS)})
    events.append({
        "type": "hold_and_cash_end", "cash": cents(cash), "minor": kinds.count(MINOR),
        "major": kinds.count(MAJOR), "mega": mega, "win": cents(win),
    })
    return HoldAndCashOutcome(line_bets=win, cash_line_bets=cash, minors=kinds.count(MINOR),
                              majors=kinds.count(MAJOR), mega=mega, respins=played,
                              capped=reached() and not mega)


def _cell_json(cell: Cell, kind: str, value: int, cents: Callable[[int], Cents]) -> Event:
    out: Event = {"reel": cell[0], "row": cell[1], "kind": kind}
    if kind == CASH:
        out["value"] = int(cents(value))
    return out
