"""The exact maths under both UPGRADE units (``hold_and_cash.upgrade_unit``): a model solved on
paper, a literal cell-by-cell enumeration of the rules against the payout DP, the rational
moments against the DP's law, and the shipped default at 95.50 % under the line-bet UPGRADE."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from starfever.engine.model import (
    UPGRADE_LINE_BET,
    UPGRADE_TOTAL_BET,
    HoldAndCashModel,
    load_model,
)
from starfever.engine.symbols import BET_CLASSES, CASH_VALUES, CELLS
from starfever.math import exact
from starfever.math.figures import shipped_path
from starfever.math.figures_format import Figures
from starfever.math.holdcash import HoldAndCashSolver, StepwiseHoldAndCashSolver
from starfever.math.holdcash_law import payout_laws

F = Fraction
UNITS = (UPGRADE_LINE_BET, UPGRADE_TOTAL_BET)
STEP = {UPGRADE_LINE_BET: F(1, 20), UPGRADE_TOTAL_BET: F(1)}
"""What one UPGRADE adds, in total bets (RULES.md)."""


@pytest.mark.parametrize("unit", UNITS)
def test_tiny_model_by_hand(unit: str) -> None:
    """docs/math.md's model solved on paper: 14 coins worth 1, one empty cell landing BLANK 1/2,
    CASH (1) 1/4, UPGRADE 1/4; U upgrades before the end (E[U] = 7/9, E[U^2] = 161/81), Mega
    with probability 7/9 independently of U. Payout 14 + 14 u U + 1001 M, u the step."""
    tiny = HoldAndCashModel(cell_weights=(2, 1, 0, 0, 1, 0), coin_values=(1, 0, 0, 0, 0),
                            cash_values=(1, 0, 0, 0, 0), upgrade_unit=unit)
    u = STEP[unit]
    e_u, e_u2, e_m = F(7, 9), F(161, 81), F(7, 9)
    moments = HoldAndCashSolver(tiny).feature(14)
    assert moments.mean == 14 + 14 * u * e_u + 1001 * e_m
    assert moments.second == (196 * (1 + 2 * u * e_u + u * u * e_u2)
                              + 2 * 1001 * 14 * (1 + u * e_u) * e_m + 1001 ** 2 * e_m)
    assert moments.mega == e_m


# two empty cells: boosters can land together, so their reading order matters; few blanks,
# so that most features end (both cells held) within the enumerated respins
SMALL = HoldAndCashModel(cell_weights=(1, 3, 1, 1, 2, 2), coin_values=(1, 0, 0, 0, 0),
                         cash_values=(0, 1, 0, 0, 0), upgrade_unit=UPGRADE_LINE_BET)
DEPTH = 6


def _brute_force(weights: HoldAndCashModel, coins: int) -> tuple[dict[int, float], float]:
    """The feature played by the rules' text, cell by cell, every outcome enumerated for at
    most ``DEPTH`` respins: P(payout = k line bets) for the features that ended by then, and
    the mass of those that had not. Held values are kept per cell, in line bets."""
    step = 1 if weights.upgrade_unit == UPGRADE_LINE_BET else 20
    total = sum(weights.cell_weights)
    kinds = ("BLANK", "CASH", "MINOR", "MAJOR", "UPGRADE", "MULTIPLIER")
    p_kind = {k: w / total for k, w in zip(kinds, weights.cell_weights, strict=True)}
    cash_total = sum(weights.cash_values)
    p_cash = {20 * v: w / cash_total for v, w in zip(CASH_VALUES, weights.cash_values,
                                                      strict=True) if w}
    empty_cells = tuple(range(coins, CELLS))  # which cells are empty does not matter

    @cache
    def landings(cells: tuple[int, ...]) -> list[tuple[float, tuple[tuple[str, int], ...]]]:
        if not cells:
            return [(1.0, ())]
        out = []
        for p_rest, rest in landings(cells[1:]):
            for kind, p in p_kind.items():
                if not p:
                    continue
                if kind == "CASH":
                    out += [(p * q * p_rest, ((kind, v), *rest)) for v, q in p_cash.items()]
                else:
                    out.append((p * p_rest, ((kind, 0), *rest)))
        return out

    @cache
    def play(values: tuple[int, ...], minors: int, majors: int, empty: tuple[int, ...],
             counter: int, depth: int) -> tuple[tuple[tuple[int, float], ...], float]:
        """(payout, probability) of the ends, and the mass still playing at the depth."""
        if not empty:  # all 15 held: Mega
            pay = sum(values) + 20 * (20 * minors + 200 * majors + 1000)
            return ((pay, 1.0),), 0.0
        if counter == 0:
            return ((sum(values) + 20 * (20 * minors + 200 * majors), 1.0),), 0.0
        if depth == 0:
            return (), 1.0
        ends: dict[int, float] = {}
        open_mass = 0.0
        for p, landing in landings(empty):
            held = list(values)
            m1 = sum(1 for kind, _ in landing if kind == "MINOR")
            m2 = sum(1 for kind, _ in landing if kind == "MAJOR")
            held += [v for kind, v in landing if kind == "CASH"]  # held first
            for kind, _ in landing:  # then the boosters, in reading order
                if kind == "UPGRADE":
                    held = [v + step for v in held]
                elif kind == "MULTIPLIER":
                    held = [2 * v for v in held]
            new = any(kind != "BLANK" for kind, _ in landing)
            still = tuple(c for c, (kind, _) in zip(empty, landing, strict=True)
                          if kind in ("BLANK", "UPGRADE", "MULTIPLIER"))
            sub_ends, sub_open = play(tuple(sorted(held)), minors + m1, majors + m2, still,
                                      3 if new else counter - 1, depth - 1)
            for pay, q in sub_ends:
                ends[pay] = ends.get(pay, 0.0) + p * q
            open_mass += p * sub_open
        return tuple(sorted(ends.items())), open_mass

    coin_total = sum(weights.coin_values)
    starts: dict[tuple[int, ...], float] = {(): 1.0}
    for _ in range(coins):
        grown: dict[tuple[int, ...], float] = {}
        for held, p in starts.items():
            for v, w in zip(CASH_VALUES, weights.coin_values, strict=True):
                if w:
                    key = tuple(sorted((*held, 20 * v)))
                    grown[key] = grown.get(key, 0.0) + p * w / coin_total
        starts = grown
    law: dict[int, float] = {}
    unfinished = 0.0
    for held, p in starts.items():
        ends, still_open = play(held, 0, 0, empty_cells, 3, DEPTH)
        for pay, q in ends:
            law[pay] = law.get(pay, 0.0) + p * q
        unfinished += p * still_open
    return law, unfinished


@pytest.mark.parametrize("unit", UNITS)
def test_payout_dp_against_the_rules_played_cell_by_cell(unit: str) -> None:
    """Every payout the enumeration reaches has at most the DP's probability, and the DP's
    excess over it adds up to the mass still playing at the depth (to float rounding): a
    payout put where the rules do not put it (a wrong UPGRADE step, a wrong booster order)
    would break one or the other."""
    weights = replace(SMALL, upgrade_unit=unit)
    coins = 13
    brute, unfinished = _brute_force(weights, coins)
    law = payout_laws(weights, cap=4000, coins=(coins,), threads=1)[coins]
    assert law.unit == (20 if unit == UPGRADE_LINE_BET else 1)
    assert 0.001 < unfinished < 0.2  # the test means something, and the depth bites
    per_cell = 20 // law.unit
    top = law.cap * law.unit  # payouts up to the cap are exact in the DP; above, pooled
    beyond = 0.0
    for pay, p in brute.items():
        assert pay % per_cell == 0, pay
        if pay // per_cell > top:
            beyond += p
            continue
        dp = float(law.probabilities[pay // per_cell])
        assert p <= dp + 1e-12, (pay, p, dp)
    assert beyond <= float(law.probabilities[top + 1:].sum()) + law.above_cap + 1e-12
    excess = float(law.probabilities.sum()) + law.above_cap - sum(brute.values())
    assert excess == pytest.approx(unfinished, abs=1e-12)


RICH = HoldAndCashModel(cell_weights=(30, 6, 1, 1, 2, 1), coin_values=(4, 3, 2, 1, 1),
                        cash_values=(5, 3, 1, 1, 1), upgrade_unit=UPGRADE_LINE_BET)


def test_line_bet_rationals_match_the_payout_law_and_the_stepwise_solver() -> None:
    """The summed solver = the stepwise one (same rationals, on weights where every landing is
    likely); the DP's law (integer cells of a line bet) gives the default's mean and second
    moment to the mass it leaves above its range."""
    fast, slow = HoldAndCashSolver(RICH), StepwiseHoldAndCashSolver(RICH)
    for n in (6, 12):
        assert fast.feature(n) == slow.feature(n)
    weights = load_model("default").hold_and_cash
    assert weights.upgrade_unit == UPGRADE_LINE_BET
    solver = HoldAndCashSolver(weights)
    laws = payout_laws(weights, cap=4000, coins=(6, 12), threads=1)
    for n in (6, 12):
        moments, law = solver.feature(n), laws[n]
        x = np.arange(len(law.probabilities)) / law.unit
        assert law.unit == 20 and law.above_cap < 1e-9
        assert float((x * law.probabilities).sum()) == pytest.approx(float(moments.mean),
                                                                     rel=1e-7)
        assert float((x * x * law.probabilities).sum()) == pytest.approx(
            float(moments.second), rel=1e-6)
    # the line-bet step returns less than the total-bet one, everything else equal
    total_bet = HoldAndCashSolver(replace(RICH, upgrade_unit=UPGRADE_TOTAL_BET)).feature(6)
    assert total_bet.mean > fast.feature(6).mean and total_bet.mega == fast.feature(6).mega


def test_default_returns_95_50_under_the_line_bet_upgrade() -> None:
    """RULES.md: 95.50 % +/- 0.02 pp, computed exactly (not read from a file), with the
    UPGRADE adding 1 x line bet; the game pays in multiples of the line bet and the €€€
    returns the contribution rate at every class (one share per spin), so every class gets
    game + rate. The same model under the total-bet UPGRADE returns more."""
    model = load_model("default")
    assert model.hold_and_cash.upgrade_unit == UPGRADE_LINE_BET
    report = exact.compute(model)
    assert abs(report.total - F(955, 1000)) < F(2, 10_000)
    other = exact.compute(replace(model, hold_and_cash=replace(
        model.hold_and_cash, upgrade_unit=UPGRADE_TOTAL_BET)))
    assert other.total > report.total + F(1, 100)


def test_default_returns_95_50_at_every_bet_class() -> None:
    """The figures ``starfever rtp`` states per class, each within 95.50 % +/- 0.02 pp: the
    shipped ones, which ``test_the_shipped_figures_are_a_fresh_computation[default]``
    (tests/math/test_figures.py) recomputes from nothing (the line-bet payout DP) and compares
    (computing them here as well cost the suite a second run of it, ADR 0045)."""
    model = load_model("default")
    figures = Figures.from_json(json.loads(shipped_path(model).read_text(encoding="utf-8")))
    assert figures.model_sha256 == model.sha256
    assert figures.upgrade_unit == UPGRADE_LINE_BET
    assert sorted(figures.by_line_bet) == sorted(BET_CLASSES)
    for row in figures.by_line_bet.values():
        assert abs(row.total - 0.955) < 0.0002
