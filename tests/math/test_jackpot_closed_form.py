"""The €€€ pool's long run at EUR 1.00 line bets alone, in closed form: against a pool played
spin by spin, and against the grid it replaces for that mix."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from starfever.engine import money
from starfever.engine.symbols import Cents
from starfever.math import jackpot


def test_closed_form_pool_at_a_win_matches_a_pool_played_spin_by_spin() -> None:
    """Each spin adds its contribution, then wins the whole pool with probability p (the pool
    it plays against holds its own contribution); after a win the pool restarts at the seed."""
    p, rate, seed = 0.002, Fraction(1, 100), 100_000
    run = jackpot.long_run({100: Fraction(1)}, p, rate, seed)
    assert run.method == "closed form"
    c = money.total_bet(Cents(100)) * float(rate)
    rng = np.random.default_rng(7)
    spins = rng.geometric(p, size=400_000)  # spins from one win to the next, the win included
    pools = seed + c * spins
    half = 4 * pools.std() / np.sqrt(len(pools))
    assert abs(run.mean_pool_at_win - pools.mean()) < half
    squares = pools.astype(np.float64) ** 2
    assert abs(run.mean_square_pool_at_win - squares.mean()) < 4 * squares.std() / np.sqrt(
        len(squares))
    assert run.refill_per_win == seed and run.balance_error == 0.0


def test_the_grid_approximates_the_closed_form() -> None:
    """Another mix goes through the grid; for a mix of EUR 1.00 spins with one 1-cent spin in
    a million the grid's answer lies near the closed form's (same mean to 1e-4, the second
    moment to the grid's geometric approximation, ~0.5 %)."""
    p, rate, seed = 1 / 30_118, Fraction(1, 100), 100_000
    exact = jackpot.long_run({100: Fraction(1)}, p, rate, seed)
    grid = jackpot.long_run({100: Fraction(999_999, 10**6), 1: Fraction(1, 10**6)}, p, rate,
                            seed)
    assert grid.method == "grid"
    assert abs(grid.mean_pool_at_win / exact.mean_pool_at_win - 1) < 1e-4
    assert abs(grid.mean_square_pool_at_win / exact.mean_square_pool_at_win - 1) < 0.01
