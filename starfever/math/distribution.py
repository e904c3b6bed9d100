"""The exact law of a round's game win (lines, Star Wild, Hold & Cash): win bands, the largest
wins, the second moment and the Hold & Cash tail.

Built from three independent pieces that meet only through the coin layout of the paid spin:
- ``cycles.base_joint``: every base stop combination, its line win L by coin count, or, with 4
  coins, by coin layout (integers out of the product of the strip lengths);
- ``cycles.respin_histogram``: for each 4-coin layout, the respin win W over every respin stop
  combination (integers); given the layout, L and W are independent;
- ``holdcash_law.payout_laws`` (the payout's law, float DP) and ``holdcash.HoldAndCashSolver``
  (its exact rational moments); given the coin count, the payout H is independent of L.

So every figure without Hold & Cash is an exact integer ratio, the second moment is an exact
rational, and only the Hold & Cash band and tail probabilities are floats (relative error
~1e-12, exact range of the DP stated by its cap). The €€€ share is not part of the game win:
it is added separately where a figure includes it (``std_dev_with_jackpot``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from starfever.engine.model import MathModel
from starfever.engine.round import star_wilds
from starfever.engine.symbols import CELLS, COIN, HOLD_AND_CASH_COINS, LINE_COUNT, ROWS
from starfever.math import cycles
from starfever.math.holdcash import FeatureMoments, HoldAndCashSolver
from starfever.math.holdcash_law import DEFAULT_CAP, PayoutLaw, payout_laws

F = Fraction
BAND_EDGES: tuple[int, ...] = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
"""Band edges in total bets: 0, (0,1], (1,2], ..., (2000,5000], above 5000."""
TAIL_MULTIPLES: tuple[int, ...] = (100, 500, 1000, 2000, 5000, 10_000)
"""k of the Hold & Cash tail P(payout >= k x total bet)."""


@dataclass(frozen=True)
class Band:
    """One band of the round's game win, in total bets."""

    from_x: int
    """Lower end (exclusive, except the band "0" itself)."""
    to_x: int | None
    """Upper end (inclusive); ``None``: no upper end."""
    probability: float
    """P(win in the band)."""


@dataclass(frozen=True)
class WinLaw:
    """Everything :func:`win_law` found."""

    bands: tuple[Band, ...]
    second_moment: Fraction
    """E[G^2], G the game win per round in total bets, exact."""
    mean: Fraction
    """E[G], exact (checks the factorised calculator)."""
    jackpot_probability: Fraction
    """P(the paid spin shows a €€€ line)."""
    game_win_given_jackpot: Fraction
    """E[G x 1{€€€ line}]."""
    max_base: Fraction
    """Largest line win of a paid spin, total bets."""
    max_base_probability: Fraction
    max_star_wild: Fraction
    """Largest game win of a round with a Star Wild respin (paid spin + respin), total bets."""
    max_star_wild_probability: Fraction
    """P(a round wins exactly that), per paid spin."""
    star_wild_zero: Fraction
    """P(a Star Wild round's game win is nothing: no line win in its paid spin nor in its
    respin; a €€€ share aside), per paid spin."""
    star_wild_respin_zero: Fraction
    """P(a Star Wild respin alone has no line win, whatever its paid spin won), per paid
    spin."""
    hold_tails: dict[int, tuple[float, float]]
    """k -> (P(payout >= k | triggered), P(per paid spin)), Hold & Cash payout alone."""
    hold_cap: int
    """Exact range of the Hold & Cash DP (total bets)."""
    hold_above_cap: float
    """P(Hold & Cash payout above the cap), per paid spin."""
    respin_laws: dict[cycles.Layout, npt.NDArray[np.int64]]
    """Per 4-coin layout, the respin win histogram (line bets)."""
    joint: cycles.BaseJoint


def _layout_wilds(layout: cycles.Layout) -> dict[tuple[int, int], str]:
    grid = [[COIN if (bits >> row) & 1 else "" for row in range(ROWS)] for bits in layout]
    return star_wilds(grid)


