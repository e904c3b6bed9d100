"""The compiled Monte Carlo kernel: whole rounds of Star Fever, counted into integer sums.

One round = base spin (5 stops, 20 lines through the prefix/finish tables, coins counted per
stop), then, off the hot path, the Star Wild respin or Hold & Cash exactly as RULES.md orders
them, drawing in the same order as ``starfever.engine.round.play_round``. Wins are integers in
**line bets** (Hold & Cash values too: a CASH value of 1 x total bet is 20 line bets, and a
line-bet model's UPGRADE adds 1), so every sum merges exactly. The €€€ lines are counted, not
paid: the progressive's return is its contribution rate.

Arrays of the model come as the tuple ``KernelTables.as_tuple()``, indexed by the ``T_*``
positions of ``starfever.sim.tables``.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import numpy.typing as npt
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros

from starfever.engine.symbols import (
    CELLS,
    HOLD_AND_CASH_COINS,
    HOLD_AND_CASH_RESPINS,
    LINE_COUNT,
    MAJOR_PAYS,
    MEGA_PAYS,
    MINOR_PAYS,
    REELS,
    ROWS,
    STAR_WILD_COINS,
)
from starfever.sim.rng import (
    StreamState,
    below,
    below_local,
    spin_radix,
    spin_stops,
    spin_stops_local,
)
from starfever.sim.tables import (
    COIN_INDEX,
    COINS_COLUMN,
    F_BASE_STRIDE,
    F_COIN_LINES,
    F_COINS,
    F_FINISH,
    F_HOLD,
    F_PREFIX,
    F_SW_CODES,
    F_SW_LENGTHS,
    F_SW_MASKS,
    F_SW_STRIDE,
    F_WINDOWS,
    HOT_COLUMNS,
    HP_CAP,
    HP_CASH,
    HP_CELL,
    HP_COIN,
    HP_MULTIPLES,
    HP_TOTALS,
    HP_UPGRADE,
    JACKPOT_SHIFT,
    LANE_BITS,
    LANE_MASK,
    MASK_WORDS,
    MWILD_INDEX,
    N_SYMBOLS,
    SENTINEL_LINE,
    T_BASE_LENGTHS,
    T_FEATURE,
    T_HOT_CODES,
    T_HOT_FINISH,
    T_HOT_MASKS,
    T_HOT_ROWS,
    T_HOT_STRIDE,
    T_SPIN_THRESHOLD,
    WILD_INDEX,
)

LINE_BETS_PER_TOTAL_BET = LINE_COUNT
"""A total bet is 20 line bets: the kernel's unit of money is the line bet."""
MAX_ROUND_WIN = (1 << 31) - 1
"""Largest round win (line bets) whose square the int64 sums hold; beyond it the kernel stops."""
_SQUARE_CARRY = 1 << 62
_TALLY = 2048
"""Base-spin line pays below this many line bets are tallied by the hot loop (all of them, for
the shipped models); larger ones are counted one by one."""
trailing_zeros = cast(Any, _trailing_zeros)
"""LLVM's count-trailing-zeros (one ``tzcnt``), as numba exposes it."""
_ONE = np.uint64(1)
_CODE_SCALE = (N_SYMBOLS * N_SYMBOLS, N_SYMBOLS, 1, N_SYMBOLS, 1)
"""Scale of a symbol index per reel in the prefix (reels 0-2) and finish (3-4) indices."""
_LANE_1 = np.uint64(LANE_BITS)
_LANE_2 = np.uint64(JACKPOT_SHIFT)
_LANE_MASK = np.uint64(LANE_MASK)
_BELOW_JACKPOT = np.uint64((1 << JACKPOT_SHIFT) - 1)
_SENTINEL = np.uint64(1 << SENTINEL_LINE)
_ZERO, _TWO, _THREE, _FOUR = np.uint64(0), np.uint64(2), np.uint64(3), np.uint64(4)
_MASK_WORDS = np.uint64(MASK_WORDS)
_COLUMNS = np.uint64(HOT_COLUMNS)
_COINS = np.uint64(COINS_COLUMN)

