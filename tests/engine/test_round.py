"""Round play: invariants over many seeded rounds, replay, and the event log's order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starfever.engine import money
from starfever.engine.model import UPGRADE_LINE_BET, load_model, load_model_version
from starfever.engine.rng import ReplayError, SeededSource
from starfever.engine.round import play_round, replay_round
from starfever.engine.symbols import BET_CLASSES, COIN, MWILD, WILD, InvalidBet

MODEL = load_model("default")
GOLDEN = Path(__file__).parent.parent / "data" / "golden_rounds.json"


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**63), bet=st.sampled_from(BET_CLASSES),
       pool=st.integers(0, 10**8))
def test_round_invariants(seed: int, bet: int, pool: int) -> None:
    result = play_round(MODEL, bet, SeededSource(seed), pool=pool)
    assert result.total_bet == 20 * bet
    parts = (result.base_win, result.star_wild_win, result.hold_and_cash_win,
             result.progressive_win)
    assert all(isinstance(p, int) and p >= 0 for p in parts)
    assert result.total_win == sum(parts)
    events = result.events
    assert events[0]["type"] == "reveal" and events[0]["phase"] == "base"
    assert events[-1] == {"type": "round_end", "total_win": result.total_win,
                          "pool_after": result.pool_after}
    line_total = sum(e["win"] for e in events if e["type"] == "line_win")
    assert line_total == result.base_win + result.star_wild_win
    assert all(e["win"] % bet == 0 for e in events if e["type"] == "line_win")
    coins = sum(c == COIN for reel in events[0]["grid"] for c in reel)
    assert result.feature == {4: "star_wild"}.get(coins, "hold_and_cash" if coins >= 5 else None)
    if result.feature != "star_wild":
        assert result.star_wild_win == 0
    if result.feature != "hold_and_cash":
        assert result.hold_and_cash_win == 0
    else:  # values are whole line bets; whole total bets when the UPGRADE adds total bets
        unit = bet if MODEL.hold_and_cash.upgrade_unit == UPGRADE_LINE_BET else 20 * bet
        assert result.hold_and_cash_win % unit == 0
    assert result.pool_after >= 0
    assert result.pool_before - result.progressive_win + result.pool_refill == result.pool_after
    # replaying the recorded draws gives the same round
    assert replay_round(MODEL, bet, result.draws, pool=pool) == result


def _find_round(feature: str, limit: int = 20000) -> tuple[int, object]:
    for seed in range(limit):
        result = play_round(MODEL, 1, SeededSource(seed))
        if result.feature == feature:
            return seed, result
    raise AssertionError(f"no {feature} in {limit} seeds")


def test_star_wild_round_keeps_the_coins_as_wilds() -> None:
    _, result = _find_round("star_wild")
    base = result.events[0]["grid"]
    wild_event = next(e for e in result.events if e["type"] == "star_wild")
    respin = next(e for e in result.events if e["type"] == "reveal" and e["phase"] == "star_wild")
    coins = {(r, w) for r in range(5) for w in range(3) if base[r][w] == COIN}
    assert {(w["reel"], w["row"]) for w in wild_event["wilds"]} == coins
    for w in wild_event["wilds"]:
        stacked = sum(1 for r, _ in coins if r == w["reel"]) == 3
        assert w["symbol"] == (MWILD if stacked else WILD)
        assert respin["grid"][w["reel"]][w["row"]] == w["symbol"]
    assert COIN not in {c for reel in respin["grid"] for c in reel}


def test_hold_and_cash_round_event_order() -> None:
    _, result = _find_round("hold_and_cash")
    types = [e["type"] for e in result.events]
    start = types.index("hold_and_cash_start")
    end = types.index("hold_and_cash_end")
    assert types[start + 1:end] and set(types[start + 1:end]) <= {"respin", "mega"}
    respins = [e for e in result.events if e["type"] == "respin"]
    assert respins[-1]["respins_left"] == 0
    for e in respins[:-1]:
        assert e["respins_left"] in (1, 2, 3)
        assert (e["respins_left"] == 3) == bool(e["landed"])
    assert result.events[end]["win"] == result.hold_and_cash_win


def test_jackpot_shares_are_taken_in_order_and_refilled() -> None:
    # Force a base spin with JACKPOT on reels 0-2 of the top row, the rest as the strips give.
    stops = []
    for strip in MODEL.base_reels[:3]:
        stops.append(strip.index("JACKPOT"))
    draws = [*stops, 0, 0]
    seed = MODEL.seed_cents
    result = replay_round(MODEL, 100, draws, pool=seed + 5000)
    hits = [e for e in result.events if e["type"] == "jackpot"]
    assert hits, "the forced window must hold a jackpot line"
    first = hits[0]
    assert first["win"] == seed + 5000  # EUR 1.00 line bet wins 100 %
    assert result.pool_after == seed and result.pool_refill == seed
    small = replay_round(MODEL, 1, draws, pool=123_456)
    assert small.progressive_win == sum(e["win"] for e in small.events if e["type"] == "jackpot")
    assert small.events[[e["type"] for e in small.events].index("jackpot")]["win"] == 1234


def test_replay_refuses_wrong_draws() -> None:
    result = play_round(MODEL, 5, SeededSource(7))
    with pytest.raises(ReplayError):
        replay_round(MODEL, 5, result.draws[:-1])
    with pytest.raises(ReplayError):
        replay_round(MODEL, 5, [*result.draws, 0])
    with pytest.raises(ReplayError):
        replay_round(MODEL, 5, [10**6, *result.draws[1:]])


@pytest.mark.parametrize("bet", [0, 6, -1, 101, 1.0, "1", True])
def test_bad_bet_is_refused(bet: object) -> None:
    with pytest.raises(InvalidBet):
        play_round(MODEL, bet, SeededSource(1))  # type: ignore[arg-type]


def test_money_boundary() -> None:
    assert money.total_bet(money.Cents(75)) == 1500
    assert money.progressive_share(money.Cents(999), money.Cents(1)) == 9
    assert money.progressive_share(money.Cents(999), money.Cents(100)) == 999
    from fractions import Fraction
    carry = Fraction(0)
    booked = 0
    for _ in range(1000):
        cents, carry = money.progressive_contribution(money.Cents(20), Fraction(1, 100), carry)
        booked += cents
    assert booked == 200 and carry == 0


def test_golden_rounds_replay_identically() -> None:
    """Recorded seed -> draws -> outcome cases: the rules must give the same rounds."""
    golden = json.loads(GOLDEN.read_text())
    # the version the rounds were recorded with: current, or archived once it is replaced
    model = load_model_version(golden["model"], golden["version"])
    assert model is not None, (golden["model"], golden["version"])
    features = {c["feature"] for c in golden["rounds"]}
    assert {None, "star_wild", "hold_and_cash"} <= features
    for case in golden["rounds"]:
        again = play_round(model, case["line_bet"], SeededSource(case["seed"]), pool=case["pool"])
        assert list(again.draws) == case["draws"]
        replayed = replay_round(model, case["line_bet"], case["draws"], pool=case["pool"])
        assert json.loads(json.dumps(list(replayed.events))) == case["events"]
        assert replayed.total_win == case["total_win"]