def _band_counts(values: npt.NDArray[np.int64], counts: npt.NDArray[np.int64],
                 cumulative: npt.NDArray[np.int64], edges: Sequence[int]) -> list[int]:
    """Per band (line-bet edges), how many (l, w) pairs have l + w in it: ``values``/``counts``
    the sparse law of l, ``cumulative`` the running count of w (w = 0, 1, ...)."""
    top = len(cumulative) - 1

    def upto(x: int) -> int:  # pairs with w <= x
        return 0 if x < 0 else int(cumulative[min(x, top)])

    out = []
    for k in range(len(edges) + 1):
        total = 0
        for value, count in zip(values.tolist(), counts.tolist(), strict=True):
            if k == 0:
                hi, lo = edges[0] - value, edges[0] - value - 1
            elif k < len(edges):
                lo, hi = edges[k - 1] - value, edges[k] - value
            else:
                lo, hi = edges[-1] - value, top
            total += count * (upto(hi) - upto(lo))
        out.append(total)
    return out


def win_law(model: MathModel,
            features: dict[int, FeatureMoments] | Future[dict[int, FeatureMoments]] | None = None,
            *, hold_cap: int = DEFAULT_CAP,
            laws: Future[dict[int, PayoutLaw]] | None = None) -> WinLaw:
    """The law of a round's game win of ``model`` (see the module docstring); Hold & Cash
    probabilities exact up to ``hold_cap`` total bets. ``features`` (the exact Hold & Cash
    moments) and ``laws`` (:func:`payout_laws` for every coin count the base game can show,
    with the cap below) may be given as futures being computed alongside: they are waited
    for only once the base game and the respins are counted."""
    joint = cycles.base_joint(model)
    n_base = joint.combinations
    n_respin = math.prod(len(s) for s in model.star_wild_reels)
    edges = [x * LINE_COUNT for x in BAND_EDGES]  # line bets
    hist = joint.histogram
    # E[G^2] and E[G] in line bets, as integers over n_base (x n_respin for Star Wild)
    bands = [F(0)] * (len(edges) + 1)
    second, first = F(0), F(0)
    plain = hist[:cycles.COIN_CATEGORIES].copy()
    plain[HOLD_AND_CASH_COINS:] = 0
    plain_sum = plain.sum(axis=0)
    nz = np.flatnonzero(plain_sum)
    values, counts = nz, plain_sum[nz]
    second += F(int((counts * values * values).sum()), n_base)
    first += F(int((counts * values).sum()), n_base)
    step = np.zeros(hist.shape[1], dtype=np.int64)
    step[0] = 1
    for k, c in enumerate(_band_counts(values, counts, np.cumsum(step), edges)):
        bands[k] += F(c, n_base)
    max_base_win = int(np.flatnonzero(hist.sum(axis=0)).max())
    max_base_count = int(hist.sum(axis=0)[max_base_win])
    # Star Wild: L (by layout) and W (by respin) independent given the layout
    respin_laws: dict[cycles.Layout, npt.NDArray[np.int64]] = {}
    max_sw, max_sw_count = -1, 0
    zero_sw = zero_respin = 0
    sw_given_jackpot = F(0)
    for i, layout in enumerate(joint.layouts):
        row = hist[cycles.COIN_CATEGORIES + i]
        nz = np.flatnonzero(row)
        if not len(nz):
            continue
        w_hist = cycles.respin_histogram(model, _layout_wilds(layout))
        respin_laws[layout] = w_hist
        l_vals, l_counts = nz, row[nz]
        w_nz = np.flatnonzero(w_hist)
        w1 = int((w_nz * w_hist[w_nz]).sum())
        w2 = int((w_nz * w_nz * w_hist[w_nz]).sum())
        n_l = int(l_counts.sum())
        l1 = int((l_vals * l_counts).sum())
        l2 = int((l_vals * l_vals * l_counts).sum())
        scale = n_base * n_respin
        second += F(l2 * n_respin + 2 * l1 * w1 + n_l * w2, scale)
        first += F(l1 * n_respin + n_l * w1, scale)
        sw_given_jackpot += F(int(joint.jackpot_wins[cycles.COIN_CATEGORIES + i]) * n_respin
                              + int(joint.jackpots[cycles.COIN_CATEGORIES + i]) * w1, scale)
        for k, c in enumerate(_band_counts(l_vals, l_counts, np.cumsum(w_hist), edges)):
            bands[k] += F(c, scale)
        zero_sw += int(l_counts[0]) * int(w_hist[0]) if l_vals[0] == 0 else 0
        zero_respin += n_l * int(w_hist[0])
        top = int(l_vals.max()) + int(w_nz.max())
        ways = sum(int(c) * int(w_hist[top - v]) for v, c in zip(l_vals, l_counts, strict=True)
                   if 0 <= top - v < len(w_hist))
        if top > max_sw:
            max_sw, max_sw_count = top, ways
        elif top == max_sw:
            max_sw_count += ways
    # Hold & Cash: L (by coin count) and H independent given the coin count
    triggers = tuple(n for n in range(HOLD_AND_CASH_COINS, CELLS + 1) if hist[n].any())
    cap_x = model.max_win_x
    hold_cap = max(hold_cap, cap_x or 0)
    if isinstance(features, Future):
        features = features.result()
    elif features is None:
        solver = HoldAndCashSolver(model.hold_and_cash)
        features = {n: solver.feature(n) for n in range(HOLD_AND_CASH_COINS, CELLS + 1)}
    if laws is None:
        found = payout_laws(model.hold_and_cash, cap=hold_cap, coins=triggers)
    else:
        found = laws.result()
        if any(n not in found or found[n].cap != hold_cap for n in triggers):
            raise ValueError("the payout laws given do not cover the coin counts or the cap")
    laws_by_coins = found
    cap_lb = None if cap_x is None else cap_x * LINE_COUNT
    float_bands = [0.0] * len(bands)
    tails = {k: [0.0, 0.0] for k in TAIL_MULTIPLES if k <= hold_cap + 1}
    above = 0.0
    hold_given_jackpot = F(0)
    for n in range(HOLD_AND_CASH_COINS, CELLS + 1):
        row = hist[n]
        nz = np.flatnonzero(row)
        if not len(nz):
            continue
        law, m = laws_by_coins[n], features[n]
        p_n = F(int(row.sum()), n_base)
        l1 = int((nz * row[nz]).sum())
        l2 = int((nz * nz * row[nz]).sum())
        h1, h2 = m.mean * LINE_COUNT, m.second * LINE_COUNT ** 2  # in line bets
        second += F(l2, n_base) + 2 * F(l1, n_base) * h1 + p_n * h2
        first += F(l1, n_base) + p_n * h1
        hold_given_jackpot += (F(int(joint.jackpot_wins[n]), n_base)
                               + F(int(joint.jackpots[n]), n_base) * h1)
        for k in tails:
            if cap_x is None or k <= cap_x:  # a capped feature pays at most the cap
                tails[k][1] += float(p_n) * law.at_least(k)
        above += float(p_n) * law.above_cap
        for value, count in zip(nz.tolist(), row[nz].tolist(), strict=True):
            q = count / n_base
            for b in range(len(bands)):
                float_bands[b] += q * _hold_band(law, value, edges, b, cap_lb)
    hold_p = sum((F(int(hist[n].sum()), n_base) for n in range(HOLD_AND_CASH_COINS, CELLS + 1)),
                 F(0))
    for k in tails:
        tails[k][0] = tails[k][1] / float(hold_p) if hold_p else 0.0
    if cap_x is not None:
        mean_cut, square_cut = cap_terms(joint, {n: laws_by_coins[n] for n in triggers},
                                         {n: features[n] for n in triggers}, cap_x)
        first -= F(mean_cut) * LINE_COUNT
        second -= F(square_cut) * LINE_COUNT ** 2
    plain_jackpot = sum((F(int(joint.jackpot_wins[n]), n_base)
                         for n in range(HOLD_AND_CASH_COINS)), F(0))
    jackpot_p = F(int(joint.jackpots.sum()), n_base)
    unit = F(1, LINE_COUNT)
    out_bands = []
    for k, p in enumerate(bands):
        lo = BAND_EDGES[0] if k == 0 else BAND_EDGES[k - 1]
        hi = BAND_EDGES[0] if k == 0 else (BAND_EDGES[k] if k < len(BAND_EDGES) else None)
        out_bands.append(Band(from_x=lo, to_x=hi, probability=float(p) + float_bands[k]))
    return WinLaw(
        bands=tuple(out_bands),
        second_moment=second * unit * unit,
        mean=first * unit,
        jackpot_probability=jackpot_p,
        game_win_given_jackpot=(plain_jackpot + sw_given_jackpot + hold_given_jackpot) * unit,
        max_base=F(max_base_win, LINE_COUNT),
        max_base_probability=F(max_base_count, n_base),
        max_star_wild=F(max_sw, LINE_COUNT),
        max_star_wild_probability=F(max_sw_count, n_base * n_respin),
        star_wild_zero=F(zero_sw, n_base * n_respin),
        star_wild_respin_zero=F(zero_respin, n_base * n_respin),
        hold_tails={k: (v[0], v[1]) for k, v in tails.items()},
        hold_cap=hold_cap,
        hold_above_cap=above,
        respin_laws=respin_laws,
        joint=joint,
    )