# Layout of a chunk's int64 sums. Each *_SQ is followed by its carry (count of 2**62).
SPINS = 0
LINES_SUM, LINES_SQ = 1, 2
STAR_WILD_SUM, STAR_WILD_SQ = 4, 5
HOLD_SUM, HOLD_SQ = 7, 8
GAME_SUM, GAME_SQ = 10, 11
HITS = 13
STAR_WILDS = 14
HOLDS = 15
MEGAS = 16
MINORS = 17
MAJORS = 18
HOLD_RESPINS = 19
JACKPOT_SPINS = 20
JACKPOT_LINES = 21
RESPIN_JACKPOT_LINES = 22
MAX_WIN = 23
JACKPOT_ROUNDS = 24
WINNING_ROUNDS = 25
LINES_X_STAR_WILD = 26
"""Sum over Star Wild rounds of base line pay x respin pay (for the variance-reduced estimator)."""
HOLDS_BY_COINS = 27
"""``HOLDS_BY_COINS + n``: Hold & Cash features triggered by ``n`` coins (n = 0..15)."""
LINES_BY_COINS = HOLDS_BY_COINS + CELLS + 1
"""``LINES_BY_COINS + n``: base line pay summed over the rounds that triggered with ``n`` coins."""
N_SUMS = LINES_BY_COINS + CELLS + 1

# Hold & Cash cell kinds, in CELL_KINDS order (0 also marks an empty cell).
_BLANK, _CASH, _MINOR, _MAJOR, _UPGRADE = 0, 1, 2, 3, 4

# Columns of play_rounds' per-round record.
ROUND_FIELDS = ("base_pay", "base_jackpot_lines", "coins", "star_wild_pay",
                "respin_jackpot_lines", "hold_pay", "minors", "majors", "mega",
                "respins")
"""``base_pay``, ``star_wild_pay`` and ``hold_pay`` (the Hold & Cash payout, before any cap) in
line bets."""

KernelArgs = tuple[npt.NDArray[Any], ...]


# Scratch of the feature code, one int64 array: the base stops, the respin stops, the respin
# grid, and the Hold & Cash cells' CASH values and the boosters of a respin.
(_S_STOPS, _S_RESPIN, _S_GRID, _S_VALUES, _S_BOOSTERS) = (0, 5, 10, 25, 40)
SCRATCH = 55


@njit(cache=True, inline="always")
def _star_wild(f: npt.NDArray[np.int64], scratch: npt.NDArray[np.int64],
               state: StreamState) -> tuple[int, int]:
    """The respin after exactly 4 coins at the base stops ``scratch[_S_STOPS:]``:
    (line pay in line bets, €€€ lines). Reads the flat ``feature`` table ``f``.

    As the base spin: the respin strips' line masks, with every line that crosses a coin (now
    a wild, compatible with every paying class and never €€€) switched on, give the lines
    alive after reel 2; only those are read through the prefix and finish tables."""
    coins, stride = f[F_COINS], f[f[F_BASE_STRIDE]]
    sw_lengths, sw_stride = f[F_SW_LENGTHS], f[f[F_SW_STRIDE]]
    sw_masks, sw_codes, coin_lines = f[F_SW_MASKS], f[F_SW_CODES], f[F_COIN_LINES]
    prefix, finish = f[F_PREFIX], f[F_FINISH]
    for reel in range(REELS):  # the respin's stops first, in reel order, as the engine draws
        scratch[_S_RESPIN + reel] = below(state, f[sw_lengths + reel])
    for reel in range(REELS):  # lines through a wild, and the wild's scaled symbol, per reel
        base = reel * stride + scratch[_S_STOPS + reel]
        scratch[_S_GRID + reel] = f[coin_lines + base]
        wild = MWILD_INDEX if f[coins + base] == ROWS else WILD_INDEX
        scratch[_S_GRID + REELS + reel] = wild * _CODE_SCALE[reel]
    w0 = w1 = w2 = np.int64(-1)
    for reel in range(3):
        wild_lines = scratch[_S_GRID + reel]
        spread = wild_lines | (wild_lines << LANE_BITS) | (wild_lines << JACKPOT_SHIFT)
        m = (reel * sw_stride + scratch[_S_RESPIN + reel]) * MASK_WORDS
        w0 &= f[sw_masks + m] | spread
        w1 &= f[sw_masks + m + 1] | spread
        w2 &= (f[sw_masks + m + 2] | (wild_lines | (wild_lines << LANE_BITS))) & ~(
            wild_lines << JACKPOT_SHIFT)
    lanes = w0 | w1 | (w2 & ((1 << JACKPOT_SHIFT) - 1))
    alive = (lanes | (lanes >> LANE_BITS) | (lanes >> JACKPOT_SHIFT)) & LANE_MASK
    jackpots = _bit_count(int((w2 >> JACKPOT_SHIFT) & LANE_MASK))
    pay = 0
    while alive:
        line = trailing_zeros(alive)
        alive &= alive - 1
        p = 0
        for reel in range(REELS):
            if (scratch[_S_GRID + reel] >> line) & 1:
                code = scratch[_S_GRID + REELS + reel]
            else:
                code = f[sw_codes + (reel * sw_stride + scratch[_S_RESPIN + reel]) * LINE_COUNT
                         + line]
            if reel == 2:
                p = f[prefix + p + code] * N_SYMBOLS * N_SYMBOLS
            else:
                p += code
        pay += f[finish + p]
    return pay, jackpots


