"""Exact joint counts over every stop combination (compiled): the base game by coin layout, and
the Star Wild respin by wild layout.

The factorised calculator (``exact``) gives means; a distribution (win bands, the largest win,
the second moment) needs the joint law of all 20 lines, so it is counted here, in integers:

- :func:`base_joint`: over all ``L0 x ... x L4`` base stop combinations, the paid spin's line win
  (line bets) by *category*: the coin count (0-3 and 5-15), or, for exactly 4 coins, the coin
  layout (which rows of which reels), since the respin's wilds depend on it. It also counts the
  combinations with a €€€ line per category, and their line wins.
- :func:`respin_histogram`: for one Star Wild layout, the respin's line win over all respin stop
  combinations.

A line pays only if reels 0-2 already make a run of 3, and what it then pays depends on reels
0-2 only through the *class* of their three symbols (19 classes: which pay row over reels 3-4
they select, class 0 = no run). So the stop combinations of reels 0-2 are first grouped into
*head states* (per line the class; for the base game also the three reels' coin bits and whether
a €€€ line shows), each with its number of stop combinations; only the distinct states are
finished over every stop of reels 3 and 4 (the default model: 512,000 heads, 6,008 states).
Every count stays an exact integer. ``*_direct`` walk every combination (the method of
``fullcycle``) and are kept as the reference the tests compare with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache

import numba as nb
import numpy as np
import numpy.typing as npt

from starfever.engine.model import MathModel, ReelStrip
from starfever.engine.symbols import CELLS, COIN, LINES, PAYTABLE, ROWS, STAR_WILD_COINS
from starfever.math.tables import SYMBOL_INDEX, jackpot_table, line_pay_table, strip_windows

MAX_BASE_WIN = len(LINES) * max(max(p) for p in PAYTABLE.values())
"""No paid spin pays more line bets (there is no Multiplier Wild in the base game)."""
MAX_RESPIN_WIN = 3 * MAX_BASE_WIN
"""No respin pays more (every line at most x3)."""
COIN_CATEGORIES = CELLS + 1
"""Categories 0..15: the coin count (4 is unused: those spins go by layout)."""

Layout = tuple[int, int, int, int, int]
"""Per reel, the rows holding a coin as bits (bit r: row r)."""


@dataclass(frozen=True)
class BaseJoint:
    """Integer counts over every base stop combination."""

    combinations: int
    """The product of the strip lengths."""
    layouts: tuple[Layout, ...]
    """The 4-coin layouts that occur; layout ``i`` is category ``COIN_CATEGORIES + i``."""
    histogram: npt.NDArray[np.int64]
    """``[category, win]``: combinations with that line win (line bets)."""
    jackpots: npt.NDArray[np.int64]
    """``[category]``: combinations with a €€€ line."""
    jackpot_wins: npt.NDArray[np.int64]
    """``[category]``: sum of the line wins of those combinations."""


def _strip_codes(strips: tuple[ReelStrip, ...],
                 fixed: dict[tuple[int, int], str] | None = None
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                            npt.NDArray[np.int64]]:
    """Per reel and stop: the symbol on each line's row, the coin count and the coin bits."""
    lengths = np.array([len(s) for s in strips], dtype=np.int64)
    longest = int(lengths.max())
    codes = np.zeros((5, longest, len(LINES)), dtype=np.int64)
    coins = np.zeros((5, longest), dtype=np.int64)
    masks = np.zeros((5, longest), dtype=np.int64)
    for reel, strip in enumerate(strips):
        windows = strip_windows(strip).astype(np.int64)
        for (f_reel, row), symbol in (fixed or {}).items():
            if f_reel == reel:
                windows[:, row] = SYMBOL_INDEX[symbol]
        n = len(strip)
        for line, rows in enumerate(LINES):
            codes[reel, :n, line] = windows[:, rows[reel]]
        is_coin = windows == SYMBOL_INDEX[COIN]
        coins[reel, :n] = is_coin.sum(axis=1)
        masks[reel, :n] = (is_coin * (1 << np.arange(ROWS))).sum(axis=1)
    return codes, coins, masks, lengths


