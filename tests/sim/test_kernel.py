"""The kernel plays the same rounds as the engine: forced outcomes, and whole streams replayed
draw for draw through ``starfever.engine.round.play_round``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from starfever.engine.model import (
    UPGRADE_LINE_BET,
    UPGRADE_TOTAL_BET,
    UPGRADE_UNITS,
    MathModel,
    load_model,
    model_from_dict,
)
from starfever.engine.round import play_round
from starfever.sim.kernel import ROUND_FIELDS, play_rounds
from starfever.sim.rng import KernelSource, stream_state
from starfever.sim.tables import kernel_tables
from tests.sim.models import hand_made


def _kernel_rounds(model: MathModel, seed: int, rounds: int) -> list[dict[str, int]]:
    state = stream_state(np.random.SeedSequence(seed))
    rows = play_rounds(kernel_tables(model).as_tuple(), state, rounds)
    return [dict(zip(ROUND_FIELDS, (int(x) for x in row), strict=True)) for row in rows]


def _engine_rounds(model: MathModel, seed: int, rounds: int) -> list[dict[str, int]]:
    """The same stream through the engine (line bet 1 cent: cents = line bets)."""
    source = KernelSource(stream_state(np.random.SeedSequence(seed)),
                          spin_lengths=tuple(len(strip) for strip in model.base_reels))
    out = []
    for _ in range(rounds):
        source.start_round()  # the kernel draws the 5 base stops at once
        r = play_round(model, 1, source)
        hold = r.hold_and_cash
        jackpots = [e["phase"] for e in r.events if e["type"] == "jackpot"
                    for _ in e.get("lines", [e["line"]])]
        coins = next(e for e in r.events if e["type"] == "reveal")["grid"]
        out.append({
            "base_pay": r.base_win,
            "base_jackpot_lines": jackpots.count("base"),
            "coins": sum(cell == "COIN" for reel in coins for cell in reel),
            "star_wild_pay": r.star_wild_win,
            "respin_jackpot_lines": jackpots.count("star_wild"),
            "hold_pay": hold.line_bets if hold else 0,
            "minors": hold.minors if hold else 0,
            "majors": hold.majors if hold else 0,
            "mega": int(hold.mega) if hold else 0,
            "respins": hold.respins if hold else 0,
        })
    return out


def test_fifteen_coins_win_the_mega_at_once() -> None:
    model = hand_made([["COIN"] * 3] * 5,
                   coin_values={"1": 0, "2": 0, "3": 0, "4": 0, "5": 1})
    for outcome in _kernel_rounds(model, 1, 50):
        assert outcome == {**dict.fromkeys(ROUND_FIELDS, 0), "coins": 15,
                           "hold_pay": 20 * (15 * 5 + 1000), "mega": 1}


def test_star_wild_stack_becomes_multiplier_wilds() -> None:
    # reel 0 shows 3 coins (MWILDs), reel 1 one coin (WILD); the respin shows LEMON everywhere
    # else, so every line reads MWILD + lemons: 5 LEMON (50) x 3 = 150 line bets, on 20 lines.
    lemons = [["LEMON"] * 3] * 5
    model = hand_made([["COIN"] * 3, ["COIN", "BAR", "BAR"], *[["CHERRY"] * 3] * 3], lemons)
    for outcome in _kernel_rounds(model, 2, 50):
        assert outcome["coins"] == 4
        assert outcome["base_pay"] == 0
        assert outcome["star_wild_pay"] == 20 * 150


@pytest.mark.parametrize("unit", UPGRADE_UNITS)
def test_boosters_act_after_the_new_symbols_are_held(unit: str) -> None:
    # 5 coins worth 1; every respin cell lands MULTIPLIER or CASH 1 -> compare with the engine
    model = hand_made([["COIN"] * 3, ["COIN", "BAR", "BAR"], ["COIN", "BAR", "BAR"],
                       ["BAR"] * 3, ["BAR"] * 3], upgrade_unit=unit,
                      cell_weights={"BLANK": 6, "CASH": 2, "MINOR": 1, "MAJOR": 1, "UPGRADE": 1,
                                    "MULTIPLIER": 1},
                      coin_values={"1": 1, "2": 0, "3": 0, "4": 0, "5": 0})
    kernel = _kernel_rounds(model, 3, 400)
    assert kernel == _engine_rounds(model, 3, 400)
    assert all(k["coins"] == 5 and k["hold_pay"] >= 100 for k in kernel)
    assert any(k["mega"] for k in kernel)
    # a line-bet UPGRADE leaves values off the grid of whole total bets, a total-bet one never
    off_grid = [k["hold_pay"] % 20 for k in kernel if k["hold_pay"] % 20]
    assert bool(off_grid) == (unit == UPGRADE_LINE_BET)


def test_default_model_stream_replays_through_the_engine() -> None:
    kernel = _kernel_rounds(load_model("default"), 4, 20_000)
    assert kernel == _engine_rounds(load_model("default"), 4, 20_000)
    assert sum(k["star_wild_pay"] > 0 for k in kernel) > 100
    assert sum(k["hold_pay"] > 0 for k in kernel) > 50


@pytest.mark.parametrize(("seed", "unit"), [(5, UPGRADE_TOTAL_BET), (6, UPGRADE_TOTAL_BET),
                                            (7, UPGRADE_LINE_BET), (8, UPGRADE_LINE_BET)])
def test_feature_heavy_model_replays_through_the_engine(seed: int, unit: str) -> None:
    # many coins, stacked coins for MWILDs, and JACKPOTs on the respin reels
    base = [
        ["COIN", "COIN", "COIN", "LEMON", "JACKPOT", "WILD", "BELL", "COIN", "SEVEN", "BAR"],
        ["COIN", "JACKPOT", "LEMON", "COIN", "WILD", "COIN", "BELL", "DIAMOND", "BAR"],
        ["JACKPOT", "COIN", "COIN", "COIN", "WILD", "LEMON", "SEVEN", "BELL"],
        ["COIN", "LEMON", "WILD", "BAR", "BELL", "COIN", "SEVEN"],
        ["COIN", "COIN", "COIN", "WILD", "LEMON", "DIAMOND"],
    ]
    star_wild = [["JACKPOT", "LEMON", "WILD", "BELL", "SEVEN"]] * 3 + [
        ["LEMON", "WILD", "BELL", "SEVEN", "BAR"]] * 2
    model = hand_made(base, star_wild, upgrade_unit=unit, cell_weights={
        "BLANK": 30, "CASH": 6, "MINOR": 2, "MAJOR": 1, "UPGRADE": 2, "MULTIPLIER": 2})
    kernel = _kernel_rounds(model, seed, 3_000)
    assert kernel == _engine_rounds(model, seed, 3_000)
    assert sum(k["coins"] == 4 for k in kernel) > 100
    assert sum(k["respin_jackpot_lines"] for k in kernel) > 0
    assert sum(k["mega"] for k in kernel) > 0


@pytest.mark.parametrize("unit", UPGRADE_UNITS)
def test_a_capped_model_ends_hold_and_cash_at_the_same_draw_as_the_engine(unit: str) -> None:
    """max_win_x: the feature ends once the held values reach the cap, in the kernel as in the
    engine (same draws, same respins), and the round's game win stops at the cap."""
    base = [["COIN", "COIN", "COIN", "LEMON", "WILD", "BELL"]] * 5
    data: dict[str, Any] = hand_made(base, upgrade_unit=unit, cell_weights={
        "BLANK": 12, "CASH": 6, "MINOR": 1, "MAJOR": 2, "UPGRADE": 1, "MULTIPLIER": 6}).to_dict()
    uncapped = model_from_dict(data)
    data["max_win_x"] = 1800
    capped = model_from_dict(data)
    kernel = _kernel_rounds(capped, 9, 400)
    assert kernel == _engine_rounds(capped, 9, 400)
    free = _kernel_rounds(uncapped, 9, 400)
    reached = [k["hold_pay"] for k in kernel if k["hold_pay"] >= 20 * 1800]
    assert len(reached) > 20  # the cap ended these features
    # ended at the first respin at or above the cap: far below where uncapped features go
    assert max(reached) < max(f["hold_pay"] for f in free) / 10
    source = KernelSource(stream_state(np.random.SeedSequence(9)),
                          spin_lengths=tuple(len(strip) for strip in capped.base_reels))
    for _ in range(400):
        source.start_round()
        result = play_round(capped, 5, source)
        game = result.total_win - result.progressive_win
        assert game <= 1800 * result.total_bet
