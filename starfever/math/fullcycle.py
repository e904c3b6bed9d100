"""Full-cycle enumeration of the base game: every combination of the five base reels' stops.

This is the brute-force counterpart of ``exact``: it counts, over all
``L0 * L1 * L2 * L3 * L4`` stop combinations, the line win of the paid spin, its square, the
coin count, hits and €€€ lines, all in integers. ``starfever rtp --full-cycle`` checks that it
agrees with the factorised calculator to the last digit, and uses its exact cross moments to
tighten the standard deviation.

A line pays only if reels 0-2 already match, so for each stop combination of reels 0-2 the
lines still alive are found once and only those are finished over reels 3 and 4; combinations
with no live line need no inner loop (their coin counts combine with reels 3-4 by convolution).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numba as nb
import numpy as np
import numpy.typing as npt

from starfever.engine.model import MathModel
from starfever.engine.symbols import COIN, LINE_COUNT, LINES, PAYTABLE, ROWS
from starfever.math.tables import SYMBOL_INDEX, jackpot_table, line_pay_table, strip_windows

MAX_LINE_WIN = LINE_COUNT * max(max(pays) for pays in PAYTABLE.values())
"""Histogram size: no paid spin can pay more line bets than every line at the top pay (the
MWILD x3 appears only in Star Wild respins, which the full cycle does not enumerate)."""
MASKS = 8
"""Coin patterns of one reel: 3 bits, one per row."""


@dataclass(frozen=True)
class FullCycle:
    """Integer sums over every base stop combination."""

    combinations: int
    """Number of stop combinations (the product of the strip lengths)."""
    line_win_sum: int
    """Sum of the paid spin's line wins, in line bets."""
    line_win_squares: int
    """Sum of their squares."""
    hits: int
    """Combinations with a line win, a €€€ line or 4+ coins."""
    jackpots: int
    """Combinations with at least one €€€ line."""
    coin_counts: tuple[int, ...]
    """Combinations by number of coins (0..15)."""
    line_win_by_coins: tuple[int, ...]
    """Sum of line wins over the combinations with each coin count."""
    line_win_histogram: npt.NDArray[np.int64]
    """Combinations with a line win, by the win in line bets (index = win; index 0 unused)."""
    line_win_by_mask: npt.NDArray[np.int64]
    """``[m0, m1, m2, m3, m4]``: sum of line wins over combinations with these coin patterns
    (bit r = row r holds a coin), kept only where the patterns hold exactly 4 coins."""

    def fraction(self, count: int) -> Fraction:
        """``count`` as a share of all combinations."""
        return Fraction(count, self.combinations)

    @property
    def lines_rtp(self) -> Fraction:
        """Line RTP per unit total bet."""
        return Fraction(self.line_win_sum, self.combinations * LINE_COUNT)


@nb.njit(cache=True, parallel=True)
def _enumerate(codes: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64],
               coins: npt.NDArray[np.int64], masks: npt.NDArray[np.int64],
               pays3: npt.NDArray[np.bool_], jack: npt.NDArray[np.bool_],
               table: npt.NDArray[np.int32], n_lines: int,
               out_sums: npt.NDArray[np.int64], out_hist: npt.NDArray[np.int64],
               out_coins: npt.NDArray[np.int64], out_by_coins: npt.NDArray[np.int64],
               out_mask: npt.NDArray[np.int64]) -> None:
    l0, l1, l2, l3, l4 = lengths[0], lengths[1], lengths[2], lengths[3], lengths[4]
    for s0 in nb.prange(l0):
        alive = np.empty(n_lines, dtype=np.int64)
        for s1 in range(l1):
            for s2 in range(l2):
                n_alive = 0
                jackpot = False
                for line in range(n_lines):
                    a = codes[0, s0, line]
                    b = codes[1, s1, line]
                    c = codes[2, s2, line]
                    if pays3[a, b, c]:
                        alive[n_alive] = line
                        n_alive += 1
                    if jack[a, b, c]:
                        jackpot = True
                head_coins = coins[0, s0] + coins[1, s1] + coins[2, s2]
                if jackpot:
                    out_sums[s0, 2] += l3 * l4
                for s3 in range(l3):
                    for s4 in range(l4):
                        n_coins = head_coins + coins[3, s3] + coins[4, s4]
                        win = 0
                        for k in range(n_alive):
                            line = alive[k]
                            win += table[codes[0, s0, line], codes[1, s1, line],
                                         codes[2, s2, line], codes[3, s3, line],
                                         codes[4, s4, line]]
                        out_coins[s0, n_coins] += 1
                        if win > 0 or jackpot or n_coins >= 4:
                            out_sums[s0, 3] += 1
                        if win > 0:
                            out_sums[s0, 0] += win
                            out_sums[s0, 1] += win * win
                            out_hist[s0, win] += 1
                            out_by_coins[s0, n_coins] += win
                            if n_coins == 4:
                                out_mask[s0, masks[0, s0], masks[1, s1], masks[2, s2],
                                         masks[3, s3], masks[4, s4]] += win


def full_cycle(model: MathModel) -> FullCycle:
    """Enumerate every base stop combination of ``model``."""
    strips = model.base_reels
    lengths = np.array([len(s) for s in strips], dtype=np.int64)
    longest = int(lengths.max())
    codes = np.zeros((5, longest, len(LINES)), dtype=np.int64)
    coins = np.zeros((5, longest), dtype=np.int64)
    masks = np.zeros((5, longest), dtype=np.int64)
    coin = SYMBOL_INDEX[COIN]
    for reel, strip in enumerate(strips):
        windows = strip_windows(strip).astype(np.int64)
        n = len(strip)
        for line, rows in enumerate(LINES):
            codes[reel, :n, line] = windows[:, rows[reel]]
        is_coin = windows == coin
        coins[reel, :n] = is_coin.sum(axis=1)
        masks[reel, :n] = (is_coin * (1 << np.arange(ROWS))).sum(axis=1)
    table = np.ascontiguousarray(line_pay_table())
    pays3 = table.reshape(table.shape[0] ** 3, -1).max(axis=1).reshape(table.shape[:3]) > 0
    jack = np.ascontiguousarray(jackpot_table())
    l0 = int(lengths[0])
    sums = np.zeros((l0, 4), dtype=np.int64)
    hist = np.zeros((l0, MAX_LINE_WIN + 1), dtype=np.int64)
    coin_counts = np.zeros((l0, 16), dtype=np.int64)
    by_coins = np.zeros((l0, 16), dtype=np.int64)
    by_mask = np.zeros((l0, *(MASKS,) * 5), dtype=np.int64)
    _enumerate(codes, lengths, coins, masks, pays3, jack, table, len(LINES), sums, hist,
               coin_counts, by_coins, by_mask)
    total = sums.sum(axis=0)
    return FullCycle(
        combinations=int(np.prod(lengths)),
        line_win_sum=int(total[0]),
        line_win_squares=int(total[1]),
        jackpots=int(total[2]),
        hits=int(total[3]),
        coin_counts=tuple(int(x) for x in coin_counts.sum(axis=0)),
        line_win_by_coins=tuple(int(x) for x in by_coins.sum(axis=0)),
        line_win_histogram=hist.sum(axis=0),
        line_win_by_mask=by_mask.sum(axis=0),
    )
