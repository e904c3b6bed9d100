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
    from starfever.math.exact import StarWildCase
    from starfever.math.fullcycle import FullCycle
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
    full_cycle: bool = False
    """True when every term but the Star Wild respin's own second moment is exact."""

    @property
    def note(self) -> str:
        """How it was obtained."""
        if self.full_cycle:
            return (f"exact (full cycle) except the Star Wild respin's second moment, estimated "
                    f"from {self.samples:,} sampled respins; 99 % CI "
                    f"[{self.low:.4f}, {self.high:.4f}]")
        return (f"Hold & Cash moments exact; line and Star Wild second moments estimated from "
                f"{self.samples:,} sampled spins, 99 % CI [{self.low:.3f}, {self.high:.3f}]")


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


def std_dev_full_cycle(model: MathModel, game_rtp: Fraction, features: dict[int, FeatureMoments],
                       coin_counts: dict[int, Fraction], cycle: FullCycle,
                       cases: list[StarWildCase], *, respins_per_case: int = 4000,
                       seed: int = SEED) -> StdDev:
    """The standard deviation from the full cycle's exact cross moments.

    E[X^2] = E[L^2] + 2E[L H] + 2E[L W] + E[H^2] + E[W^2] (H and W never meet in one round). All
    terms are exact except E[W^2] = sum over 4-coin patterns of P(pattern) E[W^2 | pattern],
    whose conditional moments are estimated from sampled respins.
    """
    n = cycle.combinations
    per_total = Fraction(1, LINE_COUNT)
    exact_part = Fraction(cycle.line_win_squares, n) * per_total ** 2
    for coins, m in features.items():
        exact_part += 2 * Fraction(cycle.line_win_by_coins[coins], n) * per_total * m.mean
        exact_part += coin_counts[coins] * m.second
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    w2 = 0.0
    w2_var = 0.0
    for case in cases:
        bits = tuple(sum(1 << r for r, c in enumerate(p) if c) for p in case.patterns)
        exact_part += (2 * Fraction(int(cycle.line_win_by_mask[bits]), n) * per_total
                       * case.expected_pay * per_total)
        grid = _spin(model.star_wild_reels, rng, respins_per_case)
        for (reel, row), symbol in case.wilds.items():
            grid[:, reel, row] = SYMBOL_INDEX[symbol]
        pays = _line_pays(grid) / LINE_COUNT
        p = float(case.probability)
        w2 += p * float(np.mean(pays * pays))
        w2_var += p * p * float(np.var(pays * pays, ddof=1)) / respins_per_case
    mean_sq = float(exact_part) + w2
    half = Z99 * math.sqrt(w2_var)
    mu = float(game_rtp)

    def sd(x: float) -> float:
        return math.sqrt(max(x - mu * mu, 0.0))

    return StdDev(value=sd(mean_sq), low=sd(mean_sq - half), high=sd(mean_sq + half),
                  samples=respins_per_case * len(cases), full_cycle=True)