CLASS_BITS = 5
"""Bits per line in a packed head state (the head classes number 19)."""


@cache
def head_classes() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """``classes[a, b, c]``: the class of symbols a, b, c on reels 0-2 of a line, and
    ``pays[class, d, e]``: the line's pay when reels 3-4 show d, e; two triples share a class
    exactly when they pay the same whatever reels 3-4 show, and class 0 pays nothing."""
    table = line_pay_table()
    n = table.shape[0]
    rows, inverse = np.unique(table.reshape(n ** 3, n * n), axis=0, return_inverse=True)
    if rows[0].any() or len(rows) > 1 << CLASS_BITS:
        raise AssertionError("head classes: class 0 must be the line that pays nothing")
    return (inverse.reshape(n, n, n).astype(np.int64),
            np.ascontiguousarray(rows.reshape(len(rows), n, n).astype(np.int32)))


def _head_states(codes: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64],
                 weights: npt.NDArray[np.int64], extra: npt.NDArray[np.int64] | None = None
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct head states over every stop of reels 0-2: per state the class of each
    line (``[state, line]``), the number of stop combinations it stands for (each stop of
    reel r counting ``weights[r, stop]``) and its ``extra`` value (a per-head integer below
    2^14 that is part of the state: coin bits, the €€€ flag)."""
    classes, _ = head_classes()
    l0, l1, l2 = (int(x) for x in lengths[:3])
    cls = classes[codes[0, :l0, None, None, :], codes[1, None, :l1, None, :],
                  codes[2, None, None, :l2, :]].reshape(l0 * l1 * l2, -1)
    n_lines = cls.shape[1]
    half = (n_lines + 1) // 2
    shifts = CLASS_BITS * np.arange(half, dtype=np.int64)
    low = (cls[:, :half] << shifts).sum(axis=1)
    high = (cls[:, half:] << shifts[:n_lines - half]).sum(axis=1)
    if extra is not None:
        high = high | (extra.reshape(-1) << (CLASS_BITS * half))
    weight = (weights[0, :l0, None, None] * weights[1, None, :l1, None]
              * weights[2, None, None, :l2]).reshape(-1)
    order = np.lexsort((high, low))
    low, high = low[order], high[order]
    first = np.flatnonzero(np.r_[True, (low[1:] != low[:-1]) | (high[1:] != high[:-1])])
    counts = np.add.reduceat(weight[order], first)
    head = order[first]
    extras = np.zeros(len(first), dtype=np.int64) if extra is None else extra.reshape(-1)[head]
    return np.ascontiguousarray(cls[head]), counts.astype(np.int64), extras


@nb.njit(cache=True)
def _state_lines(cls: npt.NDArray[np.int64], state: int, alive: npt.NDArray[np.int64],
                 alive_cls: npt.NDArray[np.int64]) -> int:
    n_alive = 0
    for line in range(cls.shape[1]):
        if cls[state, line] != 0:
            alive[n_alive] = line
            alive_cls[n_alive] = cls[state, line]
            n_alive += 1
    return n_alive


@nb.njit(cache=True, parallel=True, nogil=True)
def _base_states(cls: npt.NDArray[np.int64], count: npt.NDArray[np.int64],
                 extra: npt.NDArray[np.int64], codes: npt.NDArray[np.int64],
                 lengths: npt.NDArray[np.int64], coins: npt.NDArray[np.int64],
                 masks: npt.NDArray[np.int64], pays: npt.NDArray[np.int32],
                 category: npt.NDArray[np.int64], hist: npt.NDArray[np.int64],
                 jackpots: npt.NDArray[np.int64], jackpot_wins: npt.NDArray[np.int64]) -> None:
    """``_base_direct`` over head states: ``extra`` = coin bits of reels 0-2 (9 bits) and the
    €€€ flag (bit 9)."""
    workers = hist.shape[0]
    l3, l4 = lengths[3], lengths[4]
    for w in nb.prange(workers):
        alive = np.empty(cls.shape[1], dtype=np.int64)
        alive_cls = np.empty(cls.shape[1], dtype=np.int64)
        for state in range(w, cls.shape[0], workers):
            n_alive = _state_lines(cls, state, alive, alive_cls)
            weight = count[state]
            bits = extra[state]
            m0, m1, m2 = bits >> 6 & 7, bits >> 3 & 7, bits & 7
            jackpot = (bits >> 9) & 1 == 1
            head = ((m0 & 1) + (m0 >> 1 & 1) + (m0 >> 2) + (m1 & 1) + (m1 >> 1 & 1) + (m1 >> 2)
                    + (m2 & 1) + (m2 >> 1 & 1) + (m2 >> 2))
            for s3 in range(l3):
                for s4 in range(l4):
                    n = head + coins[3, s3] + coins[4, s4]
                    cat = n
                    if n == 4:
                        cat = category[m0 * 4096 + m1 * 512 + m2 * 64 + masks[3, s3] * 8
                                       + masks[4, s4]]
                    win = 0
                    for k in range(n_alive):
                        line = alive[k]
                        win += pays[alive_cls[k], codes[3, s3, line], codes[4, s4, line]]
                    hist[w, cat, win] += weight
                    if jackpot:
                        jackpots[w, cat] += weight
                        jackpot_wins[w, cat] += weight * win


@nb.njit(cache=True, parallel=True, nogil=True)
def _respin_states(cls: npt.NDArray[np.int64], count: npt.NDArray[np.int64],
                   codes: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64],
                   weights: npt.NDArray[np.int64], pays: npt.NDArray[np.int32],
                   hist: npt.NDArray[np.int64]) -> None:
    """``_respin_direct`` over head states, a state's win over every tail (stop of reels 3-4)
    at once: ``table[line, class]`` holds the line's pay over the tails, so a state's wins are
    the sum of its paying lines' rows (contiguous, so the compiler runs it across SIMD lanes),
    then counted into the histogram, each tail weighing the stops it stands for."""
    workers = hist.shape[0]
    l3, l4 = lengths[3], lengths[4]
    tails = l3 * l4
    n_lines = cls.shape[1]
    table = np.zeros((n_lines, pays.shape[0], tails), dtype=np.int32)
    for line in range(n_lines):
        for c in range(1, pays.shape[0]):  # class 0 pays nothing
            for s3 in range(l3):
                d = codes[3, s3, line]
                for s4 in range(l4):
                    table[line, c, s3 * l4 + s4] = pays[c, d, codes[4, s4, line]]
    tail = np.empty(tails, dtype=np.int64)
    for s3 in range(l3):
        for s4 in range(l4):
            tail[s3 * l4 + s4] = weights[3, s3] * weights[4, s4]
    every_tail = tail.sum()
    for w in nb.prange(workers):
        win = np.empty(tails, dtype=np.int32)
        for state in range(w, cls.shape[0], workers):
            weight = count[state]
            win[:] = 0
            paying = False
            for line in range(n_lines):
                c = cls[state, line]
                if c != 0:
                    paying = True
                    row = table[line, c]
                    for t in range(tails):
                        win[t] += row[t]
            if not paying:
                hist[w, 0] += weight * every_tail
                continue
            for t in range(tails):
                hist[w, win[t]] += weight * tail[t]


def _tables() -> tuple[npt.NDArray[np.int32], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    table = np.ascontiguousarray(line_pay_table())
    pays3 = table.reshape(table.shape[0] ** 3, -1).max(axis=1).reshape(table.shape[:3]) > 0
    return table, pays3, np.ascontiguousarray(jackpot_table())


@nb.njit(cache=True)
def _alive(codes: npt.NDArray[np.int64], s0: int, s1: int, s2: int,
           pays3: npt.NDArray[np.bool_], jack: npt.NDArray[np.bool_],
           alive: npt.NDArray[np.int64]) -> tuple[int, bool]:
    n_alive = 0
    jackpot = False
    for line in range(codes.shape[2]):
        a, b, c = codes[0, s0, line], codes[1, s1, line], codes[2, s2, line]
        if pays3[a, b, c]:
            alive[n_alive] = line
            n_alive += 1
        if jack[a, b, c]:
            jackpot = True
    return n_alive, jackpot


@nb.njit(cache=True, parallel=True)
def _base_direct(codes: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64],
          coins: npt.NDArray[np.int64], masks: npt.NDArray[np.int64],
          pays3: npt.NDArray[np.bool_], jack: npt.NDArray[np.bool_],
          table: npt.NDArray[np.int32], category: npt.NDArray[np.int64],
          hist: npt.NDArray[np.int64], jackpots: npt.NDArray[np.int64],
          jackpot_wins: npt.NDArray[np.int64]) -> None:
    workers = hist.shape[0]
    l0, l1, l2, l3, l4 = lengths[0], lengths[1], lengths[2], lengths[3], lengths[4]
    for w in nb.prange(workers):
        alive = np.empty(codes.shape[2], dtype=np.int64)
        for s0 in range(w, l0, workers):
            for s1 in range(l1):
                for s2 in range(l2):
                    n_alive, jackpot = _alive(codes, s0, s1, s2, pays3, jack, alive)
                    head = coins[0, s0] + coins[1, s1] + coins[2, s2]
                    for s3 in range(l3):
                        for s4 in range(l4):
                            n = head + coins[3, s3] + coins[4, s4]
                            cat = n
                            if n == 4:
                                cat = category[masks[0, s0] * 4096 + masks[1, s1] * 512
                                               + masks[2, s2] * 64 + masks[3, s3] * 8
                                               + masks[4, s4]]
                            win = 0
                            for k in range(n_alive):
                                line = alive[k]
                                win += table[codes[0, s0, line], codes[1, s1, line],
                                             codes[2, s2, line], codes[3, s3, line],
                                             codes[4, s4, line]]
                            hist[w, cat, win] += 1
                            if jackpot:
                                jackpots[w, cat] += 1
                                jackpot_wins[w, cat] += win


@nb.njit(cache=True, parallel=True)
def _respin_direct(codes: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64],
            weights: npt.NDArray[np.int64], pays3: npt.NDArray[np.bool_],
            table: npt.NDArray[np.int32], hist: npt.NDArray[np.int64]) -> None:
    """Like ``_base_direct`` over distinct stops only: ``weights[reel, k]`` stops show
    column ``k``."""
    workers = hist.shape[0]
    l0, l1, l2, l3, l4 = lengths[0], lengths[1], lengths[2], lengths[3], lengths[4]
    jack = np.zeros(pays3.shape, dtype=np.bool_)
    tail = 0
    for s3 in range(l3):
        for s4 in range(l4):
            tail += weights[3, s3] * weights[4, s4]
    for w in nb.prange(workers):
        alive = np.empty(codes.shape[2], dtype=np.int64)
        for s0 in range(w, l0, workers):
            for s1 in range(l1):
                for s2 in range(l2):
                    head = weights[0, s0] * weights[1, s1] * weights[2, s2]
                    n_alive, _ = _alive(codes, s0, s1, s2, pays3, jack, alive)
                    if n_alive == 0:
                        hist[w, 0] += head * tail
                        continue
                    for s3 in range(l3):
                        for s4 in range(l4):
                            win = 0
                            for k in range(n_alive):
                                line = alive[k]
                                win += table[codes[0, s0, line], codes[1, s1, line],
                                             codes[2, s2, line], codes[3, s3, line],
                                             codes[4, s4, line]]
                            hist[w, win] += head * weights[3, s3] * weights[4, s4]


@nb.njit(cache=True, nogil=True)
def dead_heads(col0: npt.NDArray[np.int64], col1: npt.NDArray[np.int64],
               col2: npt.NDArray[np.int64], rows: npt.NDArray[np.int64],
               pays: npt.NDArray[np.bool_], jack: npt.NDArray[np.bool_]
               ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Over every stop combination of reels 0-2 (``col[r][stop, row]``: the symbol shown):
    whether no line makes a paying run of 3 and none a €€€ line (``pays``, ``jack`` of the
    three symbols; ``rows[line]``: the line's row on reels 0-2), and whether a €€€ line shows.
    Per stop pair of reels 0-1, the symbols on each row of reel 2 that would complete either
    are marked first, so each stop of reel 2 is three lookups, not one per line."""
    l0, l1, l2 = col0.shape[0], col1.shape[0], col2.shape[0]
    n = pays.shape[0]
    dead = np.empty((l0, l1, l2), dtype=np.bool_)
    jackpot = np.empty((l0, l1, l2), dtype=np.bool_)
    completes = np.empty((3, n), dtype=np.bool_)
    completes_jack = np.empty((3, n), dtype=np.bool_)
    for s0 in range(l0):
        for s1 in range(l1):
            completes[:] = False
            completes_jack[:] = False
            for line in range(rows.shape[0]):
                a, b, row = col0[s0, rows[line, 0]], col1[s1, rows[line, 1]], rows[line, 2]
                for c in range(n):
                    if pays[a, b, c]:
                        completes[row, c] = True
                    if jack[a, b, c]:
                        completes_jack[row, c] = True
            for s2 in range(l2):
                hit = False
                shown = False
                for row in range(3):
                    c = col2[s2, row]
                    hit = hit or completes[row, c]
                    shown = shown or completes_jack[row, c]
                jackpot[s0, s1, s2] = shown
                dead[s0, s1, s2] = not hit and not shown
    return dead, jackpot


