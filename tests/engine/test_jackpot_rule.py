"""The €€€ rule of RULES.md (a spin wins at most one share of the pool as it stood), and the
earlier rule, kept for the archived model versions whose rounds must still replay."""

from __future__ import annotations

from functools import cache

import pytest

from starfever.engine import money
from starfever.engine.model import MathModel, load_model_version
from starfever.engine.rng import ReplayError
from starfever.engine.round import RoundResult, replay_round
from starfever.engine.symbols import BET_CLASSES, JACKPOT, Cents

_RULED = load_model_version("default", "2.0")
assert _RULED is not None
CURRENT: MathModel = _RULED
"""The first default version under the current rule (kept in the archive once replaced)."""
EARLIER = load_model_version("default", "1.0")


@cache
def _multi_line_draws() -> tuple[int, ...]:
    """Base stops showing JACKPOT on rows (0, 0, 1) of reels 0-2, so on lines 9 and 12, and no
    feature."""
    strips = CURRENT.base_reels
    stops = [(strips[reel].index(JACKPOT) - row) % len(strips[reel])
             for reel, row in enumerate((0, 0, 1))]
    for s3 in range(len(strips[3])):
        for s4 in range(len(strips[4])):
            try:
                result = replay_round(CURRENT, 1, (*stops, s3, s4))
            except ReplayError:
                continue
            if result.feature is None and len(result.jackpot_hits[0].lines) >= 2:
                return (*stops, s3, s4)
    raise AssertionError("no draws with two EUR lines")


def _play(model: MathModel, bet: int, pool: int) -> RoundResult:
    return replay_round(model, bet, _multi_line_draws(), pool=pool)


def test_the_archived_version_differs_only_in_its_rule() -> None:
    assert EARLIER is not None
    assert (CURRENT.jackpot_rule, EARLIER.jackpot_rule) == (
        money.ONE_SHARE_PER_SPIN, money.EACH_LINE_FROM_THE_REST)
    assert CURRENT.version != EARLIER.version and CURRENT.sha256 != EARLIER.sha256
    assert (CURRENT.base_reels, CURRENT.star_wild_reels, CURRENT.hold_and_cash,
            CURRENT.contribution_rate, CURRENT.seed_cents) == (
        EARLIER.base_reels, EARLIER.star_wild_reels, EARLIER.hold_and_cash,
        EARLIER.contribution_rate, EARLIER.seed_cents)
    assert load_model_version("default", "0.9") is None
    assert load_model_version("no-such-model", "1.0") is None


@pytest.mark.parametrize("bet", BET_CLASSES)
@pytest.mark.parametrize("pool", [100_000, 123_457, 9_999_999])
def test_several_lines_of_one_spin_win_one_share_of_the_pool(bet: int, pool: int) -> None:
    result = _play(CURRENT, bet, pool)
    (hit,) = result.jackpot_hits
    assert len(hit.lines) >= 2
    assert result.progressive_win == hit.win == pool * bet // 100
    assert hit.pool_before == pool and hit.pool_left == pool - hit.win
    assert result.pool_refill == hit.refill == max(0, CURRENT.seed_cents - hit.pool_left)
    assert result.pool_after == hit.pool_left + hit.refill
    (event,) = [e for e in result.events if e["type"] == "jackpot"]
    assert event["lines"] == list(hit.lines) and event["win"] == hit.win


@pytest.mark.parametrize("bet", BET_CLASSES)
def test_the_earlier_rule_pays_each_line_from_what_the_earlier_left(bet: int) -> None:
    assert EARLIER is not None
    pool = 250_000
    result = _play(EARLIER, bet, pool)
    events = [e for e in result.events if e["type"] == "jackpot"]
    left, paid = pool, 0
    for event in events:  # the old log: one event per line
        share = left * bet // 100
        left -= share
        paid += share
        assert (event["win"], event["pool_left"]) == (share, left)
        assert "lines" not in event
    assert len(events) >= 2 and result.progressive_win == paid
    assert result.pool_refill == max(0, EARLIER.seed_cents - left)


def test_the_share_per_euro_staked_is_the_same_at_every_bet_class() -> None:
    """The point of the rule: a hit returns pool / 2000 total bets at every class."""
    pool = 300_000
    per_total_bet = {money.jackpot_award(Cents(pool), bet, 3, money.ONE_SHARE_PER_SPIN).win
                     / money.total_bet(bet) for bet in BET_CLASSES}
    assert per_total_bet == {pool / 2000}
    earlier = {money.jackpot_award(Cents(pool), bet, 2, money.EACH_LINE_FROM_THE_REST).win
               / money.total_bet(bet) for bet in BET_CLASSES}
    assert len(earlier) == len(BET_CLASSES)  # differed by class


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown jackpot rule"):
        money.jackpot_award(Cents(1000), Cents(1), 1, "each line twice")