def cap_terms(joint: cycles.BaseJoint, laws: dict[int, PayoutLaw],
              features: dict[int, FeatureMoments], cap_x: int) -> tuple[float, float]:
    """What a max-win cap of ``cap_x`` total bets takes off E[G] and E[G^2] (G in total bets).

    Only Hold & Cash rounds reach a cap (``MIN_CAP_X``), and with the paid spin's line win l and
    the payout H (independent given the coin count) the capped win is min(l + H, cap): the
    feature stops there, and H only grows. So the cut is E[(l + H)^k] - E[min(l + H, cap)^k],
    summed over the base counts and the DP's law (exact up to float rounding: the DP's range
    must reach the cap)."""
    mean_cut = square_cut = 0.0
    n_base = joint.combinations
    for n, law in laws.items():
        if law.cap + 1 < cap_x:
            raise ValueError(f"the Hold & Cash DP (cap {law.cap}) does not reach {cap_x}")
        row = joint.histogram[n]
        probs = law.probabilities
        values = np.arange(len(probs), dtype=np.float64) / law.unit
        for line_win in np.flatnonzero(row).tolist():
            q = int(row[line_win]) / n_base
            base = line_win / LINE_COUNT
            below = values < cap_x - base  # base + h < cap
            total = base + values
            mean_h, second_h = float(features[n].mean), float(features[n].second)
            mean_free = base + mean_h  # exact moments, the tail beyond the DP included
            square_free = base * base + 2 * base * mean_h + second_h
            mean_capped = float((total[below] * probs[below]).sum()) + cap_x * (
                float(probs[~below].sum()) + law.above_cap)
            square_capped = float((total[below] ** 2 * probs[below]).sum()) + cap_x ** 2 * (
                float(probs[~below].sum()) + law.above_cap)
            # the mass above the DP's range pays the cap: the cut is the exact free moments
            # (rational DP) less the capped ones
            mean_cut += q * (mean_free - mean_capped)
            square_cut += q * (square_free - square_capped)
    return mean_cut, square_cut


