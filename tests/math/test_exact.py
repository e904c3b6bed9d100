"""The exact calculator against hand derivations and brute-force enumeration."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from itertools import product

import pytest

from starfever.engine.holdcash import play_hold_and_cash
from starfever.engine.lines import evaluate_grid
from starfever.engine.model import HoldAndCashModel, load_model, model_from_dict
from starfever.engine.rng import SeededSource
from starfever.engine.round import star_wilds, window, with_wilds
from starfever.engine.symbols import PAYTABLE
from starfever.math import exact
from starfever.math.holdcash import HoldAndCashSolver

# 14 coins leave one empty cell; BLANK 1/2, CASH 1/4 (always worth 1), UPGRADE 1/4; coins worth 1.
TINY = HoldAndCashModel(cell_weights=(2, 1, 0, 0, 1, 0), coin_values=(1, 0, 0, 0, 0),
                        cash_values=(1, 0, 0, 0, 0))


def test_hold_and_cash_tiny_model_by_hand() -> None:
    """Derived on paper (docs/math.md): each 'event' (CASH or UPGRADE before 3 blanks) has
    probability 7/16 each, the stop 1/8. U = upgrades before the end is geometric with success
    9/16, the end is Mega with probability 7/9 independently of U, payout = 14 + 14 U + 1001 M."""
    moments = HoldAndCashSolver(TINY).feature(14)
    assert moments.mega == Fraction(7, 9)
    assert moments.mean == 14 + Fraction(7105, 9)
    e_u, e_u2 = Fraction(7, 9), Fraction(161, 81)
    e_m = Fraction(7, 9)
    expected_second = (196 * (1 + 2 * e_u + e_u2) + 2 * 1001 * 14 * (1 + e_u) * e_m
                       + 1001**2 * e_m)
    assert moments.second == expected_second
    assert moments.minors == 0 and moments.majors == 0


@pytest.mark.slow
@pytest.mark.parametrize("unit", ["line_bet", "total_bet"])
def test_hold_and_cash_solver_agrees_with_the_engine(unit: str) -> None:
    """Play the default model's feature with the engine and compare to the exact mean, under
    either UPGRADE unit."""
    weights = replace(load_model("default").hold_and_cash, upgrade_unit=unit)
    exact_moments = HoldAndCashSolver(weights).feature(6)
    source = SeededSource(2026)
    coins = [(0, 0), (1, 1), (2, 2), (3, 0), (4, 1), (4, 2)]
    n = 20_000
    total = total_sq = 0
    for _ in range(n):
        outcome = play_hold_and_cash(coins, weights, 1, source, [])  # type: ignore[arg-type]
        total += outcome.multiple
        total_sq += outcome.multiple ** 2
    mean = total / n
    sd = math.sqrt(total_sq / n - mean * mean)
    half = 3.29 * sd / math.sqrt(n)  # 99.9 %
    assert abs(mean - float(exact_moments.mean)) < half
    assert abs(sd - math.sqrt(float(exact_moments.second - exact_moments.mean**2))) < 0.1 * sd


def test_float_solver_matches_rational() -> None:
    weights = load_model("default").hold_and_cash
    a = HoldAndCashSolver(weights).feature(7)
    b = HoldAndCashSolver(weights, exact=False).feature(7)
    assert abs(float(a.mean) - float(b.mean)) < 1e-9 * float(a.mean)


SMALL = {
    "name": "small",
    "reels": {
        "base": [["COIN", "LEMON", "WILD", "CHERRY"], ["COIN", "COIN", "COIN", "LEMON"],
                 ["LEMON", "COIN", "CHERRY"], ["COIN", "LEMON", "BAR"], ["LEMON", "COIN", "BELL"]],
        "star_wild": [["LEMON", "CHERRY", "BAR"], ["BAR", "LEMON", "WILD"],
                      ["CHERRY", "LEMON", "BAR"], ["LEMON", "BELL", "BAR"],
                      ["LEMON", "CHERRY", "SEVEN"]],
    },
    "hold_and_cash": {
        "cell_weights": {"BLANK": 5, "CASH": 1, "MINOR": 1, "MAJOR": 1, "UPGRADE": 1,
                         "MULTIPLIER": 1},
        "coin_values": {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1},
        "cash_values": {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1},
        "upgrade_unit": "total_bet",
    },
    "progressive": {"contribution_rate": 0.02, "seed_cents": 1000},
}


SMALL_STAR = {**SMALL, "name": "small-star", "reels": {
    "base": [["COIN", "LEMON", "WILD", "JACKPOT"], ["COIN", "LEMON", "BAR", "JACKPOT"],
             ["LEMON", "COIN", "CHERRY", "JACKPOT"], ["COIN", "LEMON", "BAR"],
             ["LEMON", "COIN", "BELL", "CHERRY"]],
    "star_wild": [["LEMON", "CHERRY", "BAR"], ["MELON", "GOLD", "BELL"],
                  ["SEVEN", "DIAMOND", "CHERRY"], ["LEMON", "BELL", "BAR"],
                  ["LEMON", "CHERRY", "SEVEN"]]}}


@pytest.mark.parametrize("data", [SMALL, SMALL_STAR], ids=["small", "small-star"])
def test_small_model_by_brute_force(data: dict[str, object]) -> None:
    """Enumerate every base stop and every respin stop of a small model."""
    model = model_from_dict(data)
    report = exact.compute(model)
    base_space = math.prod(len(s) for s in model.base_reels)
    respin_space = math.prod(len(s) for s in model.star_wild_reels)
    lines = star = hits = events = 0
    coins_seen: dict[int, int] = {}
    for stops in product(*(range(len(s)) for s in model.base_reels)):
        grid = window(model.base_reels, stops)
        ev = evaluate_grid(grid)
        lines += ev.line_factor
        coins_seen[ev.star_coins] = coins_seen.get(ev.star_coins, 0) + 1
        events += bool(ev.line_wins or ev.jackpot_lines or ev.star_coins >= 4)
        # a hit: the round's total win > 0 (Hold & Cash always pays; a respin may not)
        pays = bool(ev.line_wins or ev.jackpot_lines or ev.star_coins >= 5)
        hits += respin_space if pays else 0
        if ev.feature == "star_wild":
            wilds = star_wilds(grid)
            for rstops in product(*(range(len(s)) for s in model.star_wild_reels)):
                respin = with_wilds(window(model.star_wild_reels, rstops), wilds)
                rev = evaluate_grid(respin)
                star += rev.line_factor
                hits += not pays and bool(rev.line_factor or rev.jackpot_lines)
    assert report.lines == Fraction(lines, base_space * 20)
    assert report.star_wild == Fraction(star, base_space * respin_space * 20)
    assert report.hit_frequency == Fraction(hits, base_space * respin_space)
    assert exact.event_probability(model) == Fraction(events, base_space)
    if report.star_wild_frequency:  # respins that pay nothing are no hits
        assert report.hit_frequency < exact.event_probability(model)
    assert report.coin_counts == {k: Fraction(v, base_space) for k, v in coins_seen.items()}
    assert report.progressive == Fraction(2, 100)
    assert report.star_wild_frequency == Fraction(coins_seen.get(4, 0), base_space)
    assert report.hold_and_cash > 0


@pytest.mark.slow
def test_default_model_hits_95_50() -> None:
    report = exact.compute(load_model("default"))
    assert abs(report.total - Fraction(955, 1000)) < Fraction(2, 10_000)
    assert report.lines > max(report.star_wild, report.hold_and_cash)
    assert Fraction(1, 250) <= report.hold_and_cash_frequency <= Fraction(1, 100)
    assert report.star_wild_frequency > report.hold_and_cash_frequency
    assert Fraction(25, 100) <= report.hit_frequency <= Fraction(40, 100)
    assert sum(report.coin_counts.values()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name,target", [("rtp94", Fraction(94, 100)),
                                         ("rtp96", Fraction(96, 100))])
def test_shipped_variants(name: str, target: Fraction) -> None:
    report = exact.compute(load_model(name))
    assert abs(report.total - target) < Fraction(2, 10_000)


def test_every_paytable_entry_is_reachable() -> None:
    """Every symbol pays 3, 4 and 5 of a kind with positive probability on the default strips,
    and the Multiplier Wild (three coins stacked on one reel) can appear."""
    model = load_model("default")
    dist = exact.line_pay_distribution([exact.symbol_frequencies(s) for s in model.base_reels])
    reached = {(pay.symbol, pay.count) for pay, p in dist.items() if p > 0}
    for symbol in PAYTABLE:
        for count in (3, 4, 5):
            assert (symbol, count) in reached, (symbol, count)
    masks = [exact._reel_coin_masks(s) for s in model.base_reels]
    assert any(m[(True, True, True)] > 0 for m in masks)
