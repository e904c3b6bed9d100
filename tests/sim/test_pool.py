"""The €€€ pool replay: exact against a spin-by-spin loop over the engine's money rules."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from starfever.engine import money
from starfever.engine.symbols import BET_CLASSES
from starfever.sim.pool import floor_sum, replay_pool


def test_floor_sum_is_the_sum_of_floors() -> None:
    for n in range(12):
        for m in range(1, 7):
            for a in range(0, 15, 2):
                for b in range(0, 15, 3):
                    assert floor_sum(n, m, a, b) == sum((a * i + b) // m for i in range(n))
    assert floor_sum(10**12, 5, 1, 0) == (10**12 // 5) * (10**12 - 5) // 2  # sum of i // 5


def _spin_by_spin(spins: int, events: dict[int, int], bet: int, rate: Fraction,
                  seed: int) -> tuple[int, ...]:
    pool, carry = seed, Fraction(0)
    pool_sum = paid = hits = refills = refill_count = contributed = 0
    for spin in range(spins):
        cents, carry = money.progressive_contribution(money.total_bet(bet), rate, carry)
        pool += cents
        contributed += cents
        pool_sum += pool
        if spin in events:
            # one share of the pool as it stood, whatever the number of lines (RULES.md)
            share = pool * bet // 100
            paid += share
            hits += 1
            refill = max(0, seed - (pool - share))
            refills += refill
            refill_count += refill > 0
            pool = pool - share + refill
    return pool_sum, paid, hits, refills, refill_count, contributed, pool


@pytest.mark.parametrize("bet", BET_CLASSES)
@pytest.mark.parametrize("rate", [Fraction(1, 100), Fraction(7, 333)])
def test_replay_matches_the_engine_money_rules_spin_by_spin(bet: int, rate: Fraction) -> None:
    rng = random.Random(bet)
    spins = 5_000
    events: dict[int, int] = {}
    for _ in range(30):
        spin = rng.randrange(spins)
        events[spin] = events.get(spin, 0) + rng.choice([1, 1, 2, 3])
    seed = 2_000
    report = replay_pool(spins, sorted(events.items()), bet, rate, seed)
    pool_sum, paid, hits, refills, refill_count, contributed, final = _spin_by_spin(
        spins, events, bet, rate, seed)
    assert report.mean_pool == pool_sum / spins
    assert (report.paid, report.hits, report.refills, report.refill_count,
            report.contributions, report.final_pool) == (
        paid, hits, refills, refill_count, contributed, final)
    assert report.balanced
    assert report.progressive_rtp == paid / (spins * 20 * bet)


def test_several_lines_of_one_spin_win_one_share() -> None:
    one = replay_pool(10, [(4, 1)], 50, Fraction(1, 100), 100_000)
    three = replay_pool(10, [(4, 3)], 50, Fraction(1, 100), 100_000)
    assert (three.paid, three.hits, three.final_pool) == (one.paid, one.hits, one.final_pool)
    assert one.paid == (100_000 + 5 * 10) // 2


def test_the_earlier_rule_still_pays_each_line_from_the_rest() -> None:
    report = replay_pool(10, [(4, 2)], 50, Fraction(1, 100), 100_000,
                         money.EACH_LINE_FROM_THE_REST)
    pool = 100_000 + 5 * 10
    first = pool // 2
    assert (report.paid, report.hits) == (first + (pool - first) // 2, 2)


def test_a_full_share_empties_the_pool_and_the_operator_refills_it() -> None:
    report = replay_pool(10, [(4, 1)], 100, Fraction(1, 100), 100_000)
    # 5 spins x 20 cents in, the whole pool (100,100) paid, refilled to the seed
    assert (report.paid, report.refills, report.refill_count) == (100_100, 100_000, 1)
    assert report.final_pool == 100_000 + 5 * 20
