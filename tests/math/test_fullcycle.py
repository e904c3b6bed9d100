"""The full-cycle enumeration against plain enumeration, and against the exact calculator."""

from __future__ import annotations

from itertools import product

import pytest

from starfever.commands import full_cycle_check
from starfever.engine.lines import evaluate_grid
from starfever.engine.model import load_model, model_from_dict
from starfever.engine.round import window
from starfever.math import exact
from starfever.math.fullcycle import full_cycle
from tests.math.test_exact import SMALL


def test_full_cycle_matches_plain_enumeration() -> None:
    model = model_from_dict(SMALL)
    cycle = full_cycle(model)
    wins = squares = hits = jackpots = winning = 0
    coins = [0] * 16
    for stops in product(*(range(len(s)) for s in model.base_reels)):
        ev = evaluate_grid(window(model.base_reels, stops))
        wins += ev.line_factor
        squares += ev.line_factor ** 2
        winning += ev.line_factor > 0
        hits += bool(ev.line_factor or ev.jackpot_lines or ev.star_coins >= 4)
        jackpots += bool(ev.jackpot_lines)
        coins[ev.star_coins] += 1
    assert (cycle.line_win_sum, cycle.line_win_squares, cycle.hits, cycle.jackpots) == (
        wins, squares, hits, jackpots)
    assert list(cycle.coin_counts) == coins
    hist = cycle.line_win_histogram
    assert int(hist.sum()) == winning
    assert sum(k * int(c) for k, c in enumerate(hist)) == wins


@pytest.mark.slow
def test_default_full_cycle_agrees_with_the_calculator() -> None:
    model = load_model("default")
    check = full_cycle_check(model, exact.compute(model))
    assert check["agrees"], check["checks"]
    assert check["combinations"] == 80**3 * 40**2
