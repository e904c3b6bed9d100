"""Standard deviation of a round's win (per unit total bet, the €€€ pool left out).

Exact where tractable, estimated where not:
- the Hold & Cash payout's conditional mean and second moment given its coin count are exact
  (``holdcash``), so no Hold & Cash is simulated;
- the base line win L, its joint law with the coin count, and the Star Wild respin win W need the
  joint of all five reels (and of the respin), so E[(L + W)^2 + 2(L + W) m(n) + s(n)] is estimated
  by sampling base spins and respins, and reported with a 99 % confidence interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from starfever.engine.model import MathModel
from starfever.engine.symbols import COIN, LINE_COUNT, LINES, MWILD, ROWS, STAR_WILD_COINS, WILD
from starfever.math.holdcash import FeatureMoments

if TYPE_CHECKING:
    pass
from starfever.math.stats import Z99
from starfever.math.tables import SYMBOL_INDEX, line_pay_table, strip_windows

SAMPLES = 2_000_000
SEED = 20261130


@dataclass(frozen=True)
class StdDev:
    """The standard deviation estimate and its 99 % interval, in total bets."""

    value: float
    low: float
    high: float
    samples: int


def _line_pays(windows: np.ndarray) -> np.ndarray:
    """Sum of line pays (in line bets) for windows[spin, reel, row] of symbol indices."""
    table = line_pay_table()
    total = np.zeros(windows.shape[0], dtype=np.int64)
    for line in LINES:
        total += table[tuple(windows[:, reel, row] for reel, row in enumerate(line))]
    return total


def _spin(strips: tuple[tuple[str, ...], ...], rng: np.random.Generator, n: int) -> np.ndarray:
    reels = [strip_windows(s)[rng.integers(0, len(s), n)] for s in strips]
    return np.stack(reels, axis=1)  # (n, 5, 3)


def std_dev(model: MathModel, game_rtp: Fraction, features: dict[int, FeatureMoments],
            coin_counts: dict[int, Fraction], *, samples: int = SAMPLES,
            seed: int = SEED) -> StdDev:
    """Estimate the standard deviation of one round's win per unit total bet."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    base = _spin(model.base_reels, rng, samples)
    is_coin = base == SYMBOL_INDEX[COIN]
    coins = is_coin.sum(axis=(1, 2))
    lines = _line_pays(base).astype(np.float64) / LINE_COUNT
    respin = np.zeros(samples)
    star = np.flatnonzero(coins == STAR_WILD_COINS)
    if star.size:
        grid = _spin(model.star_wild_reels, rng, star.size)
        mask = is_coin[star]
        stacked = mask.sum(axis=2, keepdims=True) == ROWS
        wild = np.where(stacked, SYMBOL_INDEX[MWILD], SYMBOL_INDEX[WILD])
        grid = np.where(mask, wild, grid)
        respin[star] = _line_pays(grid) / LINE_COUNT
    first = np.zeros(samples)
    for n, m in features.items():
        first[coins == n] = float(m.mean)
    paid = lines + respin
    # E[H^2] is exact: sum over coin counts of P(n) * E[payout^2 | n]
    hold_second = float(sum((coin_counts[n] * m.second for n, m in features.items()),
                            Fraction(0)))
    per_spin = paid * paid + 2 * paid * first
    mean_sq = per_spin.mean() + hold_second
    half = Z99 * per_spin.std(ddof=1) / math.sqrt(samples)
    mu = float(game_rtp)

    def sd(x: float) -> float:
        return math.sqrt(max(x - mu * mu, 0.0))

    return StdDev(value=sd(mean_sq), low=sd(mean_sq - half), high=sd(mean_sq + half),
                  samples=samples)
