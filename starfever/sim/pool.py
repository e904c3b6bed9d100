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

A model whose max-win cap holds the whole round (``max_win_scope`` ``round``) pays each share
only up to what the cap leaves above the round's game win (the fourth field of a €€€ round);
the rest stays in the pool, as in the engine (``money.jackpot_round``'s ``room``).

Between two €€€ rounds the pool only grows, so the mean pool over all spins is a sum of floors
of an arithmetic progression, computed exactly (:func:`floor_sum`) without visiting the spins.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from starfever.engine import money
from starfever.engine.model import MAX_WIN_ROUND, MathModel
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
    withheld: int = 0
    """Cents of shares the max-win cap left no room for (they stayed in the pool)."""

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


def _round(jackpot_round: Sequence[int]) -> tuple[int, tuple[int, ...], int]:
    """(spin, €€€ lines per spin, game win in line bets) of a €€€ round ``(spin, base lines[,
    respin lines[, game win]])``."""
    spin, *rest = jackpot_round
    return spin, tuple(rest[:2]), rest[2] if len(rest) > 2 else 0


def jackpot_cap_x(model: MathModel) -> int | None:
    """The cap (total bets) that holds ``model``'s €€€ shares: its ``max_win_x`` when the cap
    holds the whole round, else ``None`` (no cap, or an earlier model that pays the share on
    top)."""
    return model.max_win_x if model.max_win_scope == MAX_WIN_ROUND else None


def cap_room(cap_x: int | None, line_bet: int, game: int) -> Cents | None:
    """Cents a cap of ``cap_x`` total bets that holds the whole round leaves for the €€€ of a
    round whose game win is ``game`` line bets (``None``: no such cap)."""
    if cap_x is None:
        return None
    return Cents(max(0, money.feature_win(cap_x, Cents(line_bet)) - money.in_line_bets(
        game, Cents(line_bet))))


def replay_pool(spins: int, jackpot_rounds: Iterable[Sequence[int]], line_bet: int,
                rate: Fraction, seed: int, rule: str = money.ONE_SHARE_PER_SPIN,
                cap_x: int | None = None) -> PoolReport:
    """Replay the €€€ rounds ``(spin number, €€€ lines of the base spin[, of the respin[, game
    win in line bets]])`` of a ``spins``-spin run at ``line_bet`` against a pool that starts at
    ``seed`` cents and receives ``rate`` of every total bet, paying them under the jackpot
    ``rule``. ``cap_x``: the model's max-win cap when it holds the whole round (the
    ``max_win_x`` of a ``max_win_scope`` ``round`` model), else ``None``."""
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
    hits = paid = refills = refill_count = withheld = 0
    done = 0  # spins accounted for
    for spin, lines, game in sorted(_round(r) for r in jackpot_rounds):
        k = spin + 1  # spins played up to and including this one
        pool_sum += base * (k - 1 - done) + pools_sum(done + 1, k - 1)
        pool = base + received(k)
        pool_sum += pool
        won = money.jackpot_round(Cents(pool), bet, lines, Cents(seed), rule,
                                  cap_room(cap_x, bet, game))
        paid += won.win
        withheld += won.withheld
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
                      staked=spins * money.total_bet(bet), withheld=withheld)


@dataclass(frozen=True, slots=True)
class ClassShare:
    """One bet class's part of a shared pool. Amounts in cents."""

    line_bet: int
    spins: int
    staked: int
    hits: int
    paid: int

    @property
    def progressive_rtp(self) -> float:
        """What the pool paid this class, per cent it staked."""
        return self.paid / self.staked if self.staked else 0.0


@dataclass(frozen=True, slots=True)
class SharedPoolReport:
    """One pool fed by every class of a mix."""

    classes: tuple[ClassShare, ...]
    seed: int
    contributions: int
    refills: int
    final_pool: int
    withheld: int = 0
    """Cents of shares the max-win cap left no room for (they stayed in the pool)."""

    @property
    def staked(self) -> int:
        """Cents bet by all classes."""
        return sum(c.staked for c in self.classes)

    @property
    def refill_rate(self) -> float:
        """The operator's refills per cent staked."""
        return self.refills / self.staked

    @property
    def balanced(self) -> bool:
        """Seed + contributions + refills = paid + final pool."""
        return (self.seed + self.contributions + self.refills
                == sum(c.paid for c in self.classes) + self.final_pool)


def replay_shared_pool(runs: Sequence[tuple[int, int, Iterable[Sequence[int]]]],
                       rate: Fraction, seed: int, rule: str = money.ONE_SHARE_PER_SPIN,
                       cap_x: int | None = None) -> SharedPoolReport:
    """Replay several classes' runs ``(line bet, spins, €€€ rounds)`` against ONE pool: the
    spins of each run are spread evenly over the same stretch of time (spin s of a run of n at
    time (s + 1/2) / n; ties go to the earlier run), every spin contributes ``rate`` of its
    total bet (one carry for the pool: after any prefix of the play it has received the floor
    of the exact sum), and the €€€ rounds are paid in time order by ``money.jackpot_round``
    (``cap_x`` as in :func:`replay_pool`)."""
    lengths = [n for _, n, _ in runs]
    bets = [check_line_bet(b) for b, _, _ in runs]
    per_spin = [money.total_bet(b) * Fraction(rate) for b in bets]
    events = sorted(((spin, i, lines, game) for i, (_, _, rounds) in enumerate(runs)
                     for spin, lines, game in map(_round, rounds)),
                    key=lambda e: (Fraction(2 * e[0] + 1, 2 * lengths[e[1]]), e[1]))

    def played(j: int, spin: int, i: int) -> int:
        """Spins of run j played up to and including spin ``spin`` of run i."""
        if j == i:
            return spin + 1
        a, b = (2 * spin + 1) * lengths[j], lengths[i]
        count = max(0, (a - b + 2 * b - 1) // (2 * b)) if a > b else 0
        if a % b == 0 and (a // b) % 2 == 1 and j < i:
            count += 1
        return min(count, lengths[j])

    def received(counts: Sequence[int]) -> int:
        exact = sum((c * p for c, p in zip(counts, per_spin, strict=True)), Fraction(0))
        return exact.numerator // exact.denominator

    base = seed
    paid = [0] * len(runs)
    hits = [0] * len(runs)
    refills = withheld = 0
    for spin, i, lines, game in events:
        got = received([played(j, spin, i) for j in range(len(runs))])
        won = money.jackpot_round(Cents(base + got), bets[i], lines, Cents(seed), rule,
                                  cap_room(cap_x, bets[i], game))
        paid[i] += won.win
        hits[i] += sum(len(a.shares) for a in won.awards)
        refills += won.refill
        withheld += won.withheld
        base = won.pool_after - got
    total = received(lengths)
    return SharedPoolReport(
        classes=tuple(ClassShare(line_bet=int(b), spins=n, staked=n * money.total_bet(b),
                                 hits=h, paid=p)
                      for b, n, h, p in zip(bets, lengths, hits, paid, strict=True)),
        seed=seed, contributions=total, refills=refills, final_pool=base + total,
        withheld=withheld)
