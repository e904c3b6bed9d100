"""Fast exact figures for the tuner: the partial figures a search step needs, in floats from
integer counts, with everything that does not depend on the step kept between steps.

The tuner changes the base reel strips one stop at a time and the Hold & Cash weights; the
Star Wild respin strips stay as they are. So these are computed once per search and cached:
- per 4-coin layout, the respin's expected line pay (over the respin strips' frequencies) and,
  when a standard deviation is asked for, its exact win histogram (``cycles.respin_histogram``);
- per coin layout of reels 0-2, whether a Star Wild respin with those wilds can pay nothing;
- per set of Hold & Cash weights, the feature's mean, second moment and P(Mega) by coin count.

A step then costs milliseconds: lines from the strips' symbol frequencies, the coin count and
layout laws from each reel's coin patterns, and "no line win and no €€€ line" over reels 0-2
updated incrementally (a stop change only touches the 3 windows that show it). The standard
deviation needs the joint law of all five reels (``cycles.base_joint``, seconds), so it is
exact for the current state and for weight steps, and estimated for strip steps from the current
state's cross moments (``Figures.sd_estimated``): the search ranks by it, the accepted state is
recomputed exactly, and the tuner's final check uses only exact figures.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import product
from pathlib import Path

import numpy as np
import numpy.typing as npt

from starfever.engine import money
from starfever.engine.model import HoldAndCashModel, MathModel, ReelStrip
from starfever.engine.round import star_wilds
from starfever.engine.symbols import (
    BET_CLASSES,
    CELLS,
    COIN,
    HOLD_AND_CASH_COINS,
    LINE_COUNT,
    LINES,
    ROWS,
    STAR_WILD_COINS,
    WILD,
)
from starfever.math import cycles
from starfever.math.exact import _pay_tables, expected_line_pay, respin_pays_nothing
from starfever.math.holdcash import HoldAndCashSolver
from starfever.math.tables import line_pay_table

Layout = tuple[int, ...]
"""Per reel, the rows holding a coin as bits."""

PAYS, JACK, INDEX = _pay_tables()
COIN_INDEX = INDEX[COIN]
POP = np.array([bin(m).count("1") for m in range(8)])
"""Coins in a reel's coin pattern (bits: rows)."""
HEAD_POP = np.array([POP[c // 64] + POP[c // 8 % 8] + POP[c % 8] for c in range(512)])
"""Coins on reels 0-2 for a head code ``m0*64 + m1*8 + m2``."""
TRIGGERS = tuple(range(HOLD_AND_CASH_COINS, CELLS + 1))


@dataclass(frozen=True)
class Feature:
    """Hold & Cash by coin count (index n - 5), in total bets."""

    mean: tuple[float, ...]
    second: tuple[float, ...]
    mega: tuple[float, ...]


@dataclass
class Figures:
    """The figures the tuner can aim at, of one candidate (RTPs as fractions of the total bet,
    frequencies per paid spin)."""

    lines: float
    star_wild: float
    hold_and_cash: float
    progressive: float
    hit_frequency: float
    star_wild_frequency: float
    hold_and_cash_frequency: float
    mega_frequency: float
    jackpot_frequency: float
    std_dev: float
    sd_estimated: bool = False
    """True when ``std_dev`` is the search's estimate, not the exact value."""

    @property
    def game(self) -> float:
        return self.lines + self.star_wild + self.hold_and_cash

    @property
    def total(self) -> float:
        return self.game + self.progressive

    @property
    def base_share(self) -> float:
        """Share of the game RTP from the paid spin's line wins (the rest: the features)."""
        return self.lines / self.game if self.game else 0.0


def _windows(strip: Sequence[str]) -> npt.NDArray[np.int64]:
    n = len(strip)
    return np.array([[INDEX[strip[(s + r) % n]] for r in range(ROWS)] for s in range(n)],
                    dtype=np.int64)


def _bits(windows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    return ((windows == COIN_INDEX) * (1 << np.arange(ROWS))).sum(axis=1)


def head_counts(c0: npt.NDArray[np.int64], c1: npt.NDArray[np.int64],
                c2: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], int]:
    """Over every combination of the given windows of reels 0-2: how many have no paying run
    and no €€€ line, by coin bits ``m0*64 + m1*8 + m2``; and how many show a €€€ line."""
    g0, g1, g2 = c0[:, None, None, :], c1[None, :, None, :], c2[None, None, :, :]
    hit = np.zeros((len(c0), len(c1), len(c2)), dtype=bool)
    jackpot = np.zeros_like(hit)
    for line in LINES:
        triple = (g0[..., line[0]], g1[..., line[1]], g2[..., line[2]])
        hit |= PAYS[triple]
        jackpot |= JACK[triple]
    code = (_bits(c0)[:, None, None] * 64 + _bits(c1)[None, :, None] * 8
            + _bits(c2)[None, None, :])
    dead = ~hit & ~jackpot
    return np.bincount(code[dead].ravel(), minlength=512), int(jackpot.sum())


def lines_rtp(strips: Sequence[ReelStrip]) -> float:
    """E[pay of one line] in line bets (= the lines' RTP), from the strips' symbol frequencies
    contracted with the line pay table (every line sees independent cells, RULES.md)."""
    value: npt.NDArray[np.float64] = line_pay_table().astype(np.float64)
    for strip in reversed(strips):
        freq = np.bincount([INDEX[s] for s in strip], minlength=len(INDEX)) / len(strip)
        value = value @ freq
    return float(value)


def _layout_wilds(layout: Layout) -> dict[tuple[int, int], str]:
    grid = [[COIN if (bits >> row) & 1 else "" for row in range(ROWS)] for bits in layout]
    return star_wilds(grid)


@dataclass(frozen=True)
class _Counted:
    """What counting every base stop combination gives the standard deviation (total bets)."""

    spin_second: float
    """E[(L + W)^2]: the paid spin's line win plus the Star Wild respin's, squared."""
    line_by_coins: tuple[float, ...]
    """E[L 1{n coins}], n = 5..15."""
    plain_given_jackpot: float
    """E[(L + W) 1{€€€ line}]."""
    jackpots_by_coins: tuple[float, ...]
    """P(€€€ line and n coins), n = 5..15."""
    p_hold: tuple[float, ...]
    p_jack: float


class Evaluator:
    """Figures of candidate models that share ``model``'s Star Wild strips (see the module
    docstring). One per search; it keeps its caches."""

    def __init__(self, model: MathModel) -> None:
        self.model = model
        self.free = [{s: Fraction(n, len(strip)) for s, n in Counter(strip).items()}
                     for strip in model.star_wild_reels]
        self._line_cache: dict[tuple[str | None, ...], Fraction] = {}
        self._respin_pay: dict[Layout, float] = {}
        self._respin_moments: dict[Layout, tuple[float, float]] = {}
        self._zero: dict[tuple[int, int, int], float] = {}
        self._features: dict[HoldAndCashModel, Feature] = {}
        self._heads: dict[tuple[ReelStrip, ...], tuple[npt.NDArray[np.int64], int]] = {}
        self._exact: dict[tuple[ReelStrip, ...], _Counted] = {}
        self._zero_by_code = np.full(512, np.nan)
        self._load()
        # the respin's expected pay for every 4-coin layout: the Star Wild RTP of any strips is
        # this tensor contracted with the reels' coin-pattern probabilities
        self._star_pay = np.zeros((8,) * 5)
        for layout in product(range(8), repeat=5):
            if sum(int(POP[m]) for m in layout) == STAR_WILD_COINS:
                self._star_pay[layout] = self.respin_pay(layout)

    # -- pieces that do not depend on the base strips ---------------------------------------

    def _store_path(self) -> Path:
        from starfever.math.figures import FORMAT, cache_dir

        key = hashlib.sha256(json.dumps([list(s) for s in self.model.star_wild_reels])
                             .encode("ascii")).hexdigest()
        return cache_dir() / f"tune-respins-{key}-f{FORMAT}.json"

    def _load(self) -> None:
        """The respin pieces of a search seen before with these Star Wild strips (they are
        exact counts, and depend on nothing else): spares the first minute of a search."""
        try:
            data = json.loads(self._store_path().read_text(encoding="utf-8"))
            pays = {tuple(k): float(v) for k, v in data["pays"]}
            moments = {tuple(k): (float(a), float(b)) for k, a, b in data["moments"]}
            zero = {tuple(k): float(v) for k, v in data["zero"]}
        except (OSError, ValueError, KeyError, TypeError):
            return
        self._respin_pay.update(pays)
        self._respin_moments.update(moments)
        self._zero.update(zero)

    def save(self) -> None:
        """Keep the respin pieces for the next search (a read-only cache is skipped)."""
        data = {"pays": [[list(k), v] for k, v in self._respin_pay.items()],
                "moments": [[list(k), a, b] for k, (a, b) in self._respin_moments.items()],
                "zero": [[list(k), v] for k, v in self._zero.items()]}
        path = self._store_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass

    def feature(self, weights: HoldAndCashModel) -> Feature:
        """Hold & Cash moments by coin count (float DP, relative error ~1e-13)."""
        if weights not in self._features:
            solver = HoldAndCashSolver(weights, exact=False)
            moments = []
            for n in TRIGGERS:
                a, b = solver.first(n, 0, "payout")
                qa, qb, qd = solver.second(n, 0)
                s1 = n * solver.coin_mean
                s2 = n * (solver.coin_sq - solver.coin_mean ** 2) + s1 * s1
                moments.append((float(a * s1 + b), float(qa * s2 + qb * s1 + qd),
                                float(solver.first(n, 0, "mega")[1])))
            self._features[weights] = Feature(*(tuple(m[i] for m in moments) for i in range(3)))
        return self._features[weights]

    def respin_pay(self, layout: Layout) -> float:
        """Expected respin line pay (line bets) with the wilds of this 4-coin layout."""
        if layout not in self._respin_pay:
            wilds = _layout_wilds(layout)
            pay = Fraction(0)
            for line in LINES:
                fixed = tuple(wilds.get((reel, row)) for reel, row in enumerate(line))
                if fixed not in self._line_cache:
                    cells = [{f: Fraction(1)} if f else self.free[reel]
                             for reel, f in enumerate(fixed)]
                    self._line_cache[fixed] = expected_line_pay(cells)
                pay += self._line_cache[fixed]
            self._respin_pay[layout] = float(pay)
        return self._respin_pay[layout]

    def respin_moments(self, layout: Layout) -> tuple[float, float]:
        """E[W] and E[W^2] of the respin win (line bets), from every respin stop combination."""
        if layout not in self._respin_moments:
            hist = cycles.respin_histogram(self.model, _layout_wilds(layout))
            w = np.arange(len(hist), dtype=np.float64)
            n = float(hist.sum())
            self._respin_moments[layout] = (float((w * hist).sum()) / n,
                                            float((w * w * hist).sum()) / n)
        return self._respin_moments[layout]

    def zero_respins(self, codes: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """``zero_respin`` for every head code ``m0*64 + m1*8 + m2`` (NaN where not asked)."""
        for code in codes.tolist():
            if math.isnan(self._zero_by_code[code]):
                self._zero_by_code[code] = self.zero_respin((code // 64, code // 8 % 8, code % 8))
        return self._zero_by_code

    def zero_respin(self, head: tuple[int, int, int]) -> float:
        """P(a respin pays nothing) given the coin bits of reels 0-2 (only they decide)."""
        if head not in self._zero:
            wilds = {(reel, row): WILD for reel, bits in enumerate(head) for row in range(ROWS)
                     if (bits >> row) & 1}
            self._zero[head] = float(respin_pays_nothing(self.model, wilds))
        return self._zero[head]

    # -- the base strips ------------------------------------------------------------------

    def heads(self, strips: tuple[ReelStrip, ...],
              parent: tuple[tuple[ReelStrip, ...], int, int] | None = None
              ) -> tuple[npt.NDArray[np.int64], int]:
        """``head_counts`` over all stops of reels 0-2; ``parent`` = (strips, reel, stop)
        when ``strips`` differ from cached ``strips`` at one stop: updated from the 3 windows
        that show that stop."""
        key = strips[:3]
        if key in self._heads:
            return self._heads[key]
        cols = [_windows(s) for s in key]
        if parent is not None and parent[0][:3] in self._heads and parent[1] < 3:
            old_strips, reel, stop = parent
            dead, jack = self._heads[old_strips[:3]]
            n = len(key[reel])
            touched = np.array(sorted({(stop - r) % n for r in range(ROWS)}))
            old_cols = [_windows(s) for s in old_strips[:3]]
            before = [old_cols[i] if i != reel else old_cols[i][touched] for i in range(3)]
            after = [cols[i] if i != reel else cols[i][touched] for i in range(3)]
            d0, j0 = head_counts(*before)
            d1, j1 = head_counts(*after)
            result = (dead - d0 + d1, jack - j0 + j1)
        else:
            result = head_counts(*cols)
        if len(self._heads) > 4096:
            self._heads.clear()
        self._heads[key] = result
        return result

    def figures(self, strips: tuple[ReelStrip, ...], weights: HoldAndCashModel,
                parent: tuple[tuple[ReelStrip, ...], int, int] | None = None, *,
                want_sd: bool = True, exact_sd: bool = False) -> Figures:
        """The figures of the model with these strips and weights. The standard deviation
        (``want_sd``): with ``exact_sd``, every base stop combination is counted (seconds);
        else it is exact if these strips were counted before, estimated otherwise."""
        lengths = [len(s) for s in strips]
        lines = lines_rtp(strips)
        probs = [np.bincount(_bits(_windows(s)), minlength=8) / len(s) for s in strips]
        per_reel = [np.bincount(POP, weights=p, minlength=ROWS + 1) for p in probs]
        coins = per_reel[0]
        for dist in per_reel[1:]:
            coins = np.convolve(coins, dist)
        star = self._star_pay
        for p in reversed(probs):
            star = star @ p
        sw_rtp = float(star) / LINE_COUNT
        feat = self.feature(weights)
        p_hold = [float(coins[n]) for n in TRIGGERS]
        hold = sum(p_hold[i] * feat.mean[i] for i in range(len(TRIGGERS)))
        mega = sum(p_hold[i] * feat.mega[i] for i in range(len(TRIGGERS)))
        dead, jack = self.heads(strips, parent)
        head_space = math.prod(lengths[:3])
        tail = np.zeros(CELLS + 2)
        tail[:2 * ROWS + 1] = np.convolve(per_reel[3], per_reel[4])
        below = np.concatenate([[0.0], np.cumsum(tail)])  # below[k] = P(tail < k)
        need = STAR_WILD_COINS - HEAD_POP
        live = (dead > 0) & (need >= 0)
        z = self.zero_respins(np.flatnonzero(live & (need <= 2 * ROWS)))
        factor = np.where(live, below[np.clip(need, 0, None)]
                          + tail[np.clip(need, 0, None)] * z, 0.0)
        no_win = float((dead * factor).sum()) / head_space
        game = lines + sw_rtp + hold
        part = self._exact.get(strips) if want_sd else None
        if want_sd and part is None and (exact_sd or not self._exact):
            part = self._count(strips)
        p_jack = jack / head_space
        if not want_sd:
            second, given_jack, estimated = math.nan, 0.0, False
        elif part is not None:
            second = part.spin_second + sum(
                2 * part.line_by_coins[i] * feat.mean[i] + p_hold[i] * feat.second[i]
                for i in range(len(TRIGGERS)))
            given_jack = part.plain_given_jackpot + sum(
                part.jackpots_by_coins[i] * feat.mean[i] for i in range(len(TRIGGERS)))
            estimated = False
        else:
            # the last counted state's cross moments, scaled to this candidate's coin law
            ref = next(reversed(self._exact.values()))
            second = ref.spin_second + sum(
                2 * ref.line_by_coins[i] * _ratio(p_hold[i], ref.p_hold[i]) * feat.mean[i]
                + p_hold[i] * feat.second[i] for i in range(len(TRIGGERS)))
            given_jack = ref.plain_given_jackpot * _ratio(p_jack, ref.p_jack)
            estimated = True
        seed_x = money.progressive_share(self.model.seed_cents, BET_CLASSES[-1]) / (
            LINE_COUNT * BET_CLASSES[-1])  # the seed pool's share, total bets (every class)
        mean = game + p_jack * seed_x
        second_all = second + 2 * seed_x * given_jack + p_jack * seed_x ** 2
        return Figures(
            lines=lines, star_wild=sw_rtp, hold_and_cash=hold,
            progressive=float(self.model.contribution_rate), hit_frequency=1 - no_win,
            star_wild_frequency=float(coins[STAR_WILD_COINS]),
            hold_and_cash_frequency=sum(p_hold), mega_frequency=mega,
            jackpot_frequency=p_jack, std_dev=math.sqrt(max(second_all - mean * mean, 0.0)),
            sd_estimated=estimated)

    def _count(self, strips: tuple[ReelStrip, ...]) -> _Counted:
        """Count every base stop combination of these strips: E[(L + W)^2] and the cross
        moments the standard deviation needs (line bets turned into total bets)."""
        joint = cycles.base_joint(replace(self.model, base_reels=strips))
        n_base = joint.combinations
        hist = joint.histogram
        values = np.arange(hist.shape[1], dtype=np.float64)
        unit = 1 / LINE_COUNT
        plain = hist[:HOLD_AND_CASH_COINS].sum(axis=0) - hist[STAR_WILD_COINS]
        spin_second = float((plain * values ** 2).sum()) / n_base * unit ** 2
        plain_given = float(joint.jackpot_wins[:HOLD_AND_CASH_COINS].sum()) / n_base * unit
        for i, layout in enumerate(joint.layouts):
            cat = cycles.COIN_CATEGORIES + i
            row = hist[cat]
            n_l = float(row.sum())
            if not n_l:
                continue
            l1 = float((values * row).sum())
            l2 = float((values ** 2 * row).sum())
            w1, w2 = self.respin_moments(layout)
            spin_second += (l2 + 2 * l1 * w1 + n_l * w2) / n_base * unit ** 2
            plain_given += (float(joint.jackpot_wins[cat]) + float(joint.jackpots[cat]) * w1
                            ) / n_base * unit
        line_by_coins = []
        for n in TRIGGERS:
            row = hist[n]
            spin_second += float((values ** 2 * row).sum()) / n_base * unit ** 2
            plain_given += float(joint.jackpot_wins[n]) / n_base * unit
            line_by_coins.append(float((values * row).sum()) / n_base * unit)
        part = _Counted(
            spin_second=spin_second, line_by_coins=tuple(line_by_coins),
            plain_given_jackpot=plain_given,
            jackpots_by_coins=tuple(float(joint.jackpots[n]) / n_base for n in TRIGGERS),
            p_hold=tuple(float(hist[n].sum()) / n_base for n in TRIGGERS),
            p_jack=float(joint.jackpots.sum()) / n_base)
        if len(self._exact) > 64:
            self._exact.pop(next(iter(self._exact)))
        self._exact[strips] = part
        return part


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0