def _workers() -> int:
    return max(1, nb.get_num_threads())


def four_coin_layouts(strips: tuple[ReelStrip, ...]) -> tuple[Layout, ...]:
    """Every combination of per-reel coin bits with 4 coins in all that the strips can show."""
    per_reel = []
    for strip in strips:
        _, _, masks, _ = _strip_codes((strip,) * 5)
        per_reel.append(sorted({int(m) for m in masks[0, :len(strip)]}))
    found: list[tuple[int, ...]] = []

    def walk(prefix: tuple[int, ...], coins: int) -> None:
        if len(prefix) == 5:
            if coins == STAR_WILD_COINS:
                found.append(prefix)
            return
        for m in per_reel[len(prefix)]:
            if coins + bin(m).count("1") <= STAR_WILD_COINS:
                walk((*prefix, m), coins + bin(m).count("1"))

    walk((), 0)
    return tuple((a, b, c, d, e) for a, b, c, d, e in found)


def _category_table(layouts: tuple[Layout, ...]) -> npt.NDArray[np.int64]:
    category = np.full(8 ** 5, -1, dtype=np.int64)
    for i, (m0, m1, m2, m3, m4) in enumerate(layouts):
        category[m0 * 4096 + m1 * 512 + m2 * 64 + m3 * 8 + m4] = COIN_CATEGORIES + i
    return category


