"""Exact value of Hold & Cash: a dynamic programme over (held CASH, held Minor/Major) with the
respin counter, solved in rational arithmetic.

Why it is small: given how many cells hold CASH, every booster acts affinely on the *sum* S of the
held cash values (UPGRADE: S + c, MULTIPLIER: 2S), so the expected payout from a state is
``A*S + B`` and its second moment ``a*S^2 + b*S + d``. Boosters that land alone reset the counter
to 3 without changing the state: that self-loop is solved in closed form, not by recursion.
Every empty cell draws independently, so only the counts per kind matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from itertools import combinations
from math import factorial

from starfever.engine.model import HoldAndCashModel
from starfever.engine.symbols import (
    CASH_VALUES,
    CELLS,
    MAJOR_PAYS,
    MEGA_PAYS,
    MINOR_PAYS,
)

F = Fraction


@dataclass(frozen=True)
class FeatureMoments:
    """Exact moments of one Hold & Cash feature, payouts in multiples of the total bet."""

    mean: Fraction
    """Expected payout."""
    second: Fraction
    """Expected squared payout."""
    mega: Fraction
    """Probability of the Mega jackpot."""
    minors: Fraction
    """Expected number of MINOR symbols."""
    majors: Fraction
    """Expected number of MAJOR symbols."""


@dataclass(frozen=True)
class _Outcome:
    prob: Fraction
    cash: int
    minor: int
    major: int
    upgrades: int
    multipliers: int


@dataclass(frozen=True)
class _Step:
    """One way a respin can change the state: S becomes alpha*S + Y."""

    prob: Fraction
    alpha: int
    cash: int
    jackpots: int
    minor: int
    major: int
    y1: Fraction
    """E[Y]"""
    y2: Fraction
    """E[Y^2]"""


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 1:
        return [(total,)]
    return [(first, *rest) for first in range(total + 1)
            for rest in _compositions(total - first, parts - 1)]


@cache
def _booster_moments(upgrades: int, multipliers: int) -> tuple[Fraction, Fraction]:
    """E[T] and E[T^2] for T = sum over UPGRADEs of 2^(MULTIPLIERs after it), the order of the
    boosters in reading order being a uniformly random arrangement."""
    slots = upgrades + multipliers
    total1 = total2 = n = 0
    for places in combinations(range(slots), upgrades):
        # the UPGRADE at position i has (slots - 1 - i) boosters after it, of which the ones
        # not UPGRADEs (those at later places) are MULTIPLIERs
        t = sum(2 ** (slots - 1 - i - (upgrades - 1 - k)) for k, i in enumerate(places))
        total1 += t
        total2 += t * t
        n += 1
    return F(total1, n), F(total2, n)


class HoldAndCashSolver:
    """Solves the feature for one set of weights."""

    def __init__(self, weights: HoldAndCashModel, *, exact: bool = True) -> None:
        """``exact=False`` solves in floats (relative error ~1e-13), for fast searches."""
        self.exact = exact
        total = sum(weights.cell_weights)
        self.p = [self._number(w, total) for w in weights.cell_weights]
        self.cash_mean, self.cash_sq = self._value_moments(weights.cash_values)
        self.coin_mean, self.coin_sq = self._value_moments(weights.coin_values)
        self._outcomes: dict[int, list[_Outcome]] = {}
        self._first: dict[tuple[int, int, str], tuple[Fraction, Fraction]] = {}
        self._second: dict[tuple[int, int], tuple[Fraction, Fraction, Fraction]] = {}
        self._steps: dict[tuple[int, int], tuple[Fraction, list[_Step], list[_Step]]] = {}

    def _number(self, numerator: int, denominator: int = 1) -> Fraction:
        if self.exact:
            return F(numerator, denominator)
        return numerator / denominator  # type: ignore[return-value]

    def _value_moments(self, weights: tuple[int, ...]) -> tuple[Fraction, Fraction]:
        total = sum(weights)
        mean = self._number(sum(v * w for v, w in zip(CASH_VALUES, weights, strict=True)), total)
        square = self._number(sum(v * v * w for v, w in zip(CASH_VALUES, weights, strict=True)),
                              total)
        return mean, square

    def outcomes(self, empty: int) -> list[_Outcome]:
        """Every way ``empty`` cells can land, by counts per kind, with its probability."""
        if empty not in self._outcomes:
            found = []
            for counts in _compositions(empty, 6):
                ways = factorial(empty)
                prob = self._number(1)
                for n, p in zip(counts, self.p, strict=True):
                    ways //= factorial(n)
                    prob *= p ** n
                if prob:
                    found.append(_Outcome(prob * ways, *counts[1:]))
            self._outcomes[empty] = found
        return self._outcomes[empty]

    def _transitions(self, cash: int, jackpots: int) -> tuple[Fraction, list[_Step], list[_Step]]:
        """P(all blank), the steps that move on, and the booster-only steps that loop back."""
        key = (cash, jackpots)
        if key not in self._steps:
            empty = CELLS - cash - jackpots
            onward: list[_Step] = []
            loops: list[_Step] = []
            for o in self.outcomes(empty):
                if o.cash == o.minor == o.major == o.upgrades == o.multipliers == 0:
                    continue
                cash_after = cash + o.cash
                alpha = 2 ** o.multipliers
                t1, t2 = _booster_moments(o.upgrades, o.multipliers)
                x1 = o.cash * self.cash_mean
                x2 = o.cash * (self.cash_sq - self.cash_mean ** 2) + x1 * x1
                step = _Step(
                    prob=o.prob, alpha=alpha, cash=cash_after,
                    jackpots=jackpots + o.minor + o.major, minor=o.minor, major=o.major,
                    y1=alpha * x1 + cash_after * t1,
                    y2=alpha * alpha * x2 + 2 * alpha * cash_after * x1 * t1
                    + cash_after ** 2 * t2,
                )
                (loops if o.cash == o.minor == o.major == 0 else onward).append(step)
            self._steps[key] = (self.p[0] ** empty, onward, loops)
        return self._steps[key]

    @staticmethod
    def _close_loop(p0: Fraction, const: Fraction, loop: Fraction, terminal: Fraction) -> Fraction:
        """V3 from V_k = p0*V_{k-1} + const + loop*V3 (k = 1, 2, 3) and V0 = terminal."""
        g = 1 + p0 + p0 * p0
        return (p0 ** 3 * terminal + const * g) / (1 - loop * g)

    def first(self, cash: int, jackpots: int, what: str) -> tuple[Fraction, Fraction]:
        """(A, B) with E[what | state, S] = A*S + B at 3 respins left.

        ``what``: ``"payout"`` (in total bets), ``"mega"``, ``"minor"`` or ``"major"`` counts.
        """
        key = (cash, jackpots, what)
        if key in self._first:
            return self._first[key]
        terminal_a = F(1) if what == "payout" else F(0)
        if cash + jackpots == CELLS:
            mega = {"payout": MEGA_PAYS, "mega": 1}.get(what, 0)
            return terminal_a, F(mega)
        p0, onward, loops = self._transitions(cash, jackpots)
        const_a = const_b = F(0)
        for st in onward:
            gain = {"payout": MINOR_PAYS * st.minor + MAJOR_PAYS * st.major,
                    "minor": st.minor, "major": st.major}.get(what, 0)
            a_n, b_n = self.first(st.cash, st.jackpots, what)
            const_a += st.prob * a_n * st.alpha
            const_b += st.prob * (a_n * st.y1 + b_n + gain)
        loop_a = sum((st.prob * st.alpha for st in loops), F(0))
        a3 = self._close_loop(p0, const_a, loop_a, terminal_a)
        const_b += sum((st.prob * a3 * st.y1 for st in loops), F(0))
        b3 = self._close_loop(p0, const_b, sum((st.prob for st in loops), F(0)), F(0))
        self._first[key] = (a3, b3)
        return a3, b3

    def second(self, cash: int, jackpots: int) -> tuple[Fraction, Fraction, Fraction]:
        """(a, b, d) with E[payout^2 | state, S] = a*S^2 + b*S + d at 3 respins left."""
        key = (cash, jackpots)
        if key in self._second:
            return self._second[key]
        if cash + jackpots == CELLS:
            return F(1), F(2 * MEGA_PAYS), F(MEGA_PAYS ** 2)
        p0, onward, loops = self._transitions(cash, jackpots)
        ca = cb = cd = F(0)
        for st in onward:
            j = MINOR_PAYS * st.minor + MAJOR_PAYS * st.major
            a_n, b_n, d_n = self.second(st.cash, st.jackpots)
            m_a, m_b = self.first(st.cash, st.jackpots, "payout")
            ca += st.prob * a_n * st.alpha * st.alpha
            cb += st.prob * (2 * a_n * st.alpha * st.y1 + b_n * st.alpha + 2 * j * m_a * st.alpha)
            cd += st.prob * (a_n * st.y2 + b_n * st.y1 + d_n + j * j
                             + 2 * j * (m_a * st.y1 + m_b))
        a3 = self._close_loop(p0, ca, sum((st.prob * st.alpha ** 2 for st in loops), F(0)), F(1))
        cb += sum((st.prob * 2 * a3 * st.alpha * st.y1 for st in loops), F(0))
        b3 = self._close_loop(p0, cb, sum((st.prob * st.alpha for st in loops), F(0)), F(0))
        cd += sum((st.prob * (a3 * st.y2 + b3 * st.y1) for st in loops), F(0))
        d3 = self._close_loop(p0, cd, sum((st.prob for st in loops), F(0)), F(0))
        self._second[key] = (a3, b3, d3)
        return a3, b3, d3

    def feature(self, coins: int) -> FeatureMoments:
        """Exact moments of the feature triggered by ``coins`` Star Coins."""
        s1 = coins * self.coin_mean
        s2 = coins * (self.coin_sq - self.coin_mean ** 2) + s1 * s1
        a, b = self.first(coins, 0, "payout")
        qa, qb, qd = self.second(coins, 0)
        return FeatureMoments(
            mean=a * s1 + b,
            second=qa * s2 + qb * s1 + qd,
            mega=self.first(coins, 0, "mega")[1],
            minors=self.first(coins, 0, "minor")[1],
            majors=self.first(coins, 0, "major")[1],
        )


@lru_cache(maxsize=8)
def solver_for(weights: HoldAndCashModel, *, exact: bool = True) -> HoldAndCashSolver:
    """One solver per set of weights in a process: the rational solve of a model takes seconds,
    and a solver keeps every state it has solved, so the PAR sheet, the full-cycle check, the
    server's RTP meters and a test session each pay for it once."""
    return HoldAndCashSolver(weights, exact=exact)

