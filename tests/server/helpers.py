"""Shared helpers of the server tests: forcing rounds with test_draws, reading the books."""

from __future__ import annotations

from functools import cache

from sqlalchemy import text
from sqlalchemy.engine import Engine

from starfever.engine import load_model, replay_round
from starfever.engine.model import MathModel
from starfever.engine.rng import ReplayError
from starfever.engine.symbols import COIN, JACKPOT


@cache
def model() -> MathModel:
    """The default model the servers play."""
    return load_model("default")


@cache
def jackpot_draws() -> tuple[int, ...]:
    """Five reel stops that put JACKPOT on row 1 of reels 0-2 (lines 1, 18, 19 hit), no
    feature: the round uses exactly these draws."""
    strips = model().base_reels
    stops = [strips[reel].index(JACKPOT) - 1 for reel in range(3)]
    for s3 in range(len(strips[3])):
        for s4 in range(len(strips[4])):
            draws = (*stops, s3, s4)
            try:
                result = replay_round(model(), 100, draws, pool=model().seed_cents)
            except ReplayError:
                continue
            if result.feature is None and result.progressive_win:
                return draws
    raise AssertionError("no jackpot draws found")


@cache
def feature_draws(feature: str) -> tuple[int, ...]:
    """Draws that play a whole round with ``feature`` (found by scanning base stops, then
    completing the feature's draws with zeros... checked by the engine)."""
    strips = model().base_reels
    need = 4 if feature == "star_wild" else 5
    coin_stops = [[s for s in range(len(strip))
                   if COIN in {strip[(s + r) % len(strip)] for r in range(3)}]
                  for strip in strips]
    base = [coin_stops[reel][0] if reel < need else 0 for reel in range(5)]
    for extra in range(0, 400):
        draws = (*base, *([0] * extra))
        try:
            result = replay_round(model(), 1, draws)
        except ReplayError:
            continue
        if result.feature == feature:
            return draws
    raise AssertionError(f"no draws found for {feature}")


def books(engine: Engine) -> dict[str, int]:
    """Sum of ledger entries per book, plus wallets and pool as stored."""
    with engine.connect() as conn:
        sums = {book: int(total) for book, total in conn.execute(text(
            "SELECT book, SUM(amount) FROM ledger_entries GROUP BY book"))}
        sums["wallets_stored"] = int(conn.execute(text(
            "SELECT COALESCE(SUM(balance), 0) FROM wallets")).scalar_one())
        sums["pool_stored"] = int(conn.execute(text(
            "SELECT amount FROM jackpot_pool")).scalar_one())
    return sums