def base_joint(model: MathModel, *, direct: bool = False) -> BaseJoint:
    """Count every base stop combination of ``model`` (see the module docstring), over head
    states, or with ``direct`` one combination at a time (the reference: the same integers)."""
    codes, coins, masks, lengths = _strip_codes(model.base_reels)
    layouts = four_coin_layouts(model.base_reels)
    category = _category_table(layouts)
    n_cat = COIN_CATEGORIES + len(layouts)
    table, pays3, jack = _tables()
    workers = _workers()
    hist = np.zeros((workers, n_cat, MAX_BASE_WIN + 1), dtype=np.int64)
    jackpots = np.zeros((workers, n_cat), dtype=np.int64)
    jackpot_wins = np.zeros((workers, n_cat), dtype=np.int64)
    if direct:
        _base_direct(codes, lengths, coins, masks, pays3, jack, table, category, hist, jackpots,
                     jackpot_wins)
    else:
        l0, l1, l2 = (int(x) for x in lengths[:3])
        shows_jackpot = jack[codes[0, :l0, None, None, :], codes[1, None, :l1, None, :],
                             codes[2, None, None, :l2, :]].any(axis=-1)
        extra = (masks[0, :l0, None, None] << 6 | masks[1, None, :l1, None] << 3
                 | masks[2, None, None, :l2] | shows_jackpot.astype(np.int64) << 9)
        cls, count, bits = _head_states(codes, lengths, np.ones_like(masks), extra)
        _, pays = head_classes()
        _base_states(cls, count, bits, codes, lengths, coins, masks, pays, category, hist,
                     jackpots, jackpot_wins)
    return BaseJoint(combinations=math.prod(len(s) for s in model.base_reels), layouts=layouts,
                     histogram=hist.sum(axis=0), jackpots=jackpots.sum(axis=0),
                     jackpot_wins=jackpot_wins.sum(axis=0))


