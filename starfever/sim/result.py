"""What a simulation found: exact integer sums, and the estimates derived from them.

Wins are kept as integer sums in line bets (the kernel's unit), so merging chunks is exact and a
result is the same whatever the number of workers; RTPs are per unit total bet (20 line bets).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from starfever.math.stats import Z99

LINE_BETS_PER_TOTAL_BET = 20
COMPONENTS = ("lines", "star_wild", "hold_and_cash")
"""Game components the kernel simulates (the progressive is its contribution rate)."""
FREQUENCIES = ("hit", "star_wild", "hold_and_cash", "mega", "jackpot")
"""Event frequencies per paid spin; ``jackpot`` = a base spin with at least one €€€ line
(the definition of ``jackpot_frequency`` in ``starfever rtp --json``)."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """A per-spin mean estimated by simulation, with its 99 % confidence interval."""

    value: float
    """The estimate (an RTP as a fraction of the total bet, or a frequency per paid spin)."""
    ci99: tuple[float, float]
    """Lower and upper end of the 99 % confidence interval."""
    std_error: float
    """Standard error of ``value``."""

    def contains(self, exact: float) -> bool:
        """Whether the interval holds ``exact``."""
        return self.ci99[0] <= exact <= self.ci99[1]


@dataclass(frozen=True, slots=True)
class Moments:
    """Sum and sum of squares of one win component over all spins, in line bets (exact)."""

    total: int
    """Sum of the component's win per spin."""
    squares: int
    """Sum of its squares."""

    def estimate(self, spins: int) -> Estimate:
        """Mean per spin in total bets, with a normal 99 % interval from the sample variance."""
        mean = self.total / spins / LINE_BETS_PER_TOTAL_BET
        # (n Q - S^2) / n^2 is the population variance, exact in integers before the division
        variance = (spins * self.squares - self.total * self.total) / (spins * spins)
        se = math.sqrt(max(variance, 0.0) / max(spins - 1, 1)) / LINE_BETS_PER_TOTAL_BET
        return Estimate(mean, (mean - Z99 * se, mean + Z99 * se), se)


def proportion(count: int, trials: int) -> Estimate:
    """A frequency with its 99 % Wilson score interval (good for rare events too)."""
    p = count / trials
    z2 = Z99 * Z99
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z99 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return Estimate(p, (max(0.0, centre - half), min(1.0, centre + half)),
                    math.sqrt(p * (1 - p) / trials))


@dataclass(frozen=True, slots=True)
class VarianceReduced:
    """The variance-reduced estimate of the game's RTP. NOT an independent check of the exact
    maths: it uses two exact figures (see :meth:`SimulationResult.variance_reduced`)."""

    game: Estimate
    """RTP of lines, Star Wild and Hold & Cash (total bets), with its 99 % interval."""
    rtp: Estimate
    """``game`` plus the contribution rate."""
    beta: float
    """The fitted control-variate coefficient on the base line win."""
    variance_ratio: float
    """Per-spin variance of the plain estimator over that of this one: each spin here is worth
    this many plain spins."""
    effective_spins: float
    """Spins a plain run would need for the same interval: spins x ``variance_ratio``."""


