"""Exact value of Hold & Cash: a dynamic programme over (held CASH, held Minor/Major) with the
respin counter, solved in rational arithmetic.

Why it is small: given how many cells hold CASH, every booster acts affinely on the *sum* S of the
held cash values (UPGRADE: S + c u, MULTIPLIER: 2S; u the UPGRADE's unit in total bets, 1 or
1/20 by ``upgrade_unit``), so the expected payout from a state is
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
from typing import Any

from starfever.engine.model import UPGRADE_LINE_BET, HoldAndCashModel
from starfever.engine.symbols import (
    CASH_VALUES,
    CELLS,
    LINE_COUNT,
    MAJOR_PAYS,
    MEGA_PAYS,
    MINOR_PAYS,
)

F = Fraction


def upgrade_step(weights: HoldAndCashModel) -> Fraction:
    """What one UPGRADE adds to a held CASH value, in total bets: 1/20 for ``line_bet`` (RULES.md
    since 2026-12-03), 1 for ``total_bet``."""
    return F(1, LINE_COUNT) if weights.upgrade_unit == UPGRADE_LINE_BET else F(1)


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


class StepwiseHoldAndCashSolver:
    """Solves the feature for one set of weights, one landing at a time (the reference that
    :class:`HoldAndCashSolver` is checked against)."""

    def __init__(self, weights: HoldAndCashModel, *, exact: bool = True) -> None:
        """``exact=False`` solves in floats (relative error ~1e-13), for fast searches."""
        self.exact = exact
        self.weights = weights
        total = sum(weights.cell_weights)
        self.p = [self._number(w, total) for w in weights.cell_weights]
        self.cash_mean, self.cash_sq = self._value_moments(weights.cash_values)
        self.coin_mean, self.coin_sq = self._value_moments(weights.coin_values)
        unit = upgrade_step(weights)  # one UPGRADE's addition: the booster term T scales by it
        self.upgrade = self._number(unit.numerator, unit.denominator)
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
                t1, t2 = t1 * self.upgrade, t2 * self.upgrade ** 2
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


@dataclass(frozen=True)
class _Child:
    """Every landing of one state that leads to one other state, summed: the expectations
    (times their probability) that the recursions need. Y is the landing's S' - alpha*S, J
    its Minor/Major pay (total bets), alpha = 2^MULTIPLIERs."""

    cash: int
    jackpots: int
    p: Fraction
    pa: Fraction
    """E[alpha; landing]; likewise ``pa2`` E[alpha^2], ``pj`` E[J], ``pj2`` E[J^2]..."""
    pa2: Fraction
    pj: Fraction
    pj2: Fraction
    pja: Fraction
    minors: Fraction
    majors: Fraction
    py: Fraction
    pjy: Fraction
    pay: Fraction
    py2: Fraction


class HoldAndCashSolver(StepwiseHoldAndCashSolver):
    """Solves the feature for one set of weights, the landings of a state summed by the state
    they lead to first (about 60 instead of up to 3,000 per state). The sums are taken in
    integers over the common denominator (total cell weight)^(empty cells) and depend on the
    empty cells and the new CASH count only; the same rationals as the stepwise solver."""

    def __init__(self, weights: HoldAndCashModel, *, exact: bool = True) -> None:
        super().__init__(weights, exact=exact)
        self._by_empty: dict[int, dict[tuple[int, int], tuple[Fraction, ...]]] = {}
        self._kids: dict[tuple[int, int], tuple[Fraction, list[_Child], _Child]] = {}

    def _sums(self, empty: int) -> dict[tuple[int, int], tuple[Fraction, ...]]:
        """(new CASH, new Minor + Major) -> the sums over those landings of N, N alpha,
        N alpha^2, N J, N J^2, N J alpha, N Minors, N Majors, N T1, N J T1, N alpha T1 and N T2
        (N: the landing's probability, T: the booster term); (0, 0): the booster-only ones."""
        if empty in self._by_empty:
            return self._by_empty[empty]
        weights: tuple[Any, ...] = tuple(self.weights.cell_weights if self.exact else self.p)
        # integers over the common denominator (floats when not exact)
        ints: dict[tuple[int, int], list[Any]] = {}
        per_booster: dict[tuple[int, int], dict[tuple[int, int], list[Any]]] = {}
        for counts in _compositions(empty, 6):
            if counts[0] == empty:
                continue  # all blank
            n: Any = factorial(empty)
            for k in counts:
                n //= factorial(k)
            for k, w in zip(counts, weights, strict=True):
                n *= w ** k
            if not n:
                continue
            _, x, m1, m2, u, m = counts
            alpha, j = 1 << m, MINOR_PAYS * m1 + MAJOR_PAYS * m2
            acc = ints.setdefault((x, m1 + m2), [0] * 8)
            for i, term in enumerate((n, n * alpha, n * alpha * alpha, n * j, n * j * j,
                                      n * j * alpha, n * m1, n * m2)):
                acc[i] += term
            by_t = per_booster.setdefault((x, m1 + m2), {}).setdefault((u, m), [0, 0])
            by_t[0] += n
            by_t[1] += n * j
        scale: Any = F(1, sum(weights) ** empty) if self.exact else 1
        out: dict[tuple[int, int], tuple[Fraction, ...]] = {}
        for key, acc in ints.items():
            t1 = t1j = t1a = t2 = F(0)
            for (u, m), (n, nj) in per_booster[key].items():
                if u:
                    m1_, m2_ = _booster_moments(u, m)
                    t1 += m1_ * n
                    t1j += m1_ * nj
                    t1a += m1_ * n * (1 << m)
                    t2 += m2_ * n
            step = self.upgrade
            values: list[Any] = [v * scale for v in (*acc, t1 * step, t1j * step, t1a * step,
                                                      t2 * step * step)]
            out[key] = tuple(values) if self.exact else tuple(float(v) for v in values)  # type: ignore[misc]
        self._by_empty[empty] = out
        return out

    def _children(self, cash: int, jackpots: int) -> tuple[Fraction, list[_Child], _Child]:
        """P(all blank), the summed landings by the state they lead to, and the booster-only
        ones (which lead back)."""
        key = (cash, jackpots)
        if key in self._kids:
            return self._kids[key]
        empty = CELLS - cash - jackpots
        mean, square = self.cash_mean, self.cash_sq
        kids = []
        loop = _Child(cash, jackpots, *(F(0),) * 12)
        for (x, jj), (p, pa, pa2, pj, pj2, pja, mi, ma, t1, t1j, t1a, t2) in sorted(
                self._sums(empty).items()):
            c2 = cash + x
            x1 = x * mean
            x2 = x * (square - mean * mean) + x1 * x1
            child = _Child(c2, jackpots + jj, p, pa, pa2, pj, pj2, pja, mi, ma,
                           py=x1 * pa + c2 * t1, pjy=x1 * pja + c2 * t1j, pay=x1 * pa2 + c2 * t1a,
                           py2=x2 * pa2 + 2 * c2 * x1 * t1a + c2 * c2 * t2)
            if x == jj == 0:
                loop = child
            else:
                kids.append(child)
        self._kids[key] = (self.p[0] ** empty, kids, loop)
        return self._kids[key]

    def first(self, cash: int, jackpots: int, what: str) -> tuple[Fraction, Fraction]:
        key = (cash, jackpots, what)
        if key in self._first:
            return self._first[key]
        terminal_a = F(1) if what == "payout" else F(0)
        if cash + jackpots == CELLS:
            mega = {"payout": MEGA_PAYS, "mega": 1}.get(what, 0)
            return terminal_a, F(mega)
        p0, kids, loop = self._children(cash, jackpots)
        const_a = const_b = F(0)
        for kid in kids:
            gain = {"payout": kid.pj, "minor": kid.minors, "major": kid.majors}.get(what, 0)
            a_n, b_n = self.first(kid.cash, kid.jackpots, what)
            const_a += a_n * kid.pa
            const_b += a_n * kid.py + b_n * kid.p + gain
        a3 = self._close_loop(p0, const_a, loop.pa, terminal_a)
        b3 = self._close_loop(p0, const_b + a3 * loop.py, loop.p, F(0))
        self._first[key] = (a3, b3)
        return a3, b3

    def second(self, cash: int, jackpots: int) -> tuple[Fraction, Fraction, Fraction]:
        key = (cash, jackpots)
        if key in self._second:
            return self._second[key]
        if cash + jackpots == CELLS:
            return F(1), F(2 * MEGA_PAYS), F(MEGA_PAYS ** 2)
        p0, kids, loop = self._children(cash, jackpots)
        ca = cb = cd = F(0)
        for kid in kids:
            a_n, b_n, d_n = self.second(kid.cash, kid.jackpots)
            m_a, m_b = self.first(kid.cash, kid.jackpots, "payout")
            ca += a_n * kid.pa2
            cb += 2 * a_n * kid.pay + b_n * kid.pa + 2 * m_a * kid.pja
            cd += (a_n * kid.py2 + b_n * kid.py + d_n * kid.p + kid.pj2
                   + 2 * m_a * kid.pjy + 2 * m_b * kid.pj)
        a3 = self._close_loop(p0, ca, loop.pa2, F(1))
        b3 = self._close_loop(p0, cb + 2 * a3 * loop.pay, loop.pa, F(0))
        d3 = self._close_loop(p0, cd + a3 * loop.py2 + b3 * loop.py, loop.p, F(0))
        self._second[key] = (a3, b3, d3)
        return a3, b3, d3


@lru_cache(maxsize=8)
def solver_for(weights: HoldAndCashModel, *, exact: bool = True) -> HoldAndCashSolver:
    """One solver per set of weights in a process: the rational solve of a model takes seconds,
    and a solver keeps every state it has solved, so the PAR sheet, the full-cycle check, the
    server's RTP meters and a test session each pay for it once."""
    return HoldAndCashSolver(weights, exact=exact)

