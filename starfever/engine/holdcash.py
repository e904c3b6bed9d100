"""Hold & Cash, played cell by cell in the order RULES.md fixes.

Values are kept in multiples of the total bet while playing; events carry cents (through the
money boundary) so a client can show them as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class HoldAndCashOutcome:
    """The end of one Hold & Cash feature."""

    multiple: int
    """Total payout in multiples of the total bet."""
    cash: int
    """Sum of held CASH values, in multiples of the total bet."""
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


def play_hold_and_cash(
    coins: list[Cell], weights: HoldAndCashModel, line_bet: Cents, source: RandomSource,
    events: list[Event], *, room: Cents | None = None,
) -> HoldAndCashOutcome:
    """Play the feature from the triggering coins; append its events; return the outcome.

    ``room``: the cents left below the round's max-win cap; the feature ends as soon as the
    held values (cash + Minors + Majors) are worth at least that much."""
    def cents(multiple: int) -> Cents:
        return money.feature_win(multiple, line_bet)

    held: dict[Cell, tuple[str, int]] = {}
    for cell in sorted(coins):
        value = CASH_VALUES[weighted_index(source, weights.coin_values)]
        held[cell] = (CASH, value)
    events.append({
        "type": "hold_and_cash_start",
        "cells": [_cell_json(c, k, v, cents) for c, (k, v) in sorted(held.items())],
        "respins_left": HOLD_AND_CASH_RESPINS,
    })
    def reached() -> bool:
        if room is None:
            return False
        value = sum(v if k == CASH else MINOR_PAYS if k == MINOR else MAJOR_PAYS
                    for k, v in held.values())
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
                value = CASH_VALUES[weighted_index(source, weights.cash_values)]
            if kind in (CASH, MINOR, MAJOR):
                held[cell] = (kind, value)
            else:
                boosters.append((cell, kind))
            landed.append(_cell_json(cell, kind, value, cents))
        booster_events = []
        for cell, kind in boosters:  # reading order, after the new symbols are held
            for target, (held_kind, value) in held.items():
                if held_kind == CASH:
                    held[target] = (CASH, value + 1 if kind == UPGRADE else value * 2)
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
    multiple = (cash + MINOR_PAYS * kinds.count(MINOR) + MAJOR_PAYS * kinds.count(MAJOR)
                + (MEGA_PAYS if mega else 0))
    if mega:
        events.append({"type": "mega", "win": cents(MEGA_PAYS)})
    events.append({
        "type": "hold_and_cash_end", "cash": cents(cash), "minor": kinds.count(MINOR),
        "major": kinds.count(MAJOR), "mega": mega, "win": cents(multiple),
    })
    return HoldAndCashOutcome(multiple=multiple, cash=cash, minors=kinds.count(MINOR),
                              majors=kinds.count(MAJOR), mega=mega, respins=played,
                              capped=reached() and not mega)


def _cell_json(cell: Cell, kind: str, value: int, cents: Callable[[int], Cents]) -> Event:
    out: Event = {"reel": cell[0], "row": cell[1], "kind": kind}
    if kind == CASH:
        out["value"] = int(cents(value))
    return out