_HEADS: dict[tuple[object, ...], tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = {}


def _respin_heads(strips: tuple[ReelStrip, ...], wilds: tuple[tuple[tuple[int, int], str], ...],
                  codes: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64],
                  weights: npt.NDArray[np.int64]
                  ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The respin's head states, once per respin strips and wilds on reels 0-2 (the 649
    layouts of the default model share about a hundred)."""
    key = (strips, wilds)
    if key not in _HEADS:
        if len(_HEADS) >= 256:
            _HEADS.clear()
        cls, count, _ = _head_states(codes, lengths, weights)
        _HEADS[key] = (cls, count)
    return _HEADS[key]


@lru_cache(maxsize=1024)
def _reel_columns(strip: ReelStrip, reel: int, fixed: tuple[tuple[int, str], ...]
                  ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct columns reel ``reel`` of ``strip`` shows with ``fixed`` (row, symbol)
    cells in place, as the symbol on each line's row (``[column, line]``), and how many stops
    show each: stops that show the same cells (a reel of three wilds) are counted once, with a
    weight. Once per reel and wilds on it: the 649 layouts of the default model share them."""
    codes, _, _, lengths = _strip_codes((strip,) * 5, {(reel, row): s for row, s in fixed})
    columns, counts = np.unique(codes[reel, :lengths[reel]], axis=0, return_counts=True)
    columns.flags.writeable = counts.flags.writeable = False  # shared by every caller
    return columns, counts.astype(np.int64)


