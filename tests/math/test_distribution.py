"""The exact win law (bands, second moment, largest wins), the Hold & Cash payout DP and the
long-run €€€ pool, each against an independent count, enumeration or simulation."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from functools import cache
from itertools import product

import numpy as np
import pytest

from starfever.engine.holdcash import play_hold_and_cash
from starfever.engine.lines import evaluate_grid
from starfever.engine.model import HoldAndCashModel, MathModel, load_model, model_from_dict
from starfever.engine.rng import SeededSource
from starfever.engine.round import star_wilds, window, with_wilds
from starfever.engine.symbols import BET_CLASSES, Cents
from starfever.math import exact
from starfever.math.distribution import (
    BAND_EDGES,
    WinLaw,
    std_dev_with_jackpot,
    std_dev_with_pool,
    win_law,
)
from starfever.math.holdcash import HoldAndCashSolver
from starfever.math.holdcash_law import payout_laws
from starfever.math.jackpot import long_run, named_mixes
from tests.math.test_exact import SMALL_STAR as _SMALL_STAR

# the small model, with the default Hold & Cash weights (a sparse payout law: a quick DP)
SMALL_STAR = {**_SMALL_STAR, "hold_and_cash": load_model("default").to_dict()["hold_and_cash"]}


@cache
def _small_star_law() -> tuple[MathModel, exact.ExactReport, WinLaw]:
    """The small model, its rational report and its win law, computed once for the three
    tests that read them and change nothing in them (each took seconds of the line-bet payout
    DP, ADR 0045)."""
    model = model_from_dict(SMALL_STAR)
    report = exact.compute(model)
    return model, report, win_law(model, report.hold_and_cash_by_coins, hold_cap=5001)


def _band(x: Fraction) -> int:
    if x == 0:
        return 0
    for k, edge in enumerate(BAND_EDGES[1:], start=1):
        if x <= edge:
            return k
    return len(BAND_EDGES)


@pytest.mark.slow
def test_the_win_law_of_a_small_model_matches_brute_force() -> None:
    """Every base stop x every respin stop (no Hold & Cash in this model's 4-coin rounds; its
    5-coin rounds are counted by their exact feature mean and second moment)."""
    model, report, law = _small_star_law()
    respins = list(product(*(range(len(s)) for s in model.star_wild_reels)))
    bases = list(product(*(range(len(s)) for s in model.base_reels)))
    space = len(bases) * len(respins)
    bands = [0] * (len(BAND_EDGES) + 1)
    second = Fraction(0)
    max_base, max_sw, max_sw_count = 0, 0, 0
    jackpot_game = Fraction(0)
    for stops in bases:
        grid = window(model.base_reels, stops)
        ev = evaluate_grid(grid)
        max_base = max(max_base, ev.line_factor)
        if ev.feature == "hold_and_cash":
            m = report.hold_and_cash_by_coins[ev.star_coins]
            lx = Fraction(ev.line_factor, 20)
            second += len(respins) * (lx * lx + 2 * lx * m.mean + m.second)
            if ev.jackpot_lines:
                jackpot_game += len(respins) * (lx + m.mean)
            continue
        wins = [ev.line_factor] * len(respins)
        if ev.feature == "star_wild":
            wilds = star_wilds(grid)
            for i, rstops in enumerate(respins):
                respin = with_wilds(window(model.star_wild_reels, rstops), wilds)
                wins[i] += evaluate_grid(respin).line_factor
            top = max(wins)
            if top > max_sw:
                max_sw, max_sw_count = top, 0
            if top == max_sw:
                max_sw_count += wins.count(top)
        for w in wins:
            x = Fraction(w, 20)
            bands[_band(x)] += 1
            second += x * x
            if ev.jackpot_lines:
                jackpot_game += x
    assert law.second_moment == second / space
    assert law.game_win_given_jackpot == jackpot_game / space
    assert law.max_base == Fraction(max_base, 20)
    assert law.max_star_wild == Fraction(max_sw, 20)
    assert law.max_star_wild_probability == Fraction(max_sw_count, space)
    hold = float(report.hold_and_cash_frequency)
    non_hold = [b.probability for b in law.bands]
    # the Hold & Cash rounds' bands come from the DP; the rest are exact counts
    for k, count in enumerate(bands):
        assert non_hold[k] >= count / space - 1e-12
    assert abs(sum(non_hold) - 1) < 1e-12
    assert abs(sum(non_hold) - sum(bands) / space - hold) < 1e-12


def _engine_payouts(weights: HoldAndCashModel, coins: int, rounds: int) -> list[int]:
    out = []
    cells = [(reel, row) for reel in range(5) for row in range(3)][:coins]
    for seed in range(rounds):
        outcome = play_hold_and_cash(list(cells), weights, Cents(1), SeededSource(seed), [])
        out.append(outcome.multiple)
    return out


@pytest.mark.slow
def test_the_payout_dp_has_the_rational_moments() -> None:
    weights = load_model("default").hold_and_cash
    laws = payout_laws(weights, cap=6000, coins=(5, 9, 14, 15))
    solver = HoldAndCashSolver(weights, exact=False)
    for coins, law in laws.items():
        k = np.arange(len(law.probabilities)) / law.unit  # cells of one UPGRADE step
        moments = solver.feature(coins)
        assert abs(law.probabilities.sum() + law.above_cap - 1) < 1e-12
        assert abs((k * law.probabilities).sum() - float(moments.mean)) < 1e-6 * float(
            moments.mean)
        # the mass above the cap is set aside: the Mega it may still reach is a bound
        assert float(moments.mega) - law.above_cap - 1e-12 <= law.mega
        assert law.mega <= float(moments.mega) + 1e-12


@pytest.mark.slow
def test_the_payout_dp_agrees_with_the_engine_played_feature() -> None:
    """A feature-rich weight set, played 20,000 times by the engine: every tail probability
    inside its 99.9 % binomial interval."""
    weights = HoldAndCashModel(cell_weights=(30, 6, 1, 1, 2, 1),
                               coin_values=(4, 3, 2, 1, 1), cash_values=(5, 3, 1, 1, 1))
    law = payout_laws(weights, cap=4000)[6]
    rounds = 8_000
    seen = _engine_payouts(weights, 6, rounds)
    for k in (10, 30, 60, 100, 200, 500, 1000, 1500):
        p = law.at_least(k)
        hat = sum(1 for x in seen if x >= k) / rounds
        half = 3.3 * math.sqrt(max(p * (1 - p), 1e-9) / rounds) + 1e-4
        assert abs(hat - p) <= half, (k, hat, p)


@pytest.mark.slow
def test_every_class_gets_the_same_return_and_refills_balance() -> None:
    rate = Fraction(1, 100)
    for name, mix in named_mixes().items():
        run = long_run(mix, 1 / 30_000, rate, 100_000)
        assert run.balance_error < 1e-9, name
        assert abs(run.return_per_class - (float(rate) + run.refill_rate)) < 1e-9, name
    assert long_run({1: Fraction(1)}, 1 / 30_000, rate, 100_000).refill_rate < 1e-12
    full = long_run({100: Fraction(1)}, 1 / 30_000, rate, 100_000)
    assert abs(full.refill_rate - (100_000 / 30_000) / 2000) < 1e-9  # the seed after every win


@pytest.mark.slow
def test_the_long_run_pool_matches_a_pool_simulation() -> None:
    """A direct spin-by-spin pool (money.jackpot_round), mix uniform over the classes."""
    p, rate, seed = 1 / 400, Fraction(1, 50), 2_000
    mix = {b: Fraction(1, len(BET_CLASSES)) for b in BET_CLASSES}
    run = long_run(mix, p, rate, seed)
    rng = random.Random(5)
    pool, paid, refills, staked, carry = seed, 0, 0, 0, Fraction(0)
    seen: list[int] = []
    from starfever.engine import money
    for _ in range(1_000_000):
        bet = rng.choice(BET_CLASSES)
        part, carry = money.progressive_contribution(money.total_bet(bet), rate, carry)
        pool += part
        staked += money.total_bet(bet)
        if rng.random() < p:
            seen.append(pool)
            won = money.jackpot_round(Cents(pool), bet, [1], Cents(seed),
                                      money.ONE_SHARE_PER_SPIN)
            paid += won.win
            refills += won.refill
            pool = won.pool_after
    assert abs(refills / staked - run.refill_rate) < 0.15 * run.refill_rate
    assert abs(paid / staked - run.return_per_class) < 0.08 * run.return_per_class
    # the pool's second moment at a win (the €€€ share's part of a round's variance)
    assert abs(float(np.mean(seen)) - run.mean_pool_at_win) < 0.05 * run.mean_pool_at_win
    square = float(np.mean(np.square(np.array(seen, dtype=np.float64))))
    assert abs(square - run.mean_square_pool_at_win) < 0.1 * run.mean_square_pool_at_win
    assert run.mean_square_pool_at_win > 1.2 * run.mean_pool_at_win ** 2  # the pool varies


@pytest.mark.slow
def test_the_std_dev_with_the_jackpot_is_the_same_at_every_class() -> None:
    _, report, law = _small_star_law()
    values = {round(std_dev_with_jackpot(law, report.game, Fraction(
        5_000 * b // 100, 20 * b)), 12) for b in BET_CLASSES}
    assert len(values) == 1
    assert std_dev_with_jackpot(law, report.game, Fraction(0)) == pytest.approx(
        math.sqrt(float(law.second_moment - report.game ** 2)))


@pytest.mark.slow
def test_the_std_dev_with_a_varying_pool() -> None:
    """With the pool fixed, the pool's form is the seed-pool form; a pool that varies (the same
    mean share, a larger second moment) adds p Var(share) to the variance, and the mean it is
    taken around counts the share's mean, as the mix's RTP does."""
    _, report, law = _small_star_law()
    share = Fraction(300)
    fixed = std_dev_with_pool(law, report.game, float(share), float(share) ** 2)
    assert fixed == pytest.approx(std_dev_with_jackpot(law, report.game, share), rel=1e-12)
    varying = std_dev_with_pool(law, report.game, float(share), 2.0 * float(share) ** 2)
    p = float(law.jackpot_probability)
    assert varying ** 2 - fixed ** 2 == pytest.approx(p * float(share) ** 2, rel=1e-9)


def test_the_shipped_figures_state_the_std_dev_at_each_mix_pool() -> None:
    """The €€€ share a round wins is the pool's long-run law of the mix (the one the RTP counts:
    contributions plus refills), not the seed: every mix's std dev says so, and exceeds the
    seed-pool figure by the pool's spread."""
    from starfever.math.figures import figures

    data = figures(load_model("default"))
    second = data.exact.second_moment_game
    p = data.jackpot_frequency
    for name, run in data.jackpot_long_run.items():
        assert run.std_dev > data.std_dev, name
        # the share's mean in the std dev is the €€€ return per class the mix states
        share = run.progressive_per_class / p
        lower = math.sqrt(float(second) + p * share ** 2
                          - (data.game + run.progressive_per_class) ** 2)
        assert run.std_dev >= lower, name  # E[share^2] >= E[share]^2


def test_a_pool_that_is_never_won_returns_nothing() -> None:
    """A model without €€€ lines (p = 0): no return, no refills, no division by zero (it was a
    traceback of ``starfever rtp``)."""
    run = long_run({1: Fraction(1)}, 0.0, Fraction(1, 100), 100_000)
    assert run.return_per_class == 0 and run.refill_rate == 0 and run.balance_error == 0
