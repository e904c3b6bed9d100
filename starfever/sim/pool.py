"""The €€€ pool over a simulated run, at one bet class: what the progressive really pays.

The kernel counts €€€ lines but pays none (the game's return does not depend on the pool). This
module replays the run's €€€ rounds, in play order, against one installation's pool, exactly as
``starfever.engine.round.play_round`` and ``starfever.engine.money`` book them:

- every spin adds ``rate x total bet`` to the pool in whole cents, the fraction carried on
  (``money.progressive_contribution``): after ``k`` spins the pool has received
  ``floor(k x total bet x rate)`` cents in all;
- the €€€ lines of a round are paid by ``money.jackpot_round`` under the model's rule: a spin
  wins at most one share, ``floor(pool x line bet / 100)``, and the operator refills the pool to
  its seed after the win (archived model versions: every line from what the earlier ones
  left, one refill at the end of the round).

Between two €€€ rounds the pool only grows, so the mean pool over all spins is a sum of floors
of an arithmetic progression, computed exactly (:func:`floor_sum`) without visiting the spins.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from starfever.engine import money
from starfever.engine.symbols import Cents, check_line_bet


@dataclass(frozen=True, slots=True)
class PoolReport:
    """One bet class's €€€ pool over a run. Amounts in cents."""

    line_bet: int
    """The bet class (line bet, cents)."""
    spins: int
    """Spins played (every one contributes)."""
    seed: int
    """The pool's seed (start and refill level)."""
    contributions: int
    """Cents the spins paid into the pool."""
    hits: int
    """€€€ shares won (one per winning spin; one per line under the earlier rule)."""
    paid: int
    """Cents won from the pool."""
    refills: int
    """Cents the operator added to bring the pool back to its seed."""
    refill_count: int
    """Rounds after which the pool was refilled."""
    final_pool: int
    """The pool after the last spin."""
    mean_pool: float
    """The pool a spin played against (after its contribution), averaged over all spins."""
    staked: int
    """Cents bet: spins x total bet."""

    @property
    def progressive_rtp(self) -> float:
        """What the pool paid, per cent staked: the realised progressive return."""
        return self.paid / self.staked

    @property
    def balanced(self) -> bool:
        """Seed + contributions + refills = paid + final pool (no cent lost or made)."""
        return self.seed + self.contributions + self.refills == self.paid + self.final_pool


def floor_sum(n: int, m: int, a: int, b: int) -> int:
    """``sum(floor((a*i + b) / m) for i in range(n))`` for ``n, a, b >= 0``, ``m >= 1``, in
    O(log) steps (the Euclid-like reduction)."""
    total = 0
    while True:
        if a >= m:
            total += (n - 1) * n // 2 * (a // m)
            a %= m
        if b >= m:
            total += n * (b // m)
            b %= m
        y_max = a * n + b
        if y_max < m:
            return total
        n, b = divmod(y_max, m)
        m, a = a, m


def replay_pool(spins: int, jackpot_rounds: Iterable[tuple[int, ...]], line_bet: int,
                rate: Fraction, seed: int,
                rule: str = money.ONE_SHARE_PER_SPIN) -> PoolReport:
    """Replay the €€€ rounds ``(spin number, €€€ lines of the base spin[, of the respin])`` of a
    ``spins``-spin run at ``line_bet`` against a pool that starts at ``seed`` cents and receives
    ``rate`` of every total bet, paying them under the jackpot ``rule``."""
    bet = check_line_bet(line_bet)
    step = money.total_bet(bet) * Fraction(rate)  # cents per spin, before rounding
    num, den = step.numerator, step.denominator

    def received(k: int) -> int:
        """Whole cents the pool has received after ``k`` spins of the run."""
        return k * num // den

    def pools_sum(first: int, last: int) -> int:
        """Sum over spins ``first..last`` (1-based counts) of the cents received so far."""
        if last < first:
            return 0
        return floor_sum(last - first + 1, den, num, num * first)

    pool = seed  # the pool less what it has received: pool(k) = base + received(k)
    base = seed
    pool_sum = 0
    hits = paid = refills = refill_count = 0
    done = 0  # spins accounted for
    for spin, *lines in sorted(jackpot_rounds):
        k = spin + 1  # spins played up to and including this one
        pool_sum += base * (k - 1 - done) + pools_sum(done + 1, k - 1)
        pool = base + received(k)
        pool_sum += pool
        won = money.jackpot_round(Cents(pool), bet, lines, Cents(seed), rule)
        paid += won.win
        hits += sum(len(award.shares) for award in won.awards)
        refills += won.refill
        refill_count += sum(1 for refill in won.refills if refill > 0)
        pool = won.pool_after
        base = pool - received(k)
        done = k
    pool_sum += base * (spins - done) + pools_sum(done + 1, spins)
    final = base + received(spins)
    return PoolReport(line_bet=int(bet), spins=spins, seed=seed, contributions=received(spins),
                      hits=hits, paid=paid, refills=refills, refill_count=refill_count,
                      final_pool=final, mean_pool=pool_sum / spins,
                      staked=spins * money.total_bet(bet))
