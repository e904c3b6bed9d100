"""The compiled Monte Carlo kernel: whole rounds of Star Fever, counted into integer sums.

One round = base spin (5 stops, 20 lines through the prefix/finish tables, coins counted per
stop), then, off the hot path, the Star Wild respin or Hold & Cash exactly as RULES.md orders
them, drawing in the same order as ``starfever.engine.round.play_round``. Wins are integers in
**line bets** (a Hold & Cash multiple of the total bet counts 20 line bets), so every sum merges
exactly. The €€€ lines are counted, not paid: the progressive's return is its contribution rate.

Arrays of the model come as the tuple ``KernelTables.as_tuple()``, indexed by the ``T_*``
positions of ``starfever.sim.tables``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

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
from starfever.sim.rng import StreamState, below, pick
from starfever.sim.tables import (
    COIN_INDEX,
    JACKPOT_LINE,
    MWILD_INDEX,
    T_BASE_COINS,
    T_BASE_LENGTHS,
    T_BASE_LINE_CODES,
    T_BASE_WINDOWS,
    T_CASH_MULTIPLES,
    T_CASH_VALUES,
    T_CELL_WEIGHTS,
    T_COIN_VALUES,
    T_FINISH,
    T_JACKPOT,
    T_LINE_PAY,
    T_LINE_ROWS,
    T_PREFIX,
    T_STAR_WILD_LENGTHS,
    T_STAR_WILD_WINDOWS,
    WILD_INDEX,
)

LINE_BETS_PER_TOTAL_BET = LINE_COUNT
"""A total bet is 20 line bets: the kernel's unit of money is the line bet."""
MAX_ROUND_WIN = (1 << 31) - 1
"""Largest round win (line bets) whose square the int64 sums hold; beyond it the kernel stops."""
_SQUARE_CARRY = 1 << 62
_SMALL_WINS = 2048
"""Wins below this many line bets are binned by a lookup table, not a search."""

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
N_SUMS = 26

# Hold & Cash cell kinds, in CELL_KINDS order (0 also marks an empty cell).
_BLANK, _CASH, _MINOR, _MAJOR, _UPGRADE = 0, 1, 2, 3, 4

# Columns of play_rounds' per-round record.
ROUND_FIELDS = ("base_pay", "base_jackpot_lines", "coins", "star_wild_pay",
                "respin_jackpot_lines", "hold_multiple", "minors", "majors", "mega",
                "respins")

KernelArgs = tuple[npt.NDArray[Any], ...]


@njit(cache=True)
def _star_wild(t: KernelArgs, stops: npt.NDArray[np.int64], state: StreamState,
               grid: npt.NDArray[np.int8]) -> tuple[int, int]:
    """The respin after exactly 4 coins: (line pay in line bets, €€€ lines)."""
    base_windows, base_coins = t[T_BASE_WINDOWS], t[T_BASE_COINS]
    sw_lengths, sw_windows = t[T_STAR_WILD_LENGTHS], t[T_STAR_WILD_WINDOWS]
    line_rows, line_pay, jackpot = t[T_LINE_ROWS], t[T_LINE_PAY], t[T_JACKPOT]
    respin = np.empty(REELS, dtype=np.int64)
    for reel in range(REELS):
        respin[reel] = below(state, sw_lengths[reel])
    for reel in range(REELS):
        stacked = base_coins[reel, stops[reel]] == ROWS
        for row in range(ROWS):
            if base_windows[reel, stops[reel], row] == COIN_INDEX:
                grid[reel, row] = MWILD_INDEX if stacked else WILD_INDEX
            else:
                grid[reel, row] = sw_windows[reel, respin[reel], row]
    pay = 0
    jackpots = 0
    for line in range(line_rows.shape[0]):
        r = line_rows[line]
        a, b, c = grid[0, r[0]], grid[1, r[1]], grid[2, r[2]]
        pay += line_pay[a, b, c, grid[3, r[3]], grid[4, r[4]]]
        if jackpot[a, b, c]:
            jackpots += 1
    return pay, jackpots