@njit(cache=True, inline="always")
def _hold_and_cash(f: npt.NDArray[np.int64], scratch: npt.NDArray[np.int64],
                   state: StreamState, room: int) -> tuple[int, int, int, int, int]:
    """The feature after 5+ coins at the base stops ``scratch[_S_STOPS:]``: (payout in line
    bets, minors, majors, mega, respins). ``room``: line bets left below the max-win cap
    (negative: no cap); the feature ends once the held values are worth that much.

    Values are kept in line bets, as in ``engine.holdcash`` (the CASH values of ``HP_MULTIPLES``
    are 20..100); an UPGRADE adds ``HP_UPGRADE`` (1 for a line-bet model, 20 for a total-bet
    one).

    Draws as ``engine.holdcash`` does (weighted picks by one bounded draw of the weights' sum,
    cells in reading order); the generator stays in registers for the whole feature. The board
    is three 15-bit masks (empty cells, cells holding CASH, cells that landed this respin),
    walked lowest bit first, which is reading order; only the CASH values live in ``scratch``."""
    windows, stride, params = f[F_WINDOWS], f[f[F_BASE_STRIDE]], f[F_HOLD]
    cell_total = f[params + HP_TOTALS]
    coin_total = f[params + HP_TOTALS + 1]
    cash_total = f[params + HP_TOTALS + 2]
    blank_w = f[params + HP_CELL + _BLANK]
    # The cumulative weights of the cell kinds after BLANK and of the CASH values: a pick is
    # how many of them lie at or below the draw (the rule of _index, without its branches).
    k1 = blank_w + f[params + HP_CELL + 1]
    k2 = k1 + f[params + HP_CELL + 2]
    k3 = k2 + f[params + HP_CELL + 3]
    k4 = k3 + f[params + HP_CELL + 4]
    v1 = f[params + HP_CASH]
    v2 = v1 + f[params + HP_CASH + 1]
    v3 = v2 + f[params + HP_CASH + 2]
    v4 = v3 + f[params + HP_CASH + 3]
    upgrade_step = f[params + HP_UPGRADE]
    values, boosters = _S_VALUES, _S_BOOSTERS
    x0, x1, x2, x3 = state[0], state[1], state[2], state[3]
    held = minors = majors = 0
    empty = cash = _ZERO
    for cell in range(CELLS):  # cell = reel * 3 + row: reading order
        reel = cell // ROWS
        stop = reel * stride + scratch[_S_STOPS + reel]
        bit = _ONE << np.uint64(cell)
        if f[windows + stop * ROWS + cell - reel * ROWS] == COIN_INDEX:
            draw, x0, x1, x2, x3 = below_local(x0, x1, x2, x3, coin_total)
            scratch[values + cell] = f[params + HP_MULTIPLES
                                       + _index(f, params + HP_COIN, 5, draw)]
            cash |= bit
            held += 1
        else:
            empty |= bit
    left = HOLD_AND_CASH_RESPINS
    played = 0
    while left > 0 and held < CELLS:
        if room >= 0:  # the max-win cap: stop once the held values reach it
            value = (MINOR_PAYS * minors + MAJOR_PAYS * majors) * LINE_BETS_PER_TOTAL_BET
            todo = cash
            while todo:
                cell = trailing_zeros(todo)
                todo &= todo - _ONE
                value += scratch[values + cell]
            if value >= room:
                break
        played += 1
        n_boosters = 0
        landed = _ZERO
        todo = empty
        while todo:
            cell = trailing_zeros(todo)
            todo &= todo - _ONE
            draw, x0, x1, x2, x3 = below_local(x0, x1, x2, x3, cell_total)
            if draw < blank_w:  # most cells stay empty
                continue
            bit = _ONE << np.uint64(cell)
            kind = _BLANK + 1 + (draw >= k1) + (draw >= k2) + (draw >= k3) + (draw >= k4)
            if kind == _CASH:
                draw, x0, x1, x2, x3 = below_local(x0, x1, x2, x3, cash_total)
                scratch[values + cell] = f[params + HP_MULTIPLES + (draw >= v1) + (draw >= v2)
                                           + (draw >= v3) + (draw >= v4)]
                cash |= bit
            if kind <= _MAJOR:
                landed |= bit
                held += 1
                minors += kind == _MINOR
                majors += kind == _MAJOR
            else:
                scratch[boosters + n_boosters] = kind
                n_boosters += 1
        for i in range(n_boosters):  # reading order, after the new symbols are held
            upgrade = scratch[boosters + i] == _UPGRADE
            todo = cash
            while todo:
                cell = trailing_zeros(todo)
                todo &= todo - _ONE
                if upgrade:
                    scratch[values + cell] += upgrade_step
                else:
                    scratch[values + cell] *= 2
        empty &= ~landed
        left = HOLD_AND_CASH_RESPINS if landed or n_boosters > 0 else left - 1
    state[0], state[1], state[2], state[3] = x0, x1, x2, x3
    total = 0
    while cash:
        cell = trailing_zeros(cash)
        cash &= cash - _ONE
        total += scratch[values + cell]
    mega = 1 if held == CELLS else 0
    payout = total + (MINOR_PAYS * minors + MAJOR_PAYS * majors
                      + MEGA_PAYS * mega) * LINE_BETS_PER_TOTAL_BET
    return payout, minors, majors, mega, played


