"""The €€€ pool replay: exact against a spin-by-spin loop over the engine's money rules."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from starfever.engine import money
from starfever.engine.model import (
    MAX_WIN_GAME,
    MAX_WIN_ROUND,
    MathModel,
    load_model,
    model_from_dict,
)
from starfever.engine.round import play_round
from starfever.engine.symbols import BET_CLASSES, Cents
from starfever.sim import simulate
from starfever.sim.pool import cap_room, floor_sum, jackpot_cap_x, replay_pool
from starfever.sim.rng import KernelSource, chunk_state
from tests.sim.models import hand_made


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


# -- a max-win cap that holds the whole round ---------------------------------------------------

def _capped_jackpot_model(scope: str, seed_cents: int) -> MathModel:
    """Rounds with €€€ lines and a Hold & Cash that often runs into the cap (coins worth 5 x
    total bet, multipliers), under a 1,800 x cap of ``scope``, with a pool seeded at
    ``seed_cents``."""
    base = [["JACKPOT", "COIN", "COIN", "LEMON", "JACKPOT", "CHERRY", "COIN"]] * 3 + [
        ["COIN", "LEMON", "COIN", "BELL", "COIN"]] * 2
    data: dict[str, Any] = hand_made(
        base, max_win_x=1800, coin_values={"1": 0, "2": 0, "3": 0, "4": 0, "5": 1},
        cell_weights={"BLANK": 3, "CASH": 1, "MINOR": 0, "MAJOR": 0, "UPGRADE": 1,
                      "MULTIPLIER": 2}).to_dict()
    data["max_win_scope"] = scope
    data["progressive"]["seed_cents"] = seed_cents
    return model_from_dict(data)


def _engine_pool(model: MathModel, spins: int, seed: int, bet: int) -> dict[str, int]:
    """The run's stream through the engine, round by round against one pool (contribution
    first, as the server books it)."""
    source = KernelSource(chunk_state(seed, 0),
                          spin_lengths=tuple(len(s) for s in model.base_reels))
    pool, carry = model.seed_cents, Fraction(0)
    out = dict.fromkeys(("paid", "withheld", "refills", "capped", "hits"), 0)
    for _ in range(spins):
        source.start_round()
        cents, carry = money.progressive_contribution(
            money.total_bet(Cents(bet)), model.contribution_rate, carry)
        result = play_round(model, bet, source, pool=pool + cents)
        out["paid"] += result.progressive_win
        out["withheld"] += sum(hit.withheld for hit in result.jackpot_hits)
        out["refills"] += result.pool_refill
        out["hits"] += len(result.jackpot_hits)
        out["capped"] += result.total_win == 1800 * result.total_bet
        assert result.total_win <= 1800 * result.total_bet or model.max_win_scope != \
            MAX_WIN_ROUND
        pool = result.pool_after
    out["final_pool"] = pool
    return out


def _cap_cases() -> list[Any]:
    """Both scopes x three (bet, seed) pairs; --quick keeps one pair of each scope, the full
    suite all six (each is a run through the engine, seconds; ADR 0045)."""
    cases = []
    for scope in (MAX_WIN_ROUND, MAX_WIN_GAME):
        for bet, seed_cents in ((5, 100_000), (100, 100_000), (100, 5_000_000)):
            quick = (scope, bet) in ((MAX_WIN_ROUND, 5), (MAX_WIN_GAME, 100)) \
                and seed_cents == 100_000
            cases.append(pytest.param(bet, seed_cents, scope,
                                      id=f"{scope}-{bet}-{seed_cents}",
                                      marks=() if quick else pytest.mark.slow))
    return cases


@pytest.mark.parametrize(("bet", "seed_cents", "scope"), _cap_cases())
def test_the_pool_replay_pays_what_the_engine_pays_under_a_cap(bet: int, seed_cents: int,
                                                               scope: str) -> None:
    """The kernel's €€€ rounds, with their game wins, replayed against one pool, against the
    engine playing the same stream round by round: the same shares paid, the same cents kept
    in the pool by the cap, the same refills and final pool."""
    model = _capped_jackpot_model(scope, seed_cents)
    spins, seed = 1_500, 77
    run = simulate(model, spins, seed, workers=1)
    report = replay_pool(spins, run.jackpot_rounds_at, bet, model.contribution_rate,
                         model.seed_cents, model.jackpot_rule, jackpot_cap_x(model))
    engine = _engine_pool(model, spins, seed, bet)
    assert (report.paid, report.withheld, report.refills, report.final_pool, report.hits) == (
        engine["paid"], engine["withheld"], engine["refills"], engine["final_pool"],
        engine["hits"])
    assert report.balanced and engine["capped"] > 20
    if scope == MAX_WIN_GAME:
        assert report.withheld == 0
    else:  # the cap cut shares: at the cap from Hold & Cash, or a share alone beyond it
        assert report.withheld > 0


def test_a_cap_of_the_earlier_reading_holds_no_share() -> None:
    assert jackpot_cap_x(_capped_jackpot_model(MAX_WIN_GAME, 100_000)) is None
    assert jackpot_cap_x(_capped_jackpot_model(MAX_WIN_ROUND, 100_000)) == 1800
    assert jackpot_cap_x(load_model("default")) is None
    assert cap_room(1800, 5, 1800 * 20) == 0 and cap_room(1800, 5, 0) == 1800 * 100
    assert cap_room(None, 5, 0) is None


def test_a_shared_pool_under_a_cap_keeps_the_cut_in_the_pool() -> None:
    from starfever.sim.pool import replay_shared_pool

    runs = [(100, 10, [(4, 1, 0, 1800 * 20 - 10)]), (1, 10, [(6, 1, 0, 0)])]
    report = replay_shared_pool(runs, Fraction(1, 100), 1_000_000, cap_x=1800)
    # the EUR 1 round has 10 line bets (1,000 cents) of room: the rest of its share stays
    assert report.classes[0].paid == 1_000 and report.withheld > 0 and report.balanced
    free = replay_shared_pool(runs, Fraction(1, 100), 1_000_000)
    assert free.classes[0].paid > 1_000_000 and free.withheld == 0