@njit(cache=True)
def _hold_and_cash(t: KernelArgs, stops: npt.NDArray[np.int64], state: StreamState,
                   kinds: npt.NDArray[np.int64], values: npt.NDArray[np.int64],
                   boosters: npt.NDArray[np.int64]) -> tuple[int, int, int, int, int]:
    """The feature after 5+ coins: (payout in total bets, minors, majors, mega, respins)."""
    base_windows = t[T_BASE_WINDOWS]
    cell_w, coin_w, cash_w = t[T_CELL_WEIGHTS], t[T_COIN_VALUES], t[T_CASH_VALUES]
    multiples = t[T_CASH_MULTIPLES]
    cell_total, coin_total, cash_total = cell_w.sum(), coin_w.sum(), cash_w.sum()
    held = 0
    for cell in range(CELLS):  # cell = reel * 3 + row: reading order
        kinds[cell] = _BLANK
        values[cell] = 0
        if base_windows[cell // ROWS, stops[cell // ROWS], cell % ROWS] == COIN_INDEX:
            kinds[cell] = _CASH
            values[cell] = multiples[pick(state, coin_w, coin_total)]
            held += 1
    left = HOLD_AND_CASH_RESPINS
    played = 0
    while left > 0 and held < CELLS:
        played += 1
        landed = False
        n_boosters = 0
        for cell in range(CELLS):
            if kinds[cell] != _BLANK:
                continue
            kind = pick(state, cell_w, cell_total)
            if kind == _BLANK:
                continue
            landed = True
            if kind == _CASH:
                values[cell] = multiples[pick(state, cash_w, cash_total)]
            if kind <= _MAJOR:
                kinds[cell] = kind
                held += 1
            else:
                boosters[n_boosters] = kind
                n_boosters += 1
        for i in range(n_boosters):  # reading order, after the new symbols are held
            for cell in range(CELLS):
                if kinds[cell] == _CASH:
                    if boosters[i] == _UPGRADE:
                        values[cell] += 1
                    else:
                        values[cell] *= 2
        left = HOLD_AND_CASH_RESPINS if landed else left - 1
    cash = 0
    minors = 0
    majors = 0
    for cell in range(CELLS):
        if kinds[cell] == _CASH:
            cash += values[cell]
        elif kinds[cell] == _MINOR:
            minors += 1
        elif kinds[cell] == _MAJOR:
            majors += 1
    mega = 1 if held == CELLS else 0
    multiple = cash + MINOR_PAYS * minors + MAJOR_PAYS * majors + MEGA_PAYS * mega
    return multiple, minors, majors, mega, played


@njit(cache=True)
def _base_spin(t: KernelArgs, stops: npt.NDArray[np.int64],
               state: StreamState) -> tuple[int, int, int]:
    """Draw the 5 stops: (line pay in line bets, €€€ lines, coins). The hot path."""
    lengths, coins, codes = t[T_BASE_LENGTHS], t[T_BASE_COINS], t[T_BASE_LINE_CODES]
    prefix, finish = t[T_PREFIX], t[T_FINISH]
    s0 = below(state, lengths[0])
    s1 = below(state, lengths[1])
    s2 = below(state, lengths[2])
    s3 = below(state, lengths[3])
    s4 = below(state, lengths[4])
    stops[0], stops[1], stops[2], stops[3], stops[4] = s0, s1, s2, s3, s4
    pay = 0
    jackpots = 0
    for line in range(codes.shape[2]):
        p = prefix[codes[0, s0, line] + codes[1, s1, line] + codes[2, s2, line]]
        if p >= 0:  # only lines still alive after reel 2 read reels 3 and 4
            pay += finish[p, codes[3, s3, line] + codes[4, s4, line]]
        elif p == JACKPOT_LINE:
            jackpots += 1
    n_coins = coins[0, s0] + coins[1, s1] + coins[2, s2] + coins[3, s3] + coins[4, s4]
    return pay, jackpots, n_coins


@njit(cache=True)
def _add_square(sums: npt.NDArray[np.int64], at: int, x: int) -> None:
    sums[at] += x * x
    if sums[at] >= _SQUARE_CARRY:
        sums[at] -= _SQUARE_CARRY
        sums[at + 1] += 1


@njit(cache=True)
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


@njit(cache=True)
def _fold_square(sums: npt.NDArray[np.int64], at: int, squares: int, carries: int) -> None:
    """Add a local sum of squares (below 2**62) and its carries to ``sums[at]``."""
    sums[at] += squares
    sums[at + 1] += carries
    if sums[at] >= _SQUARE_CARRY:
        sums[at] -= _SQUARE_CARRY
        sums[at + 1] += 1


@njit(cache=True)
def run_chunk(t: KernelArgs, state: StreamState, spins: int, sums: npt.NDArray[np.int64],
              win_hist: npt.NDArray[np.int64], hold_hist: npt.NDArray[np.int64],
              edges: npt.NDArray[np.float64]) -> None:
    """Play ``spins`` rounds from ``state`` and add them to ``sums`` and the histograms.

    ``win_hist[0]`` counts rounds that win nothing, ``win_hist[k]`` rounds whose game win in
    total bets falls in ``[edges[k-2], edges[k-1])`` (k = 1: below ``edges[0]``); ``hold_hist``
    bins Hold & Cash payouts the same way.
    """
    stops = np.empty(REELS, dtype=np.int64)
    grid = np.empty((REELS, ROWS), dtype=np.int8)
    kinds = np.empty(CELLS, dtype=np.int64)
    values = np.empty(CELLS, dtype=np.int64)
    boosters = np.empty(CELLS, dtype=np.int64)
    small_bins = np.zeros(_SMALL_WINS, dtype=np.int64)  # bins of the common small wins
    for win in range(1, _SMALL_WINS):
        small_bins[win] = _bin(edges, win / LINE_BETS_PER_TOTAL_BET)
    # hot counters live in registers; features update ``sums`` directly
    lines_sum = lines_sq = lines_carry = 0
    game_sum = game_sq = game_carry = 0
    hits = winning = max_win = 0
    for _ in range(spins):
        pay, jackpots, n_coins = _base_spin(t, stops, state)
        star = 0
        hold = 0
        if n_coins >= STAR_WILD_COINS or jackpots > 0:  # off the hot path
            respin_jackpots = 0
            if n_coins >= HOLD_AND_CASH_COINS:
                multiple, minors, majors, mega, played = _hold_and_cash(
                    t, stops, state, kinds, values, boosters)
                if multiple > MAX_ROUND_WIN // LINE_BETS_PER_TOTAL_BET:
                    raise OverflowError("a Hold & Cash payout exceeds the simulator's range")
                hold = multiple * LINE_BETS_PER_TOTAL_BET
                sums[HOLDS] += 1
                sums[MEGAS] += mega
                sums[MINORS] += minors
                sums[MAJORS] += majors
                sums[HOLD_RESPINS] += played
                sums[HOLD_SUM] += hold
                _add_square(sums, HOLD_SQ, hold)
                hold_hist[_bin(edges, float(multiple))] += 1
            elif n_coins == STAR_WILD_COINS:
                star, respin_jackpots = _star_wild(t, stops, state, grid)
                sums[STAR_WILDS] += 1
                sums[RESPIN_JACKPOT_LINES] += respin_jackpots
                if star > 0:
                    sums[STAR_WILD_SUM] += star
                    _add_square(sums, STAR_WILD_SQ, star)
            if jackpots > 0:
                sums[JACKPOT_SPINS] += 1
                sums[JACKPOT_LINES] += jackpots
            if jackpots + respin_jackpots > 0:
                sums[JACKPOT_ROUNDS] += 1
            hits += 1
        elif pay > 0:
            hits += 1
        if pay > 0:
            lines_sum += pay
            lines_sq += pay * pay
            if lines_sq >= _SQUARE_CARRY:
                lines_sq -= _SQUARE_CARRY
                lines_carry += 1
        win = pay + star + hold
        if win > 0:
            if win > MAX_ROUND_WIN:
                raise OverflowError("a round win exceeds the simulator's range")
            winning += 1
            game_sum += win
            game_sq += win * win
            if game_sq >= _SQUARE_CARRY:
                game_sq -= _SQUARE_CARRY
                game_carry += 1
            max_win = max(max_win, win)
            if win < _SMALL_WINS:
                win_hist[small_bins[win]] += 1
            else:
                win_hist[_bin(edges, win / LINE_BETS_PER_TOTAL_BET)] += 1
    win_hist[0] += spins - winning
    sums[SPINS] += spins
    sums[HITS] += hits
    sums[WINNING_ROUNDS] += winning
    sums[LINES_SUM] += lines_sum
    _fold_square(sums, LINES_SQ, lines_sq, lines_carry)
    sums[GAME_SUM] += game_sum
    _fold_square(sums, GAME_SQ, game_sq, game_carry)
    sums[MAX_WIN] = max(sums[MAX_WIN], max_win)


@njit(cache=True)
def play_rounds(t: KernelArgs, state: StreamState, rounds: int) -> npt.NDArray[np.int64]:
    """Each round's outcome, one row per round, columns :data:`ROUND_FIELDS` (for tests that
    replay the same stream through the engine)."""
    out = np.zeros((rounds, len(ROUND_FIELDS)), dtype=np.int64)
    stops = np.empty(REELS, dtype=np.int64)
    grid = np.empty((REELS, ROWS), dtype=np.int8)
    kinds = np.empty(CELLS, dtype=np.int64)
    values = np.empty(CELLS, dtype=np.int64)
    boosters = np.empty(CELLS, dtype=np.int64)
    for i in range(rounds):
        pay, jackpots, n_coins = _base_spin(t, stops, state)
        out[i, 0], out[i, 1], out[i, 2] = pay, jackpots, n_coins
        if n_coins == STAR_WILD_COINS:
            out[i, 3], out[i, 4] = _star_wild(t, stops, state, grid)
        elif n_coins >= HOLD_AND_CASH_COINS:
            multiple, minors, majors, mega, played = _hold_and_cash(
                t, stops, state, kinds, values, boosters)
            out[i, 5], out[i, 6], out[i, 7], out[i, 8], out[i, 9] = (
                multiple, minors, majors, mega, played)
    return out
