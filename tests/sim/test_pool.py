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


def test_a_shared_pool_replays_like_a_spin_by_spin_loop() -> None:
    """Two classes on one pool, interleaved in time, against a loop over the spins in the
    same order with the engine's money rules."""
    from starfever.sim.pool import replay_shared_pool

    rng = random.Random(3)
    runs = []
    for bet, spins in ((1, 300), (100, 200), (25, 300)):
        rounds = sorted({(rng.randrange(spins), rng.choice([1, 2])) for _ in range(12)})
        runs.append((bet, spins, rounds))
    rate, seed = Fraction(1, 100), 1_000
    report = replay_shared_pool(runs, rate, seed)
    timeline = sorted(((Fraction(2 * s + 1, 2 * n), i, s) for i, (_, n, _) in enumerate(runs)
                       for s in range(n)))
    hits = {(i, s): lines for i, (_, _, rounds) in enumerate(runs) for s, lines in rounds}
    pool, carry, refills = seed, Fraction(0), 0
    paid = [0, 0, 0]
    for _, i, s in timeline:
        bet = runs[i][0]
        cents, carry = money.progressive_contribution(money.total_bet(bet), rate, carry)
        pool += cents
        if (i, s) in hits:
            won = money.jackpot_round(pool, bet, [hits[(i, s)]], seed, money.ONE_SHARE_PER_SPIN)
            paid[i] += won.win
            refills += won.refill
            pool = won.pool_after
    assert [c.paid for c in report.classes] == paid
    assert (report.refills, report.final_pool) == (refills, pool)
    assert report.balanced