@njit(cache=True, inline="always")
def _index(weights: npt.NDArray[np.int64], first: int, count: int, draw: int) -> int:
    """The weighted pick's rule (``engine.rng.weighted_index``) over
    ``weights[first:first + count]`` for a draw already made below their sum."""
    for index in range(count):
        if draw < weights[first + index]:
            return index
        draw -= weights[first + index]
    return -1  # unreachable while the draw is below the weights' sum


@njit(cache=True, inline="always")
def _base_spin(t: KernelArgs, stride: np.uint64, s0: np.uint64, s1: np.uint64, s2: np.uint64,
               s3: np.uint64, s4: np.uint64) -> tuple[int, np.uint64, int]:
    """The paid spin at these stops: (line pay in line bets, €€€ line mask, coins). The hot path.

    The line masks of reels 0-2 say in 9 loads which lines are still alive after reel 2 (and
    which are €€€ lines); only those read the prefix and finish tables. Flat unsigned tables
    with constant row lengths, read at unsigned offsets (no wraparound code for negative
    indices), keep the loop's working set in registers. ``stride`` is ``t[T_HOT_STRIDE][0]``,
    read once by the caller."""
    codes, masks, rows, finish = t[T_HOT_CODES], t[T_HOT_MASKS], t[T_HOT_ROWS], t[T_HOT_FINISH]
    m0 = s0 * _MASK_WORDS
    m1 = (stride + s1) * _MASK_WORDS
    m2 = (_TWO * stride + s2) * _MASK_WORDS
    w0 = masks[m0] & masks[m1] & masks[m2]
    w1 = masks[m0 + _ONE] & masks[m1 + _ONE] & masks[m2 + _ONE]
    w2 = masks[m0 + _TWO] & masks[m1 + _TWO] & masks[m2 + _TWO]
    lanes = w0 | w1 | (w2 & _BELOW_JACKPOT)
    alive = (lanes | (lanes >> _LANE_1) | (lanes >> _LANE_2)) & _LANE_MASK
    jackpot_mask = w2 >> _LANE_2
    c0 = s0 * _COLUMNS
    c1 = (stride + s1) * _COLUMNS
    c2 = (_TWO * stride + s2) * _COLUMNS
    c3 = (_THREE * stride + s3) * _COLUMNS
    c4 = (_FOUR * stride + s4) * _COLUMNS
    # the first alive line, or the sentinel (which pays 0): no branch on "any line alive?"
    line = np.uint64(trailing_zeros(alive | _SENTINEL))
    row = np.uint64(rows[np.uint64(codes[c0 + line]) + codes[c1 + line] + codes[c2 + line]])
    pay = np.int64(finish[row + codes[c3 + line] + codes[c4 + line]])
    alive &= alive - _ONE
    while alive:  # a second alive line: about one spin in nine
        line = np.uint64(trailing_zeros(alive))
        alive &= alive - _ONE
        row = np.uint64(rows[np.uint64(codes[c0 + line]) + codes[c1 + line] + codes[c2 + line]])
        pay += finish[row + codes[c3 + line] + codes[c4 + line]]
    n_coins = (np.int64(codes[c0 + _COINS]) + codes[c1 + _COINS] + codes[c2 + _COINS]
               + codes[c3 + _COINS] + codes[c4 + _COINS])
    return pay, jackpot_mask, n_coins  # type: ignore[return-value]