def _hold_band(law: PayoutLaw, line_win: int, edges: Sequence[int], band: int,
               cap: int | None = None) -> float:
    """P(line_win + 20 H falls in ``band``) (line-bet edges) for a payout H of ``law``, the
    round's win stopping at ``cap`` line bets when there is one."""
    def at_least(x: int) -> float:  # P(min(line_win + 20 H, cap) >= x)
        if cap is not None and x > cap:
            return 0.0
        need = max(0, -(-(x - line_win) * law.unit // LINE_COUNT))  # in the law's cells
        return 1.0 if need <= 0 else law.at_least_cells(need)

    if band == 0:
        return 1.0 - at_least(1) if edges[0] == 0 else 0.0
    lo = edges[band - 1]
    if band == len(edges):
        return at_least(lo + 1)
    return at_least(lo + 1) - at_least(edges[band] + 1)


def std_dev_with_jackpot(law: WinLaw, game_rtp: Fraction, jackpot_x: Fraction) -> float:
    """SD per round, total bets, when a €€€ line pays ``jackpot_x`` total bets (the share of
    the pool at a bet class over that class's total bet; the same at every class, since the
    share is proportional to the line bet: pool / 2000 cents)."""
    mean = game_rtp + law.jackpot_probability * jackpot_x
    second = (law.second_moment + 2 * jackpot_x * law.game_win_given_jackpot
              + law.jackpot_probability * jackpot_x ** 2)
    return math.sqrt(float(second - mean * mean))


def std_dev_with_pool(law: WinLaw, game_rtp: Fraction, share_x: float,
                      share_square_x: float) -> float:
    """SD per round, total bets, when a €€€ line pays a share J of a pool that varies: ``share_x``
    is E[J] and ``share_square_x`` E[J^2] in total bets (pool / 2000 at every class; from the
    pool's long-run law under a mix, :mod:`starfever.math.jackpot`). The pool a spin sees does
    not depend on that spin's outcome, so E[G J] = E[G 1{€€€}] E[J]. With J fixed (E[J^2] =
    E[J]^2) this is :func:`std_dev_with_jackpot`."""
    p = float(law.jackpot_probability)
    mean = float(game_rtp) + p * share_x
    second = (float(law.second_moment) + 2 * share_x * float(law.game_win_given_jackpot)
              + p * share_square_x)
    return math.sqrt(second - mean * mean)
