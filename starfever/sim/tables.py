"""What the kernel reads: a math model turned into small integer arrays, built once per run.

Every line pay comes from ``starfever.math.tables.line_pay_table`` (the one line evaluator); this
module only reshapes it for the hot loop:

- ``prefix[144 a + 12 b + c]`` says what reels 0-2 of a line decide: :data:`DEAD` (no pay, no
  €€€), :data:`JACKPOT_LINE` (a €€€ line, which can never pay), or the id of a prefix that can
  still pay, whose pay is ``finish[id, 12 d + e]`` once reels 3 and 4 are known. Only 160 of the
  1728 prefixes can pay, so both tables stay in the first-level cache.
- ``line_codes[reel, stop, line]``: the symbol each stop shows on each line, already scaled
  (x 144, x 12, x 1 on reels 0-2; x 12, x 1 on reels 3-4), so a line costs five loads, two
  additions per lookup and no index arithmetic in the hot loop.
- ``windows[reel, stop, row]`` and ``coins[reel, stop]`` per stop of each (padded) strip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from starfever.engine.model import MathModel, ReelStrip
from starfever.engine.symbols import CASH_VALUES, COIN, LINES, MWILD, REELS, ROWS, WILD
from starfever.math.tables import (
    N_SYMBOLS,
    SYMBOL_INDEX,
    jackpot_table,
    line_pay_table,
    strip_windows,
)
from starfever.sim.rng import MAX_BOUND

DEAD = -1
"""``prefix`` value: reels 0-2 of the line neither pay nor make a €€€ line."""
JACKPOT_LINE = -2
"""``prefix`` value: JACKPOT on reels 0-2 of the line."""

COIN_INDEX = SYMBOL_INDEX[COIN]
WILD_INDEX = SYMBOL_INDEX[WILD]
MWILD_INDEX = SYMBOL_INDEX[MWILD]

Int8Array = npt.NDArray[np.int8]
Int16Array = npt.NDArray[np.int16]
Int32Array = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]


# Positions in KernelTables.as_tuple(): compile-time constants for the kernel.
(T_BASE_LENGTHS, T_BASE_WINDOWS, T_BASE_COINS, T_BASE_LINE_CODES, T_STAR_WILD_LENGTHS,
 T_STAR_WILD_WINDOWS, T_LINE_ROWS, T_PREFIX, T_FINISH, T_LINE_PAY, T_JACKPOT, T_CELL_WEIGHTS,
 T_COIN_VALUES, T_CASH_VALUES, T_CASH_MULTIPLES) = range(15)


@dataclass(frozen=True, slots=True)
class KernelTables:
    """A math model as the compiled kernel reads it (all arrays C-contiguous, read-only use)."""

    base_lengths: Int64Array
    """Length of each base strip."""
    base_windows: Int8Array
    """``[reel, stop, row]`` symbol index shown by each base stop (strips padded)."""
    base_coins: Int8Array
    """``[reel, stop]`` COINs shown by each base stop."""
    base_line_codes: Int16Array
    """``[reel, stop, line]``: the scaled symbol index each base stop shows on each line."""
    star_wild_lengths: Int64Array
    """Length of each Star Wild respin strip."""
    star_wild_windows: Int8Array
    """``[reel, stop, row]`` of the respin strips."""
    line_rows: Int64Array
    """``[line, reel]``: the 20 paylines."""
    prefix: Int16Array
    """``[144 a + 12 b + c]``: :data:`DEAD`, :data:`JACKPOT_LINE` or a live prefix id."""
    finish: Int16Array
    """``[id, 12 d + e]``: pay of a live prefix completed by reels 3 and 4, in line bets."""
    line_pay: Int32Array
    """The full ``[a, b, c, d, e]`` line pay table (Star Wild respins, with wilds fixed)."""
    jackpot: npt.NDArray[np.bool_]
    """``[a, b, c]``: a €€€ line."""
    cell_weights: Int64Array
    """Hold & Cash weights of BLANK, CASH, MINOR, MAJOR, UPGRADE, MULTIPLIER."""
    coin_values: Int64Array
    """Weights of the triggering coins' values 1..5."""
    cash_values: Int64Array
    """Weights of respin CASH values 1..5."""
    cash_multiples: Int64Array
    """The values 1..5 (x total bet) the value weights pick from."""

    def as_tuple(self) -> tuple[npt.NDArray[np.generic], ...]:
        """The arrays in field order, as the kernel takes them (``T_*`` name the positions)."""
        return tuple(getattr(self, name) for name in self.__slots__)


def _padded_windows(strips: tuple[ReelStrip, ...]) -> tuple[Int64Array, Int8Array]:
    longest = max(len(s) for s in strips)
    windows = np.zeros((REELS, longest, ROWS), dtype=np.int8)
    for reel, strip in enumerate(strips):
        windows[reel, : len(strip)] = strip_windows(strip)
    return np.array([len(s) for s in strips], dtype=np.int64), windows


def _prefix_tables() -> tuple[Int16Array, Int16Array]:
    pays = line_pay_table()
    jackpots = jackpot_table()
    prefix = np.full((N_SYMBOLS,) * 3, DEAD, dtype=np.int16)
    finishes: list[Int32Array] = []
    for a in range(N_SYMBOLS):
        for b in range(N_SYMBOLS):
            for c in range(N_SYMBOLS):
                if jackpots[a, b, c]:
                    prefix[a, b, c] = JACKPOT_LINE
                elif pays[a, b, c].any():
                    prefix[a, b, c] = len(finishes)
                    finishes.append(pays[a, b, c])
    finish = np.array(finishes, dtype=np.int32)
    if finish.max() > np.iinfo(np.int16).max:
        raise AssertionError("a line pay does not fit the int16 finish table")
    return prefix.reshape(-1), finish.astype(np.int16).reshape(len(finishes), -1)


def _weights(weights: tuple[int, ...], what: str) -> Int64Array:
    if sum(weights) > MAX_BOUND:
        raise ValueError(f"hold_and_cash.{what} weights sum to more than 2**32; "
                         "the simulator cannot draw them without bias")
    return np.array(weights, dtype=np.int64)


def kernel_tables(model: MathModel) -> KernelTables:
    """Build the kernel's tables for ``model``."""
    base_lengths, base_windows = _padded_windows(model.base_reels)
    sw_lengths, sw_windows = _padded_windows(model.star_wild_reels)
    prefix, finish = _prefix_tables()
    coins = (base_windows == COIN_INDEX).sum(axis=2).astype(np.int8)
    rows = np.array(LINES, dtype=np.int64)
    scale = (N_SYMBOLS * N_SYMBOLS, N_SYMBOLS, 1, N_SYMBOLS, 1)
    line_codes = np.stack([base_windows[reel][:, rows[:, reel]].astype(np.int16) * scale[reel]
                           for reel in range(REELS)])
    hc = model.hold_and_cash
    return KernelTables(
        base_lengths=base_lengths,
        base_windows=base_windows,
        base_coins=coins,
        base_line_codes=np.ascontiguousarray(line_codes, dtype=np.int16),
        star_wild_lengths=sw_lengths,
        star_wild_windows=sw_windows,
        line_rows=rows,
        prefix=prefix,
        finish=finish,
        line_pay=line_pay_table().copy(),
        jackpot=jackpot_table().copy(),
        cell_weights=_weights(hc.cell_weights, "cell_weights"),
        coin_values=_weights(hc.coin_values, "coin_values"),
        cash_values=_weights(hc.cash_values, "cash_values"),
        cash_multiples=np.array(CASH_VALUES, dtype=np.int64),
    )