def respin_histogram(model: MathModel, wilds: dict[tuple[int, int], str], *,
                     direct: bool = False) -> npt.NDArray[np.int64]:
    """``[win]``: respin stop combinations of ``model`` with that line win (line bets) when
    ``wilds`` (cell -> WILD or MWILD) stay in place (``direct``: see :func:`base_joint`)."""
    strips = model.star_wild_reels
    reels = [_reel_columns(strip, reel, tuple(sorted((row, s) for (r, row), s in wilds.items()
                                                     if r == reel)))
             for reel, strip in enumerate(strips)]
    lengths = np.array([len(counts) for _, counts in reels], dtype=np.int64)
    unique = np.zeros((5, max(len(s) for s in strips), len(LINES)), dtype=np.int64)
    weights = np.zeros(unique.shape[:2], dtype=np.int64)
    for reel, (columns, counts) in enumerate(reels):
        unique[reel, :len(counts)] = columns
        weights[reel, :len(counts)] = counts
    hist = np.zeros((_workers(), MAX_RESPIN_WIN + 1), dtype=np.int64)
    if direct:
        table, pays3, _ = _tables()
        _respin_direct(unique, lengths, weights, pays3, table, hist)
    else:
        head_wilds = tuple(sorted((cell, s) for cell, s in wilds.items() if cell[0] < 3))
        cls, count = _respin_heads(strips[:3], head_wilds, unique, lengths, weights)
        _, pays = head_classes()
        _respin_states(cls, count, unique, lengths, weights, pays, hist)
    return hist.sum(axis=0)
