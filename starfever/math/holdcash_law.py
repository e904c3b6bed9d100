"""The whole law of a Hold & Cash payout (not only its moments): an integer dynamic programme
over the payout, compiled.

Every Hold & Cash amount is a whole multiple of one *cell* of the DP: CASH values (1..5 total
bets), +1 UPGRADE step per held CASH, x2 per MULTIPLIER, Minor 20, Major 200, Mega 1000 total
bets. The cell is the UPGRADE's step: the total bet for ``upgrade_unit`` ``total_bet``, the line
bet (1/20 of it) for ``line_bet``, so the DP stays an integer DP (``PayoutLaw.unit`` cells per
total bet; every amount in total bets is multiplied by it). The state between respins is
(c held CASH, j held Minor/Major of which a Minors, S the sum of the CASH values); the respin
counter is folded away: from a state, the feature ends with probability p0^3 (three blank
respins, p0 = P(every empty cell blank)), and otherwise the next respin that lands something is
landing ``o`` with probability P(o) (1 + p0 + p0^2). After landing ``o`` (x new CASH worth X in
all, m1 Minors, m2 Majors, u UPGRADEs and m MULTIPLIERs, the boosters in a uniformly random
reading order), S' = 2^m (S + X) + (c + x) T, with T = sum over the UPGRADEs of 2^(MULTIPLIERs
after it).

Each landing either holds more cells or, boosters alone, raises S, so the states are solved in
order of held cells, and within a state in order of S: one forward pass, no iteration. S is
kept exactly up to ``cap``; a state whose S passes the cap is absorbed into one bucket, "payout
above the cap" (S only grows, and the payout is at least S), so every probability
P(payout >= k) for k <= cap + 1 is exact up to float rounding.

The pass is grouped so that no work repeats (``_forward``): from a state, the new CASH values
are added once per number x of new CASH (one convolution of the state's S law), and the
landings that differ only in how many UPGRADEs they bring are merged into one law of the
booster term per (x, Minors, Majors, MULTIPLIERs); booster-only landings (the self-loop) are
applied first, in order of S. ``_forward_direct`` is the landing-by-landing pass it replaced,
kept as the reference the tests compare with.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from itertools import accumulate, combinations
from math import factorial
from typing import Any, NamedTuple

import numba as nb
import numpy as np
import numpy.typing as npt

from starfever.engine.model import UPGRADE_LINE_BET, HoldAndCashModel
from starfever.engine.symbols import (
    CASH_VALUES,
    CELLS,
    HOLD_AND_CASH_COINS,
    LINE_COUNT,
    MAJOR_PAYS,
    MEGA_PAYS,
    MINOR_PAYS,
)

DEFAULT_CAP = 12_000
"""S is kept exactly up to this many total bets (tails are asked up to 10,000)."""


@dataclass(frozen=True)
class PayoutLaw:
    """P(payout = k total bets) for one number of triggering coins."""

    coins: int
    """Triggering Star Coins."""
    probabilities: npt.NDArray[np.float64]
    """``[k]``: P(payout = k), for k up to ``cap`` + the largest jackpot sum."""
    above_cap: float
    """P(S, and so the payout, passed ``cap``)."""
    cap: int
    """The exact range of S, in total bets."""
    mega: float
    """P(Mega)."""
    unit: int = 1
    """Cells of ``probabilities`` per total bet: 1 (UPGRADE adds 1 x total bet) or 20 (it adds
    1 x line bet); ``probabilities[i]`` is P(payout = i / unit total bets)."""

    def at_least(self, k: int) -> float:
        """P(payout >= k total bets), exact for k <= cap + 1."""
        return self.at_least_cells(k * self.unit)

    def at_least_cells(self, i: int) -> float:
        """P(payout >= i / unit total bets), exact for i <= (cap + 1) x unit."""
        if i > (self.cap + 1) * self.unit:
            raise ValueError(f"P(payout >= {i / self.unit:g}) is beyond the exact range "
                             f"(cap {self.cap})")
        return float(self.probabilities[max(i, 0):].sum()) + self.above_cap


def _value_law(weights: tuple[int, ...], unit: int = 1) -> npt.NDArray[np.float64]:
    """P(value = v cells) of one CASH value (``unit`` cells per total bet)."""
    law = np.zeros(max(CASH_VALUES) * unit + 1)
    for v, w in zip(CASH_VALUES, weights, strict=True):
        law[v * unit] = w / sum(weights)
    return law


def _sum_laws(law: npt.NDArray[np.float64], most: int) -> npt.NDArray[np.float64]:
    """``[x, v]``: P(x independent values sum to v), x = 0..most."""
    out = np.zeros((most + 1, (len(law) - 1) * most + 1))
    out[0, 0] = 1.0
    for x in range(1, most + 1):
        row = np.convolve(out[x - 1], law)[: out.shape[1]]
        out[x] = row
    return out


@cache
def _booster_law(upgrades: int, multipliers: int) -> tuple[tuple[int, float], ...]:
    """The law of T = sum over UPGRADEs of 2^(MULTIPLIERs after it), all orders equally likely."""
    slots = upgrades + multipliers
    found: dict[int, int] = {}
    for places in combinations(range(slots), upgrades):
        t = sum(2 ** (slots - 1 - i - (upgrades - 1 - k)) for k, i in enumerate(places))
        found[t] = found.get(t, 0) + 1
    total = sum(found.values())
    return tuple(sorted((t, n / total) for t, n in found.items()))


def _landings(p: list[float], empty: int) -> list[tuple[int, int, int, int, int, float]]:
    """Every landing of ``empty`` cells except all blank: (x, m1, m2, u, m, probability)."""
    out = []
    for x in range(empty + 1):
        for m1 in range(empty - x + 1):
            for m2 in range(empty - x - m1 + 1):
                for u in range(empty - x - m1 - m2 + 1):
                    for m in range(empty - x - m1 - m2 - u + 1):
                        blank = empty - x - m1 - m2 - u - m
                        if blank == empty:
                            continue
                        ways = factorial(empty) // (factorial(blank) * factorial(x)
                                                    * factorial(m1) * factorial(m2)
                                                    * factorial(u) * factorial(m))
                        prob = ways * (p[0] ** blank * p[1] ** x * p[2] ** m1 * p[3] ** m2
                                       * p[4] ** u * p[5] ** m)
                        if prob > 0:
                            out.append((x, m1, m2, u, m, prob))
    return out


@nb.njit(cache=True, nogil=True)
def _forward_direct(order: npt.NDArray[np.int64], state_of: npt.NDArray[np.int64],
             index: npt.NDArray[np.int64],
             mass: npt.NDArray[np.float64], p_end: npt.NDArray[np.float64],
             land_start: npt.NDArray[np.int64], land: npt.NDArray[np.int64],
             land_prob: npt.NDArray[np.float64], sums: npt.NDArray[np.float64],
             t_start: npt.NDArray[np.int64], t_value: npt.NDArray[np.int64],
             t_prob: npt.NDArray[np.float64], payout: npt.NDArray[np.float64],
             out: npt.NDArray[np.float64], unit: int) -> None:
    """One forward pass; ``out[0]``: mass above the cap, ``out[1]``: Mega; amounts in cells
    (``unit`` per total bet)."""
    cap = mass.shape[1] - 1
    cells = 15
    for idx in order:
        c, j, a = state_of[idx, 0], state_of[idx, 1], state_of[idx, 2]
        empty = cells - c - j
        jackpots = (20 * a + 200 * (j - a)) * unit
        for s in range(cap + 1):
            v = mass[idx, s]
            if v == 0.0:
                continue
            if empty == 0:
                payout[s + jackpots + 1000 * unit] += v
                out[1] += v
                continue
            payout[s + jackpots] += v * p_end[empty]
            for k in range(land_start[empty], land_start[empty + 1]):
                x, m1, m2, u, m = land[k, 0], land[k, 1], land[k, 2], land[k, 3], land[k, 4]
                c2 = c + x
                target = index[c2 * 256 + (j + m1 + m2) * 16 + a + m1]
                factor = 1 << m
                w = v * land_prob[k]
                t0, t1 = t_start[u * 16 + m], t_start[u * 16 + m + 1]
                for cash in range(x * unit, 5 * x * unit + 1, unit):
                    px = sums[x, cash]
                    if px == 0.0:
                        continue
                    base = factor * (s + cash)
                    for t in range(t0, t1):
                        s2 = base + c2 * t_value[t]
                        q = w * px * t_prob[t]
                        if s2 > cap:
                            out[0] += q
                        else:
                            mass[target, s2] += q


@nb.njit(cache=True, nogil=True)
def _forward(order: npt.NDArray[np.int64], state_of: npt.NDArray[np.int64],
             index: npt.NDArray[np.int64], mass: npt.NDArray[np.float64],
             p_end: npt.NDArray[np.float64], loop_start: npt.NDArray[np.int64],
             loop_m: npt.NDArray[np.int64], loop_t: npt.NDArray[np.int64],
             loop_q: npt.NDArray[np.float64], loop_rest: npt.NDArray[np.float64],
             loop_next: npt.NDArray[np.int64], group_start: npt.NDArray[np.int64],
             groups: npt.NDArray[np.int64], group_q: npt.NDArray[np.float64],
             entry_start: npt.NDArray[np.int64], entry_t: npt.NDArray[np.int64],
             entry_q: npt.NDArray[np.float64], entry_rest: npt.NDArray[np.float64],
             sums: npt.NDArray[np.float64], payout: npt.NDArray[np.float64],
             out: npt.NDArray[np.float64], unit: int) -> None:
    """The same pass as ``_forward_direct``, grouped (module docstring): ``groups[g]`` =
    (x, Minors, Majors, MULTIPLIERs), sorted by x; its booster terms t (ascending) with
    probabilities ``entry_q`` (the landing's probability included), ``group_q[g]`` their sum
    and ``entry_rest`` the sum from each entry to the group's end; the booster-only landings
    ``loop_*`` likewise, sorted by (m, t), ``loop_rest`` summed to the end of the entry's m
    and ``loop_next`` the first entry with a larger m."""
    cap = mass.shape[1] - 1
    cells = 15
    w = np.zeros(cap + 1)
    above_w = np.zeros(cap + 2)  # above_w[y]: mass of w at y and beyond
    for idx in order:
        c, j, a = state_of[idx, 0], state_of[idx, 1], state_of[idx, 2]
        empty = cells - c - j
        jackpots = (20 * a + 200 * (j - a)) * unit
        v = mass[idx]
        lo = 0  # v is zero outside [lo, hi] (many states are never reached from a start)
        while lo <= cap and v[lo] == 0.0:
            lo += 1
        if lo > cap:
            continue
        if empty == 0:
            for s in range(lo, cap + 1):
                if v[s] != 0.0:
                    payout[s + jackpots + 1000 * unit] += v[s]
                    out[1] += v[s]
            continue
        # boosters alone: the same state, a larger S, so in order of S
        for s in range(lo, cap + 1):
            vs = v[s]
            if vs == 0.0:
                continue
            k = loop_start[empty]
            while k < loop_start[empty + 1]:
                s2 = (s << loop_m[k]) + c * loop_t[k]
                if s2 > cap:  # and so is every later entry with the same m (larger t)
                    out[0] += vs * loop_rest[k]
                    k = loop_next[k]
                else:
                    v[s2] += vs * loop_q[k]
                    k += 1
        hi = cap
        while v[hi] == 0.0:
            hi -= 1
        end = p_end[empty]
        for s in range(lo, hi + 1):
            if v[s] != 0.0:
                payout[s + jackpots] += v[s] * end
        x_now = -1
        tail = 0.0
        w_lo = w_hi = 0
        for g in range(group_start[empty], group_start[empty + 1]):
            x, m1, m2, m = groups[g, 0], groups[g, 1], groups[g, 2], groups[g, 3]
            if x != x_now:  # the law of S + X, X the x new CASH values
                x_now = x
                tail = 0.0
                w_lo, w_hi = min(lo + x * unit, cap), min(hi + 5 * x * unit, cap)
                w[w_lo:w_hi + 1] = 0.0
                if x == 0:
                    w[lo:hi + 1] = v[lo:hi + 1]
                else:
                    # w[y] takes v[s] px for each s + cash = y in ascending s (per s before,
                    # ADR 0045): so cash descending, s ascending within it; no terms skipped
                    # but zeros, which add nothing to a sum of non-negative terms
                    for cash in range(5 * x * unit, x * unit - 1, -unit):
                        px = sums[x, cash]
                        if px == 0.0:
                            continue
                        for s in range(lo, min(hi, cap - cash) + 1):
                            w[np.uint64(s + cash)] += v[np.uint64(s)] * px
                    for s in range(max(lo, cap - 5 * x * unit + 1), hi + 1):  # past the cap
                        vs = v[s]
                        if vs == 0.0:
                            continue
                        for cash in range(x * unit, 5 * x * unit + 1, unit):
                            px = sums[x, cash]
                            if px != 0.0 and s + cash > cap:
                                tail += vs * px
                above_w[w_hi + 1] = 0.0
                for y in range(w_hi, w_lo - 1, -1):
                    above_w[y] = above_w[y + 1] + w[y]
            c2 = c + x
            row = mass[index[c2 * 256 + (j + m1 + m2) * 16 + a + m1]]
            top = cap >> m  # 2^m y > cap beyond it
            if top < w_hi:
                out[0] += above_w[max(top + 1, w_lo)] * group_q[g]
            out[0] += tail * group_q[g]
            y_top = min(top, w_hi)
            e0, e1 = entry_start[g], entry_start[g + 1]
            # Cell s2 = 2^m y + c2 t takes one term per entry; the larger t, the smaller y.
            # Entries in descending t, y ascending within each, so add a cell's terms in
            # ascending y, the order of the pass per y (``_forward_direct``, ADR 0045): the
            # same sums, bit for bit, in runs over y that the compiler vectorises.
            for e in range(e1 - 1, e0 - 1, -1):
                shift = c2 * entry_t[e]
                if shift > cap:
                    continue
                q = entry_q[e]
                y_end = min(y_top, (cap - shift) >> m)
                if m == 0:  # unsigned indices: no check for a negative one, so SIMD
                    for y in range(w_lo, y_end + 1):
                        row[np.uint64(y + shift)] += w[np.uint64(y)] * q
                else:
                    for y in range(w_lo, y_end + 1):
                        row[np.uint64((y << m) + shift)] += w[np.uint64(y)] * q
            # the terms past the cap, per y in ascending order as before: from the first
            # entry whose cell is above it (sorted by t), the rest of the group at once
            first = max(w_lo, ((cap - c2 * entry_t[e1 - 1]) >> m) + 1)
            e = e1
            for y in range(first, y_top + 1):
                while e > e0 and (y << m) + c2 * entry_t[e - 1] > cap:
                    e -= 1
                wy = w[y]
                if wy != 0.0:
                    out[0] += wy * entry_rest[e]


class _Grouped(NamedTuple):
    """The landings of every number of empty cells, grouped for ``_forward`` (its arguments
    of the same names)."""

    loop_start: npt.NDArray[np.int64]
    loop_m: npt.NDArray[np.int64]
    loop_t: npt.NDArray[np.int64]
    loop_q: npt.NDArray[np.float64]
    loop_rest: npt.NDArray[np.float64]
    loop_next: npt.NDArray[np.int64]
    group_start: npt.NDArray[np.int64]
    groups: npt.NDArray[np.int64]
    group_q: npt.NDArray[np.float64]
    entry_start: npt.NDArray[np.int64]
    entry_t: npt.NDArray[np.int64]
    entry_q: npt.NDArray[np.float64]
    entry_rest: npt.NDArray[np.float64]


def _grouped(p: list[float]) -> _Grouped:
    """The landings of every number of empty cells (cell probabilities ``p``), grouped."""
    loop_start: list[int] = [0]
    loop_m: list[int] = []
    loop_t: list[int] = []
    loop_q: list[float] = []
    loop_rest: list[float] = []
    loop_next: list[int] = []
    group_start: list[int] = [0]
    groups: list[tuple[int, int, int, int]] = []
    group_q: list[float] = []
    entry_start: list[int] = [0]
    entry_t: list[int] = []
    entry_q: list[float] = []
    entry_rest: list[float] = []
    for empty in range(CELLS + 1):
        if empty:
            p0 = p[0] ** empty
            again = 1 + p0 + p0 * p0
            loops: dict[tuple[int, int], float] = {}
            found: dict[tuple[int, int, int, int], dict[int, float]] = {}
            for x, m1, m2, u, m, prob in _landings(p, empty):
                q = prob * again
                law = _booster_law(u, m) if u else ((0, 1.0),)
                if x == m1 == m2 == 0:
                    for t, pt in law:
                        loops[(m, t)] = loops.get((m, t), 0.0) + q * pt
                else:
                    terms = found.setdefault((x, m1, m2, m), {})
                    for t, pt in law:
                        terms[t] = terms.get(t, 0.0) + q * pt
            ordered = sorted(loops.items())
            offset = len(loop_m)
            rest, block_end = [0.0] * len(ordered), [0] * len(ordered)
            for k in range(len(ordered) - 1, -1, -1):  # sums to the end of each m's block
                (m, _), q = ordered[k]
                more = k + 1 < len(ordered) and ordered[k + 1][0][0] == m
                rest[k] = q + (rest[k + 1] if more else 0.0)
                block_end[k] = block_end[k + 1] if more else offset + k + 1
            for k, ((m, t), q) in enumerate(ordered):
                loop_m.append(m)
                loop_t.append(t)
                loop_q.append(q)
                loop_rest.append(rest[k])
                loop_next.append(block_end[k])
            for key in sorted(found):
                groups.append(key)
                terms = found[key]
                group_q.append(sum(terms.values()))
                ts = sorted(terms)
                tail = list(accumulate(terms[t] for t in reversed(ts)))[::-1]
                for t, r in zip(ts, tail, strict=True):
                    entry_t.append(t)
                    entry_q.append(terms[t])
                    entry_rest.append(r)
                entry_start.append(len(entry_t))
        loop_start.append(len(loop_m))
        group_start.append(len(groups))
    ints = np.int64
    return _Grouped(np.array(loop_start, dtype=ints), np.array(loop_m, dtype=ints),
            np.array(loop_t, dtype=ints), np.array(loop_q), np.array(loop_rest),
            np.array(loop_next, dtype=ints), np.array(group_start, dtype=ints),
            np.array(groups, dtype=ints).reshape(-1, 4), np.array(group_q),
            np.array(entry_start, dtype=ints), np.array(entry_t, dtype=ints), np.array(entry_q),
            np.array(entry_rest))


def _direct_tables(p: list[float]) -> tuple[npt.NDArray[Any], ...]:
    """The landing-by-landing pass's tables: per number of empty cells the landings (x, m1,
    m2, u, m) and their probabilities (with the self-loop's factor), and per (u, m) the law of
    the booster term T."""
    starts = [0]
    rows: list[tuple[int, int, int, int, int]] = []
    probs: list[float] = []
    for empty in range(CELLS + 1):
        p0 = p[0] ** empty
        if empty:
            for x, m1, m2, u, m, prob in _landings(p, empty):
                rows.append((x, m1, m2, u, m))
                probs.append(prob * (1 + p0 + p0 * p0))
        starts.append(len(rows))
    t_start = np.zeros(16 * 16 + 1, dtype=np.int64)
    t_value: list[int] = []
    t_prob: list[float] = []
    for u in range(16):
        for m in range(16):
            t_start[u * 16 + m] = len(t_value)
            if u + m <= CELLS:
                for t, q in (_booster_law(u, m) if u else ((0, 1.0),)):
                    t_value.append(t)
                    t_prob.append(q)
    t_start[-1] = len(t_value)
    return (np.array(starts, dtype=np.int64), np.array(rows, dtype=np.int64).reshape(-1, 5),
            np.array(probs), t_start, np.array(t_value, dtype=np.int64), np.array(t_prob))


def payout_laws(weights: HoldAndCashModel, *, cap: int = DEFAULT_CAP,
                coins: tuple[int, ...] = tuple(range(HOLD_AND_CASH_COINS, CELLS + 1)),
                direct: bool = False, threads: int | None = None) -> dict[int, PayoutLaw]:
    """The payout law of the feature for each number of triggering ``coins`` (default 5..15);
    ``cap`` in total bets; ``direct``: by the landing-by-landing pass (the reference, ~25 times
    slower); the coin counts are solved on ``threads`` threads (default numba's; 1 beside other
    work: two solves at once contend for memory, each sweeping ~80 MB for a ``total_bet``
    model, up to 20 times that for ``line_bet``, and cost a third more CPU). A start with n
    coins keeps only the states with at least n CASH cells, the only ones it can reach."""
    unit = LINE_COUNT if weights.upgrade_unit == UPGRADE_LINE_BET else 1
    cells = cap * unit
    total = sum(weights.cell_weights)
    p = [w / total for w in weights.cell_weights]
    p_end = np.array([(p[0] ** empty) ** 3 for empty in range(CELLS + 1)])
    sums = _sum_laws(_value_law(weights.cash_values, unit), CELLS)
    coin_sums = _sum_laws(_value_law(weights.coin_values, unit), CELLS)
    if direct:
        landed = _direct_tables(p)
    else:
        grouped = _grouped(p)

    def solve(n: int) -> PayoutLaw:
        states = [(c, j, a) for c in range(n, CELLS + 1) for j in range(CELLS + 1 - c)
                  for a in range(j + 1)]
        state_of = np.array(states, dtype=np.int64)
        index = np.full(16 * 256, -1, dtype=np.int64)  # c*256 + j*16 + a -> state
        for i, (c, j, a) in enumerate(states):
            index[c * 256 + j * 16 + a] = i
        order = np.array(sorted(range(len(states)), key=lambda i: states[i][0] + states[i][1]),
                         dtype=np.int64)
        mass = np.zeros((len(states), cells + 1))
        start = coin_sums[n][: cells + 1]
        mass[index[n * 256], : len(start)] = start
        payout = np.zeros(cells + (MAJOR_PAYS * (CELLS - HOLD_AND_CASH_COINS) + MEGA_PAYS) * unit
                          + 1)
        out = np.zeros(2)
        if direct:
            land_start, land, land_prob, t_start, t_value, t_prob = landed
            _forward_direct(order, state_of, index, mass, p_end, land_start, land, land_prob,
                            sums, t_start, t_value, t_prob, payout, out, unit)
        else:
            _forward(order, state_of, index, mass, p_end, *grouped, sums, payout, out, unit)
        return PayoutLaw(coins=n, probabilities=payout, above_cap=float(out[0]), cap=cap,
                         mega=float(out[1]), unit=unit)

    assert (MINOR_PAYS, MAJOR_PAYS, MEGA_PAYS) == (20, 200, 1000)  # as compiled in _forward
    with ThreadPoolExecutor(max_workers=threads or max(1, nb.get_num_threads())) as pool:
        return dict(zip(coins, pool.map(solve, coins), strict=True))
