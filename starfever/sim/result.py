"""What a simulation found: exact integer sums, and the estimates derived from them.

Wins are kept as integer sums in line bets (the kernel's unit), so merging chunks is exact and a
result is the same whatever the number of workers; RTPs are per unit total bet (20 line bets).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

Z_99 = 2.5758293035489004
"""Two-sided 99 % quantile of the standard normal distribution."""
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
        return Estimate(mean, (mean - Z_99 * se, mean + Z_99 * se), se)


def proportion(count: int, trials: int) -> Estimate:
    """A frequency with its 99 % Wilson score interval (good for rare events too)."""
    p = count / trials
    z2 = Z_99 * Z_99
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z_99 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return Estimate(p, (max(0.0, centre - half), min(1.0, centre + half)),
                    math.sqrt(p * (1 - p) / trials))


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
    """Event counts: ``hits`` (a line win, a €€€ line or a feature), ``winning_rounds``,
    ``star_wilds``, ``holds``, ``megas``, ``minors``, ``majors``, ``hold_respins``,
    ``jackpot_spins`` (base spins with a €€€ line), ``jackpot_lines`` (base),
    ``respin_jackpot_lines``, ``jackpot_rounds`` (rounds with any €€€ line)."""
    max_win: float
    """Largest round win, in total bets."""
    histogram_edges: tuple[float, ...]
    """Log-spaced bin edges in total bets (5 per decade)."""
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

    def rtp_trace(self) -> list[tuple[int, float]]:
        """(spins so far, total RTP so far) after each chunk: a convergence plot's points."""
        points = []
        spins = wins = 0
        for n, w in zip(self.chunk_spin_counts, self.chunk_game_wins, strict=True):
            spins += n
            wins += w
            points.append((spins, wins / spins / LINE_BETS_PER_TOTAL_BET + self.contribution_rate))
        return points