@njit(cache=True, inline="always")
def _bit_count(x: int | np.uint64) -> int:
    bits = np.uint64(x)
    n = 0
    while bits:
        bits &= bits - _ONE
        n += 1
    return n


@njit(cache=True, inline="always")
def _add_square(sums: npt.NDArray[np.int64], at: int, x: int) -> None:
    sums[at] += x * x
    if sums[at] >= _SQUARE_CARRY:
        sums[at] -= _SQUARE_CARRY
        sums[at + 1] += 1


@njit(cache=True, inline="always")
def _bin(edges: npt.NDArray[np.float64], x: float) -> int:
    """Histogram bin of a positive amount: 1 + the number of edges at or below it."""
    lo, hi = 0, edges.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if edges[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo + 1


@njit(cache=True, inline="always")
def _fold_square(sums: npt.NDArray[np.int64], at: int, squares: int, carries: int) -> None:
    """Add a local sum of squares (below 2**62) and its carries to ``sums[at]``."""
    sums[at] += squares
    sums[at + 1] += carries
    if sums[at] >= _SQUARE_CARRY:
        sums[at] -= _SQUARE_CARRY
        sums[at + 1] += 1


@njit(cache=True, inline="always")
def _tally_round(tally: npt.NDArray[np.int64], sums: npt.NDArray[np.int64],
                 win_hist: npt.NDArray[np.int64], edges: npt.NDArray[np.float64], pay: int,
                 win: int, jackpot: bool) -> None:
    """Count one round off the hot path: its line pay ``pay`` and game win ``win`` (line bets)
    go to the tally's second and third rows, or, beyond them, straight to the sums. It is a hit
    when its total win is above zero: a game win, or a €€€ share (``jackpot``)."""
    if win > MAX_ROUND_WIN:
        raise OverflowError("a round win exceeds the simulator's range")
    if win > 0 or jackpot:
        sums[HITS] += 1
    if pay < _TALLY:
        tally[_TALLY + pay] += 1
    else:
        sums[LINES_SUM] += pay
        _add_square(sums, LINES_SQ, pay)
    if win < _TALLY:
        tally[2 * _TALLY + win] += 1
    else:
        sums[GAME_SUM] += win
        _add_square(sums, GAME_SQ, win)
        sums[WINNING_ROUNDS] += 1
        sums[MAX_WIN] = max(sums[MAX_WIN], win)
        win_hist[_bin(edges, win / LINE_BETS_PER_TOTAL_BET)] += 1


@njit(cache=True)
def _fold_moments(counts: npt.NDArray[np.int64], sums: npt.NDArray[np.int64], at: int) -> None:
    """Add ``counts[v]`` rounds of value ``v`` to the sum ``sums[at]`` and the squares at
    ``at + 1`` (with their carry)."""
    for value in range(counts.shape[0]):
        n = counts[value]
        if n == 0:
            continue
        sums[at] += value * n
        square = value * value
        while n > 0:  # n * value**2 in pieces below 2**62
            part = min(n, _SQUARE_CARRY // (square + 1))
            _fold_square(sums, at + 1, part * square, 0)
            n -= part


@njit(cache=True)
def _fold_wins(counts: npt.NDArray[np.int64], sums: npt.NDArray[np.int64],
               win_hist: npt.NDArray[np.int64], edges: npt.NDArray[np.float64]) -> None:
    """Add ``counts[w]`` rounds of game win ``w`` to the winning rounds, the largest win and
    the win histogram."""
    win_hist[0] += counts[0]
    for win in range(1, counts.shape[0]):
        n = counts[win]
        if n > 0:
            sums[WINNING_ROUNDS] += n
            sums[MAX_WIN] = max(sums[MAX_WIN], win)
            win_hist[_bin(edges, win / LINE_BETS_PER_TOTAL_BET)] += n


@njit(cache=True)
def _fold_tally(tally: npt.NDArray[np.int64], sums: npt.NDArray[np.int64],
                win_hist: npt.NDArray[np.int64], edges: npt.NDArray[np.float64]) -> None:
    """Add a chunk's tally to the sums and the win histogram. Row 0 counts the rounds that were
    a base spin and nothing else by their line pay (their game win), row 1 the other rounds by
    line pay, row 2 the other rounds by game win."""
    base = tally[:_TALLY]
    _fold_moments(base, sums, LINES_SUM)
    _fold_moments(tally[_TALLY:2 * _TALLY], sums, LINES_SUM)
    _fold_moments(base, sums, GAME_SUM)
    _fold_moments(tally[2 * _TALLY:], sums, GAME_SUM)
    _fold_wins(base, sums, win_hist, edges)
    _fold_wins(tally[2 * _TALLY:], sums, win_hist, edges)
    sums[HITS] += base[1:].sum()


@njit(cache=True, nogil=True)
def run_chunk(t: KernelArgs, state: StreamState, spins: int, sums: npt.NDArray[np.int64],
              win_hist: npt.NDArray[np.int64], hold_hist: npt.NDArray[np.int64],
              edges: npt.NDArray[np.float64], jackpots_at: npt.NDArray[np.int64]) -> None:
    """Play ``spins`` rounds from ``state`` and add them to ``sums`` and the histograms.

    ``win_hist[0]`` counts rounds that win nothing, ``win_hist[k]`` rounds whose game win in
    total bets falls in ``[edges[k-2], edges[k-1])`` (k = 1: below ``edges[0]``); ``hold_hist``
    bins Hold & Cash payouts the same way. ``jackpots_at[i] = (spin, base lines, respin lines,
    game win)`` records the i-th round with €€€ lines (its index in the chunk, how many €€€
    lines its base spin and its Star Wild respin showed, and its game win in line bets after
    any cap: what a cap that holds the whole round leaves for the €€€ is the rest), for as many
    rounds as it has rows;
    ``sums[JACKPOT_ROUNDS]`` says how many there were.

    The hot loop only tallies the rounds that are a base spin and nothing else by their line
    pay (``tally[pay] += 1``), the other rounds by line pay and by game win; sums, squares,
    hits and bins come from the tally at the end (:func:`_fold_tally`), in integers, so they
    are exactly what counting each round would give.
    """
    radix = spin_radix(t[T_BASE_LENGTHS], t[T_SPIN_THRESHOLD][0])
    stride = np.uint64(t[T_HOT_STRIDE][0])
    feature = t[T_FEATURE]
    scratch = np.zeros(SCRATCH, dtype=np.int64)
    tally = np.zeros(3 * _TALLY, dtype=np.int64)
    x0, x1, x2, x3 = state[0], state[1], state[2], state[3]  # the generator, in registers
    for spin in range(spins):
        (s0, s1, s2, s3, s4), (x0, x1, x2, x3) = spin_stops_local(x0, x1, x2, x3, radix)
        pay, jackpot_mask, n_coins = _base_spin(t, stride, s0, s1, s2, s3, s4)
        if n_coins < STAR_WILD_COINS and jackpot_mask == _ZERO and pay < _TALLY:
            tally[np.uint64(pay)] += 1  # the hot path: 97 % of the rounds
            continue
        state[0], state[1], state[2], state[3] = x0, x1, x2, x3
        scratch[0], scratch[1], scratch[2], scratch[3], scratch[4] = s0, s1, s2, s3, s4
        _feature_round(feature, scratch, state, spin, pay, int(jackpot_mask), n_coins, tally,
                       sums, win_hist, hold_hist, edges, jackpots_at)
        x0, x1, x2, x3 = state[0], state[1], state[2], state[3]
    state[0], state[1], state[2], state[3] = x0, x1, x2, x3
    sums[SPINS] += spins
    _fold_tally(tally, sums, win_hist, edges)


@njit(cache=True, inline="always")
def _feature_round(feature: npt.NDArray[np.int64], scratch: npt.NDArray[np.int64],
                   state: StreamState, spin: int, pay: int, jackpot_mask: int, n_coins: int,
                   tally: npt.NDArray[np.int64], sums: npt.NDArray[np.int64],
                   win_hist: npt.NDArray[np.int64], hold_hist: npt.NDArray[np.int64],
                   edges: npt.NDArray[np.float64], jackpots_at: npt.NDArray[np.int64]) -> None:
    """The rest of a round off the hot path (stops in ``scratch[:5]``, its line pay, €€€ line
    mask and coins: a feature, €€€ lines or a line pay beyond the tally): the feature it
    triggers, then the round's counts."""
    win = pay
    jackpots = _bit_count(jackpot_mask)
    respin_jackpots = 0
    if n_coins >= HOLD_AND_CASH_COINS:
        cap = feature[feature[F_HOLD] + HP_CAP]
        hold, minors, majors, mega, played = _hold_and_cash(
            feature, scratch, state, cap - pay if cap >= 0 else -1)
        if hold > MAX_ROUND_WIN:
            raise OverflowError("a Hold & Cash payout exceeds the simulator's range")
        if 0 <= cap < pay + hold:  # the round's game win stops at the cap
            hold = cap - pay
        win += hold
        sums[HOLDS] += 1
        sums[HOLDS_BY_COINS + n_coins] += 1
        sums[LINES_BY_COINS + n_coins] += pay
        sums[MEGAS] += mega
        sums[MINORS] += minors
        sums[MAJORS] += majors
        sums[HOLD_RESPINS] += played
        sums[HOLD_SUM] += hold
        _add_square(sums, HOLD_SQ, hold)
        hold_hist[_bin(edges, hold / LINE_BETS_PER_TOTAL_BET)] += 1
    elif n_coins == STAR_WILD_COINS:
        star, respin_jackpots = _star_wild(feature, scratch, state)
        cap = feature[feature[F_HOLD] + HP_CAP]
        if 0 <= cap < pay + star:  # the round's game win stops at the cap, as in the engine
            star = cap - pay
        win += star
        sums[STAR_WILDS] += 1
        sums[RESPIN_JACKPOT_LINES] += respin_jackpots
        if star > 0:
            sums[STAR_WILD_SUM] += star
            sums[LINES_X_STAR_WILD] += pay * star
            _add_square(sums, STAR_WILD_SQ, star)
    if jackpots > 0:
        sums[JACKPOT_SPINS] += 1
        sums[JACKPOT_LINES] += jackpots
    if jackpots + respin_jackpots > 0:
        at = sums[JACKPOT_ROUNDS]
        if at < jackpots_at.shape[0]:
            jackpots_at[at, 0] = spin
            jackpots_at[at, 1] = jackpots
            jackpots_at[at, 2] = respin_jackpots
            jackpots_at[at, 3] = win
        sums[JACKPOT_ROUNDS] += 1
    _tally_round(tally, sums, win_hist, edges, pay, win, jackpots + respin_jackpots > 0)


@njit(cache=True)
def play_rounds(t: KernelArgs, state: StreamState, rounds: int) -> npt.NDArray[np.int64]:
    """Each round's outcome, one row per round, columns :data:`ROUND_FIELDS` (for tests that
    replay the same stream through the engine)."""
    lengths, threshold, feature = t[T_BASE_LENGTHS], t[T_SPIN_THRESHOLD][0], t[T_FEATURE]
    stride = np.uint64(t[T_HOT_STRIDE][0])
    out = np.zeros((rounds, len(ROUND_FIELDS)), dtype=np.int64)
    scratch = np.zeros(SCRATCH, dtype=np.int64)
    for i in range(rounds):
        s0, s1, s2, s3, s4 = spin_stops(state, lengths, threshold)
        scratch[0], scratch[1], scratch[2], scratch[3], scratch[4] = s0, s1, s2, s3, s4
        pay, jackpot_mask, n_coins = _base_spin(t, stride, s0, s1, s2, s3, s4)
        out[i, 0], out[i, 1], out[i, 2] = pay, _bit_count(jackpot_mask), n_coins
        if n_coins == STAR_WILD_COINS:
            out[i, 3], out[i, 4] = _star_wild(feature, scratch, state)
        elif n_coins >= HOLD_AND_CASH_COINS:
            cap = feature[feature[F_HOLD] + HP_CAP]
            out[i, 5:10] = _hold_and_cash(feature, scratch, state, cap - pay if cap >= 0 else -1)
    return out
