"""The max-win cap holds the whole round (RULES.md "Maximum win"): the game win stops at the
cap, and the part of a €€€ share the cap leaves no room for stays in the pool. Models made
before that rule (``max_win_scope: game``) keep paying the share on top, as they were played."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starfever.engine import money
from starfever.engine.model import (
    MAX_WIN_GAME,
    MAX_WIN_ROUND,
    MathModel,
    ModelError,
    load_model,
    model_from_dict,
)
from starfever.engine.rng import SeededSource
from starfever.engine.round import RoundResult, play_round, replay_round
from starfever.engine.symbols import BET_CLASSES, JACKPOT, Cents

CAP_X = 1800


def _model(scope: str, base: list[list[str]] | None = None,
           **hold: dict[str, int]) -> MathModel:
    data: dict[str, Any] = load_model("capped").to_dict()
    data["max_win_x"], data["max_win_scope"] = CAP_X, scope
    if base is not None:
        data["reels"]["base"] = base
    data["hold_and_cash"].update(hold)
    return model_from_dict(data)


def _jackpot_draws(model: MathModel) -> tuple[int, ...]:
    """Base stops showing JACKPOT on the top row of reels 0-2, and no feature."""
    strips = model.base_reels
    stops = [strip.index(JACKPOT) for strip in strips[:3]]
    for s3 in range(len(strips[3])):
        for s4 in range(len(strips[4])):
            result = replay_round(model, 1, (*stops, s3, s4))
            if result.feature is None and result.jackpot_hits:
                return (*stops, s3, s4)
    raise AssertionError("no draws with a EUR line and no feature")


@pytest.mark.parametrize("bet", [1, 50, 100])
def test_a_share_beyond_the_cap_stays_in_the_pool(bet: int) -> None:
    model = _model(MAX_WIN_ROUND)
    draws = _jackpot_draws(model)
    cap = CAP_X * 20 * bet
    pool = 2 * cap * 100 // bet  # the share alone is twice the cap
    result = replay_round(model, bet, draws, pool=pool)
    share = money.progressive_share(Cents(pool), Cents(bet))
    assert share > cap
    paid = cap - result.base_win
    assert result.progressive_win == paid and result.total_win == cap
    jackpot = next(e for e in result.events if e["type"] == "jackpot")
    assert jackpot["win"] == paid and jackpot["withheld"] == share - paid
    assert jackpot["pool_left"] == pool - paid and result.pool_refill == 0
    assert result.pool_after == pool - paid
    assert [e["type"] for e in result.events][-2:] == ["max_win", "round_end"]
    assert result.events[-2] == {"type": "max_win", "win": cap}
    assert result.jackpot_hits[0].withheld == share - paid
    # the earlier reading pays the share on top, from the same draws
    earlier = replay_round(_model(MAX_WIN_GAME), bet, draws, pool=pool)
    assert earlier.progressive_win == share and earlier.total_win == result.base_win + share
    assert not any(e["type"] == "max_win" for e in earlier.events)
    assert "withheld" not in next(e for e in earlier.events if e["type"] == "jackpot")


def test_a_share_within_the_cap_is_paid_whole_and_logged_as_before() -> None:
    round_, game = _model(MAX_WIN_ROUND), _model(MAX_WIN_GAME)
    draws = _jackpot_draws(round_)
    for bet in BET_CLASSES:
        a = replay_round(round_, bet, draws, pool=250_000)
        b = replay_round(game, bet, draws, pool=250_000)
        assert a == b and a.progressive_win == money.progressive_share(Cents(250_000), Cents(bet))


def _capped_hold_with_jackpot(model: MathModel, bet: int, pool: int) -> RoundResult:
    for seed in range(2000):
        result = play_round(model, bet, SeededSource(seed), pool=pool)
        if result.hold_and_cash is not None and result.hold_and_cash.capped \
                and result.jackpot_hits:
            return result
    raise AssertionError("no capped Hold & Cash with a EUR line")


# every spin: JACKPOT on line 2 (top row) of reels 0-2, and 12 coins: Hold & Cash
_HOLD_BASE = [["JACKPOT", "COIN", "COIN"]] * 3 + [["COIN"] * 3] * 2
_HOLD = {"coin_values": {"1": 0, "2": 0, "3": 0, "4": 0, "5": 1},
         "cell_weights": {"BLANK": 1, "CASH": 0, "MINOR": 0, "MAJOR": 0, "UPGRADE": 1,
                          "MULTIPLIER": 4}}


@pytest.mark.parametrize("bet", [1, 5, 100])
def test_hold_and_cash_at_the_cap_leaves_no_room_for_the_share(bet: int) -> None:
    model = _model(MAX_WIN_ROUND, _HOLD_BASE, **_HOLD)
    pool = 1_000_000
    result = _capped_hold_with_jackpot(model, bet, pool)
    cap = CAP_X * 20 * bet
    assert result.base_win == 0 and result.hold_and_cash_win == cap
    assert result.progressive_win == 0 and result.total_win == cap
    share = money.progressive_share(Cents(pool), Cents(bet))
    jackpot = next(e for e in result.events if e["type"] == "jackpot")
    assert jackpot["win"] == 0 and jackpot["withheld"] == share
    assert result.pool_after == pool and result.pool_refill == 0
    assert sum(1 for e in result.events if e["type"] == "max_win") == 1
    assert replay_round(model, bet, result.draws, pool=pool) == result
    # the earlier reading, from the same draws: the same game win, and the share on top
    earlier = replay_round(_model(MAX_WIN_GAME, _HOLD_BASE, **_HOLD), bet, result.draws,
                           pool=pool)
    assert earlier.hold_and_cash_win == cap and earlier.progressive_win == share


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), bet=st.sampled_from(BET_CLASSES),
       pool=st.integers(0, 10**9))
def test_no_round_pays_more_than_the_cap(seed: int, bet: int, pool: int) -> None:
    model = _model(MAX_WIN_ROUND, _HOLD_BASE, **_HOLD)
    result = play_round(model, bet, SeededSource(seed), pool=pool)
    assert result.total_win <= CAP_X * result.total_bet
    withheld = sum(hit.withheld for hit in result.jackpot_hits)
    assert result.pool_before - result.progressive_win + result.pool_refill == result.pool_after
    assert result.progressive_win + withheld == sum(
        money.progressive_share(hit.pool_before, Cents(bet)) for hit in result.jackpot_hits)
    held = result.hold_and_cash.line_bets * bet if result.hold_and_cash else 0
    cut = result.base_win + result.star_wild_win + held > CAP_X * result.total_bet
    # the cap is logged when it cut the game win or a share, and then the round pays it all
    assert any(e["type"] == "max_win" for e in result.events) == (cut or withheld > 0)
    if cut or withheld:
        assert result.total_win == CAP_X * result.total_bet


def test_the_shares_of_a_round_fill_the_room_in_play_order() -> None:
    """Two spins with €€€ (a Star Wild round): the base spin's share first, then the respin's
    from the pool refilled after it, both within what the cap leaves."""
    rule = money.ONE_SHARE_PER_SPIN
    paid = money.jackpot_round(Cents(10_000), Cents(100), [1, 2], Cents(1_000), rule,
                               room=Cents(12_000))
    assert [a.win for a in paid.awards] == [10_000, 1_000]  # 10,000; then 1,000 of the seed
    assert paid.withheld == 0 and paid.pool_after == 1_000
    tight = money.jackpot_round(Cents(10_000), Cents(100), [1, 2], Cents(1_000), rule,
                                room=Cents(10_500))
    assert [a.win for a in tight.awards] == [10_000, 500]
    assert [a.withheld for a in tight.awards] == [0, 500]
    assert tight.pool_after == 1_000 - 500 + 500  # refilled to the seed, then 500 stay
    earlier = money.jackpot_round(Cents(10_000), Cents(50), [3], Cents(1_000),
                                  money.EACH_LINE_FROM_THE_REST, room=Cents(6_000))
    # lines: 5,000 of 10,000; then 2,500 of the 5,000 left, cut to the 1,000 of room; then 0
    assert earlier.awards[0].shares == (5_000, 1_000, 0)
    assert earlier.withheld == 1_500 + 2_000 and earlier.win == 6_000
    with pytest.raises(ValueError, match="room"):
        money.jackpot_award(Cents(100), Cents(1), 1, rule, room=Cents(-1))


def test_the_scope_is_model_data_and_the_old_reading_keeps_its_hash() -> None:
    capped = load_model("capped")
    data = capped.to_dict()
    assert data["max_win_scope"] == capped.max_win_scope
    other = dict(data, max_win_scope=MAX_WIN_ROUND if capped.max_win_scope == MAX_WIN_GAME
                 else MAX_WIN_GAME)
    assert model_from_dict(other).sha256 != capped.sha256
    game = dict(data, max_win_scope=MAX_WIN_GAME)
    without = {k: v for k, v in game.items() if k != "max_win_scope"}
    # an archived capped file made before the key reads as "game", with the same hash
    assert model_from_dict(without, archived=True).sha256 == model_from_dict(game).sha256
    assert model_from_dict(without, archived=True).max_win_scope == MAX_WIN_GAME


@pytest.mark.parametrize("bad", ["", "ROUND", "all", 1, True, None])
def test_an_unknown_scope_is_refused(bad: object) -> None:
    data = load_model("capped").to_dict()
    data["max_win_scope"] = bad
    with pytest.raises(ModelError, match="max_win_scope") as refused:
        model_from_dict(data)
    assert "\n" not in str(refused.value)


def test_a_cap_without_a_scope_follows_the_rules_now() -> None:
    """A current model file that sets a cap and no scope holds the whole round; an archived
    one, made before the key, the game win (the rule it was played by)."""
    data = load_model("default").to_dict()
    assert "max_win_scope" not in data  # no cap, no scope
    data["max_win_x"] = CAP_X
    assert model_from_dict(data).max_win_scope == MAX_WIN_ROUND
    assert model_from_dict(data, archived=True).max_win_scope == MAX_WIN_GAME
