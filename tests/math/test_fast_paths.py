"""The fast ways ``starfever rtp`` computes its figures (ADR 0023) give what the direct ways
give: the same integers for the base and respin counts over head states, the same rationals
for the summed Hold & Cash solver, the same payout law (to float rounding) for the grouped
DP. The direct ways are themselves checked against brute force and the engine elsewhere
(test_exact, test_distribution)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from starfever.engine.model import UPGRADE_LINE_BET, HoldAndCashModel, load_model, model_from_dict
from starfever.math import cycles
from starfever.math.distribution import _layout_wilds
from starfever.math.holdcash import HoldAndCashSolver, StepwiseHoldAndCashSolver
from starfever.math.holdcash_law import payout_laws
from tests.math.test_exact import SMALL_STAR

# many boosters, Minors and Majors: every kind of landing is likely, so every group is used
RICH = HoldAndCashModel(cell_weights=(30, 6, 1, 1, 2, 1), coin_values=(4, 3, 2, 1, 1),
                        cash_values=(5, 3, 1, 1, 1))
RICH_LINE_BET = replace(RICH, upgrade_unit=UPGRADE_LINE_BET)
"""The same, an UPGRADE adding 1 x line bet (the DP's cells are line bets)."""


def _same_joint(a: cycles.BaseJoint, b: cycles.BaseJoint) -> None:
    assert a.layouts == b.layouts and a.combinations == b.combinations
    assert np.array_equal(a.histogram, b.histogram)
    assert np.array_equal(a.jackpots, b.jackpots)
    assert np.array_equal(a.jackpot_wins, b.jackpot_wins)


def test_head_classes_pay_as_the_line_table() -> None:
    classes, pays = cycles.head_classes()
    from starfever.math.tables import line_pay_table

    table = line_pay_table()
    assert np.array_equal(pays[classes], table)  # [a, b, c] -> class -> pays over (d, e)
    assert not pays[0].any() and len(pays) == len(np.unique(pays.reshape(len(pays), -1), axis=0))


def test_counts_over_head_states_equal_the_direct_walk_on_a_small_model() -> None:
    model = model_from_dict(SMALL_STAR)
    joint = cycles.base_joint(model)
    _same_joint(joint, cycles.base_joint(model, direct=True))
    assert joint.layouts
    for layout in joint.layouts:
        wilds = _layout_wilds(layout)
        assert np.array_equal(cycles.respin_histogram(model, wilds),
                              cycles.respin_histogram(model, wilds, direct=True)), layout


@pytest.mark.slow
def test_counts_over_head_states_equal_the_direct_walk_on_the_default_model() -> None:
    """Seconds: all 819,200,000 base combinations both ways, and every 25th respin layout."""
    model = load_model("default")
    joint = cycles.base_joint(model)
    _same_joint(joint, cycles.base_joint(model, direct=True))
    for layout in joint.layouts[::25]:
        wilds = _layout_wilds(layout)
        assert np.array_equal(cycles.respin_histogram(model, wilds),
                              cycles.respin_histogram(model, wilds, direct=True)), layout


@pytest.mark.parametrize("weights", [
    RICH, RICH_LINE_BET,
    # the shipped weights: seconds more of rationals, the same code (the full suite, ADR 0045)
    pytest.param(load_model("default").hold_and_cash, marks=pytest.mark.slow)],
    ids=["rich", "rich-line-bet", "default"])
def test_the_summed_solver_gives_the_stepwise_rationals(weights: HoldAndCashModel) -> None:
    """Exact equality of every moment for every trigger count (and floats to 1e-12)."""
    for exact in (True, False):
        fast = HoldAndCashSolver(weights, exact=exact)
        slow = StepwiseHoldAndCashSolver(weights, exact=exact)
        for coins in (5, 6, 9, 14, 15):
            a, b = fast.feature(coins), slow.feature(coins)
            if exact:
                assert a == b, coins
            else:
                for x, y in zip((a.mean, a.second, a.mega, a.minors, a.majors),
                                (b.mean, b.second, b.mega, b.minors, b.majors), strict=True):
                    assert abs(x - y) <= 1e-12 * abs(y) + 1e-300, coins


@pytest.mark.parametrize("weights, coins", [(RICH, (9, 12)), (RICH_LINE_BET, (12,)),
                                            (load_model("default").hold_and_cash, (11, 13))],
                         ids=["rich", "rich-line-bet", "default"])
def test_the_grouped_payout_dp_gives_the_landing_by_landing_law(
        weights: HoldAndCashModel, coins: tuple[int, ...]) -> None:
    fast = payout_laws(weights, cap=2500, coins=coins)
    slow = payout_laws(weights, cap=2500, coins=coins, direct=True)
    for n in coins:
        a, b = fast[n], slow[n]
        assert a.probabilities.shape == b.probabilities.shape
        assert np.allclose(a.probabilities, b.probabilities, rtol=1e-12, atol=1e-300)
        assert a.above_cap == pytest.approx(b.above_cap, rel=1e-9, abs=1e-300)
        assert a.mega == pytest.approx(b.mega, rel=1e-12)
        assert a.probabilities.sum() + a.above_cap == pytest.approx(1.0, abs=1e-12)