@dataclass(frozen=True)
class SimulationResult:
    """Everything one ``simulate`` run measured. Reproducible from (model, seed, spins)."""

    model: str
    """Name of the math model."""
    seed: int
    """Entropy of the root ``SeedSequence``; chunk ``i`` plays from its ``i``-th spawned child."""
    spins: int
    """Paid spins (rounds) played."""
    workers: int = field(compare=False)
    """Processes that played (not part of the result's identity: it does not depend on them)."""
    chunk_spins: int
    """Spins per chunk (the last chunk may be shorter): part of what makes a run reproducible."""
    contribution_rate: float
    """The €€€ contribution rate: the progressive's return, added to the game's RTP."""
    moments: dict[str, Moments]
    """Per component (``lines``, ``star_wild``, ``hold_and_cash``) and ``game`` (their sum per
    spin): exact sums and sums of squares in line bets."""
    counts: dict[str, int]
    """Event counts: ``hits`` (total win above zero: a game win or a €€€ share),
    ``winning_rounds`` (game win above zero),
    ``star_wilds``, ``holds``, ``megas``, ``minors``, ``majors``, ``hold_respins``,
    ``jackpot_spins`` (base spins with a €€€ line), ``jackpot_lines`` (base),
    ``respin_jackpot_lines``, ``jackpot_rounds`` (rounds with any €€€ line)."""
    max_win: float
    """Largest round win, in total bets."""
    histogram_edges: tuple[float, ...]
    """Bin edges in total bets: log-spaced (5 per decade) and the win bands' ends + 1/40."""
    win_histogram: tuple[int, ...]
    """Rounds by game win: ``[0]`` won nothing; ``[k]``, k >= 1, won in
    ``[edges[k-2], edges[k-1])`` (``[1]``: above 0 and below ``edges[0]``; the last bin: from
    ``edges[-1]`` up)."""
    hold_and_cash_histogram: tuple[int, ...]
    """Hold & Cash features by payout (total bets), binned like ``win_histogram``."""
    chunk_spin_counts: tuple[int, ...]
    """Spins of each chunk, in chunk order."""
    chunk_game_wins: tuple[int, ...]
    """Game win (line bets) of each chunk, in chunk order: the convergence trace."""
    elapsed_seconds: float = field(compare=False)
    """Wall-clock time of the run (not part of the result's identity)."""
    jackpot_rounds_at: tuple[tuple[int, int, int, int], ...] = ()
    """(spin number in the run, €€€ lines of the base spin, of the Star Wild respin, the
    round's game win in line bets) of every round with €€€ lines, in play order: what
    :mod:`starfever.sim.pool` replays against a pool (the game win says what room a cap that
    holds the whole round leaves for the share)."""
    holds_by_coins: tuple[int, ...] = ()
    """``[n]``: Hold & Cash features triggered by ``n`` coins."""
    lines_by_coins: tuple[int, ...] = ()
    """``[n]``: base line wins (line bets) summed over the spins that triggered with ``n``."""
    lines_x_star_wild: int = 0
    """Sum over spins of base line win x Star Wild win (line bets squared)."""
    cluster: str | None = field(default=None, compare=False)
    """The Dask scheduler the run played on, if any (not part of the result's identity)."""

    @property
    def spins_per_second(self) -> float:
        """Throughput of this run."""
        return self.spins / self.elapsed_seconds if self.elapsed_seconds > 0 else math.inf

    def component(self, name: str) -> Estimate:
        """RTP of ``lines``, ``star_wild``, ``hold_and_cash`` or ``game``, with its interval."""
        return self.moments[name].estimate(self.spins)

    @property
    def game(self) -> Estimate:
        """RTP of lines, Star Wild and Hold & Cash together."""
        return self.component("game")

    @property
    def rtp(self) -> Estimate:
        """Total RTP: the game's, plus the contribution rate (which has no sampling error)."""
        game = self.game
        rate = self.contribution_rate
        return Estimate(game.value + rate, (game.ci99[0] + rate, game.ci99[1] + rate),
                        game.std_error)

    def frequency(self, name: str) -> Estimate:
        """Per paid spin: ``hit``, ``star_wild``, ``hold_and_cash``, ``mega`` or ``jackpot``."""
        key = {"hit": "hits", "star_wild": "star_wilds", "hold_and_cash": "holds",
               "mega": "megas", "jackpot": "jackpot_spins"}[name]
        return proportion(self.counts[key], self.spins)

    def variance_reduced(self, lines_rtp: float,
                         hold_means: Mapping[int, float]) -> VarianceReduced:
        """The game's RTP with two exact figures plugged in, for a narrower interval:

        - each Hold & Cash is replaced by its exact conditional mean given the trigger's coin
          count, ``hold_means[n]`` in total bets (``HoldAndCashSolver.feature(n).mean``), so the
          feature's own spread drops out (conditional Monte Carlo);
        - the base line win ``L`` is a control variate with known mean ``lines_rtp`` (total
          bets, ``exact.compute(...).lines``): the estimate is ``mean(Y) - beta (mean(L) -
          lines_rtp)`` with ``beta = Cov(Y, L) / Var(L)`` fitted on the run (a regression
          estimator: its bias is O(1/spins), far below its interval).

        Everything comes from the run's integer sums, in any merge order."""
        n = self.spins
        per_total = LINE_BETS_PER_TOTAL_BET
        lines, star = self.moments["lines"], self.moments["star_wild"]
        hold = {k: per_total * float(hold_means[k]) for k, c in enumerate(self.holds_by_coins)
                if c}
        h_sum = sum(self.holds_by_coins[k] * h for k, h in hold.items())
        h_sq = sum(self.holds_by_coins[k] * h * h for k, h in hold.items())
        l_h = sum(self.lines_by_coins[k] * h for k, h in hold.items())
        mean_l = lines.total / n
        mean_y = (lines.total + star.total + h_sum) / n
        second_y = (lines.squares + star.squares + h_sq + 2 * self.lines_x_star_wild
                    + 2 * l_h) / n
        var_y = second_y - mean_y * mean_y
        var_l = lines.squares / n - mean_l * mean_l
        cov = (lines.squares + self.lines_x_star_wild + l_h) / n - mean_y * mean_l
        beta = cov / var_l if var_l > 0 else 0.0
        value = mean_y - beta * (mean_l - per_total * lines_rtp)
        var_vr = max(var_y - beta * cov, 0.0)
        se = math.sqrt(var_vr / max(n - 1, 1)) / per_total
        mean = value / per_total
        game = Estimate(mean, (mean - Z99 * se, mean + Z99 * se), se)
        rate = self.contribution_rate
        plain_se = self.game.std_error
        ratio = (plain_se / se) ** 2 if se > 0 else math.inf
        return VarianceReduced(
            game=game,
            rtp=Estimate(mean + rate, (game.ci99[0] + rate, game.ci99[1] + rate), se),
            beta=beta, variance_ratio=ratio, effective_spins=n * ratio)

    def rtp_trace(self) -> list[tuple[int, float]]:
        """(spins so far, total RTP so far) after each chunk: a convergence plot's points."""
        points = []
        spins = wins = 0
        for n, w in zip(self.chunk_spin_counts, self.chunk_game_wins, strict=True):
            spins += n
            wins += w
            points.append((spins, wins / spins / LINE_BETS_PER_TOTAL_BET + self.contribution_rate))
        return points
