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
- ``line_masks[reel, stop, word]`` (reels 0-2): for each of up to 9 symbol classes (the
  paying symbols, each with the wilds, and the €€€ symbol alone) the 20-bit set of lines on
  which this stop shows a symbol of the class, three classes to a 64-bit word (bits 0, 21, 42).
  ANDing the words of reels 0-2 and folding the lanes gives at once the lines still alive after
  reel 2 and the €€€ lines: a spin does 9 loads and a dozen bit operations, then reads the
  prefix and finish tables for the alive lines only (half a line per spin on average). That
  this equals ``prefix >= 0`` and ``prefix == JACKPOT_LINE`` for every one of the 1728 triples
  is checked whenever the tables are built.
- ``windows[reel, stop, row]`` and ``coins[reel, stop]`` per stop of each (padded) strip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from starfever.engine.model import MathModel, ModelError, ReelStrip
from starfever.engine.symbols import (
    CASH_VALUES,
    COIN,
    JACKPOT,
    LINE_COUNT,
    LINES,
    MWILD,
    REELS,
    ROWS,
    SYMBOLS,
    WILD,
)
from starfever.math.tables import (
    N_SYMBOLS,
    SYMBOL_INDEX,
    jackpot_table,
    line_pay_table,
    strip_windows,
)
from starfever.sim.rng import MAX_BOUND, spin_threshold

DEAD = -1
"""``prefix`` value: reels 0-2 of the line neither pay nor make a €€€ line."""
JACKPOT_LINE = -2
"""``prefix`` value: JACKPOT on reels 0-2 of the line."""
SENTINEL_LINE = LINE_COUNT
"""Index of the extra line in ``base_line_codes`` that always pays 0."""
LANE_BITS = 21
"""Stride of the 20-line lanes in a ``line_masks`` word."""
LANE_MASK = (1 << LINE_COUNT) - 1
MASK_WORDS = 3
"""Words per stop in ``line_masks``: 3 x 3 lanes = 8 paying classes and the €€€ lane."""
JACKPOT_SHIFT = 2 * LANE_BITS
"""The €€€ lane is the last lane of the last word."""

COIN_INDEX = SYMBOL_INDEX[COIN]
WILD_INDEX = SYMBOL_INDEX[WILD]
MWILD_INDEX = SYMBOL_INDEX[MWILD]

Int8Array = npt.NDArray[np.int8]
Int16Array = npt.NDArray[np.int16]
Int32Array = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]


KERNEL_FIELDS = ("base_lengths", "spin_threshold", "hot_stride", "feature", "hot_codes",
                 "hot_masks", "hot_rows", "hot_finish")
"""The tables the compiled kernel reads, in the order of :meth:`KernelTables.as_tuple`; the
other fields are what they are built from (and what tests and the benchmark read)."""
# Positions in KernelTables.as_tuple(): compile-time constants for the kernel.
(T_BASE_LENGTHS, T_SPIN_THRESHOLD, T_HOT_STRIDE, T_FEATURE, T_HOT_CODES, T_HOT_MASKS, T_HOT_ROWS,
 T_HOT_FINISH) = range(len(KERNEL_FIELDS))

# Header of ``feature``: where each table starts in the one flat array the feature code reads.
(F_WINDOWS, F_COINS, F_BASE_STRIDE, F_SW_LENGTHS, F_SW_WINDOWS, F_SW_STRIDE, F_LINE_ROWS,
 F_PREFIX, F_FINISH, F_HOLD, F_SW_MASKS, F_SW_CODES, F_COIN_LINES, F_HEADER) = range(14)

# Layout of ``hold_params``: the Hold & Cash weights in one array (one argument, not five).
(HP_CELL, HP_COIN, HP_CASH, HP_MULTIPLES) = (0, 6, 11, 16)
HP_TOTALS = 21
"""``hold_params[HP_TOTALS + k]``: the sums of the cell, coin and cash weights."""
HP_CAP = 24
"""``hold_params[HP_CAP]``: the model's max-win cap in line bets, or -1 for none."""
HP_UPGRADE = 25
"""``hold_params[HP_UPGRADE]``: what one UPGRADE adds to a held CASH value, in line bets."""

HOT_COLUMNS = LINE_COUNT + 2
"""Columns per stop in ``hot_codes``: the 20 lines, the sentinel line, the stop's coins."""
COINS_COLUMN = LINE_COUNT + 1


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
    """``[reel, stop, line]``: the scaled symbol index each base stop shows on each line; line
    :data:`SENTINEL_LINE` is the sentinel, which always reads a zero pay."""
    star_wild_lengths: Int64Array
    """Length of each Star Wild respin strip."""
    star_wild_windows: Int8Array
    """``[reel, stop, row]`` of the respin strips."""
    line_rows: Int64Array
    """``[line, reel]``: the 20 paylines."""
    prefix: Int16Array
    """``[144 a + 12 b + c]``: :data:`DEAD`, :data:`JACKPOT_LINE` or a live prefix id; entry
    1728 (the sentinel line's) is the id of the last, all-zero, ``finish`` row."""
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
    """The CASH values the value weights pick from, in line bets (1..5 x total bet)."""
    line_masks: npt.NDArray[np.uint64]
    """``[reel, stop, word]`` for reels 0-2: the lines each stop can still carry, per class."""
    spin_threshold: Int64Array
    """``[2**32 mod N]`` for ``N`` the product of the base strip lengths (see ``rng``)."""
    hot_codes: npt.NDArray[np.uint16]
    """The hot loop's copy of ``base_line_codes`` and ``base_coins``, flat and unsigned (no
    shapes, strides or negative-index checks to keep in registers): entry
    ``(reel * hot_stride + stop) * HOT_COLUMNS + column``."""
    hot_masks: npt.NDArray[np.uint64]
    """``line_masks`` flat: ``(reel * hot_stride + stop) * MASK_WORDS + word``."""
    hot_rows: npt.NDArray[np.uint16]
    """``prefix`` for the hot loop: the offset in ``hot_finish`` of each live prefix's row
    (``id * 144``); unused (0) for dead and €€€ prefixes, which the hot loop never reads."""
    hot_finish: Int16Array
    """``finish`` flat: ``row offset + 12 d + e``."""
    hot_stride: Int64Array
    """``[longest base strip]``: stops per reel in the flat tables."""
    hold_params: Int64Array
    """Cell, coin and cash weights, the cash multiples and the three weight sums, at the
    ``HP_*`` offsets."""
    feature: Int64Array
    """Everything the Star Wild and Hold & Cash code reads, flat in one array (a call passes one
    pointer, not two dozen arrays): a header of start offsets (``F_*``), then the base windows
    and coins, the respin strips, the lines, ``prefix``, ``finish`` and ``hold_params``."""

    def as_tuple(self) -> tuple[npt.NDArray[np.generic], ...]:
        """The arrays the kernel reads, as it takes them (``T_*`` name the positions): only
        these travel to every worker."""
        return tuple(getattr(self, name) for name in KERNEL_FIELDS)


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


def _mask_classes(prefix: Int16Array) -> list[set[int]]:
    """The symbol sets whose lanes ``line_masks`` holds: per paying symbol, it and the wilds;
    last, the €€€ symbol alone. Checked against ``prefix`` for every triple."""
    wilds = {WILD_INDEX, MWILD_INDEX}
    table = prefix.reshape((N_SYMBOLS,) * 3)
    paying = [k for k in range(N_SYMBOLS) if k not in wilds and table[k, k, k] >= 0]
    lanes = MASK_WORDS * 3 - 1
    if len(paying) > lanes:
        raise ValueError(f"{len(paying)} paying symbols: line_masks holds {lanes}")
    classes = [{k, *wilds} for k in paying] + [set()] * (lanes - len(paying))
    classes.append({SYMBOL_INDEX[JACKPOT]})
    for a in range(N_SYMBOLS):
        for b in range(N_SYMBOLS):
            for c in range(N_SYMBOLS):
                alive = any({a, b, c} <= cls for cls in classes[:-1])
                jackpot = {a, b, c} <= classes[-1]
                if alive != (table[a, b, c] >= 0) or jackpot != (table[a, b, c] == JACKPOT_LINE):
                    raise AssertionError(f"line masks disagree with the prefix table at "
                                         f"{(SYMBOLS[a], SYMBOLS[b], SYMBOLS[c])!r}")
    return classes


def _line_masks(windows: Int8Array, prefix: Int16Array) -> npt.NDArray[np.uint64]:
    classes = _mask_classes(prefix)
    rows = np.array(LINES, dtype=np.int64)
    masks = np.zeros((3, windows.shape[1], MASK_WORDS), dtype=np.uint64)
    for reel in range(3):
        shown = windows[reel][:, rows[:, reel]]  # [stop, line]
        for lane, cls in enumerate(classes):
            word, shift = divmod(lane, 3)
            hits = np.isin(shown, sorted(cls)) if cls else np.zeros_like(shown, dtype=bool)
            bits = (hits.astype(np.uint64) << np.arange(LINE_COUNT, dtype=np.uint64)).sum(axis=1)
            masks[reel, :, word] |= bits.astype(np.uint64) << np.uint64(shift * LANE_BITS)
    return masks


def _scaled_codes(windows: Int8Array) -> Int64Array:
    """``[reel, stop, line]``: the symbol on each line, scaled as the prefix and finish tables
    index them (x 144, x 12, x 1 on reels 0-2; x 12, x 1 on reels 3-4)."""
    rows = np.array(LINES, dtype=np.int64)
    scale = (N_SYMBOLS * N_SYMBOLS, N_SYMBOLS, 1, N_SYMBOLS, 1)
    return np.stack([windows[reel][:, rows[:, reel]].astype(np.int64) * scale[reel]
                     for reel in range(REELS)])


def _coin_lines(windows: Int8Array) -> Int64Array:
    """``[reel, stop]``: the lines that cross a COIN on that reel at that stop (a Star Wild
    respin turns those cells into wilds)."""
    rows = np.array(LINES, dtype=np.int64)
    bits = np.zeros(windows.shape[:2], dtype=np.int64)
    for reel in range(REELS):
        coin = windows[reel][:, rows[:, reel]] == COIN_INDEX  # [stop, line]
        bits[reel] = (coin.astype(np.int64) << np.arange(LINE_COUNT, dtype=np.int64)).sum(axis=1)
    return bits


def _feature(base_windows: Int8Array, coins: Int8Array, sw_lengths: Int64Array,
             sw_windows: Int8Array, rows: Int64Array, prefix: Int16Array, finish: Int16Array,
             hold: Int64Array, sw_masks: npt.NDArray[np.uint64]) -> Int64Array:
    parts = [base_windows, coins, np.array([base_windows.shape[1]]), sw_lengths, sw_windows,
             np.array([sw_windows.shape[1]]), rows, prefix, finish, hold,
             sw_masks.astype(np.int64), _scaled_codes(sw_windows), _coin_lines(base_windows)]
    header = np.zeros(F_HEADER, dtype=np.int64)
    at = F_HEADER
    for slot, part in enumerate(parts):
        header[slot] = at
        at += part.size
    return np.concatenate([header, *(np.asarray(p, dtype=np.int64).reshape(-1)
                                     for p in parts)])


def _hold_params(cell: tuple[int, ...], coin: tuple[int, ...], cash: tuple[int, ...],
                 cap_x: int | None, upgrade: int) -> Int64Array:
    if (len(cell), len(coin), len(cash), len(CASH_VALUES)) != (6, 5, 5, 5):
        raise ValueError("Hold & Cash takes 6 cell weights and 5 weights per value")
    sums = [sum(_weights(w, what)) for w, what in ((cell, "cell_weights"),
                                                   (coin, "coin_values"),
                                                   (cash, "cash_values"))]
    cap = -1 if cap_x is None else cap_x * LINE_COUNT
    values = [v * LINE_COUNT for v in CASH_VALUES]
    return np.array([*cell, *coin, *cash, *values, *sums, cap, upgrade], dtype=np.int64)


def _weights(weights: tuple[int, ...], what: str) -> Int64Array:
    if sum(weights) > MAX_BOUND:
        raise ModelError(f"hold_and_cash.{what} weights sum to more than 2**32; "
                         "the simulator cannot draw them without bias")
    return np.array(weights, dtype=np.int64)


def kernel_tables(model: MathModel) -> KernelTables:
    """Build the kernel's tables for ``model``."""
    base_lengths, base_windows = _padded_windows(model.base_reels)
    sw_lengths, sw_windows = _padded_windows(model.star_wild_reels)
    prefix, finish = _prefix_tables()
    masks = _line_masks(base_windows, prefix)
    sw_masks = _line_masks(sw_windows, prefix)
    coins = (base_windows == COIN_INDEX).sum(axis=2).astype(np.int8)
    rows = np.array(LINES, dtype=np.int64)
    scale = (N_SYMBOLS * N_SYMBOLS, N_SYMBOLS, 1, N_SYMBOLS, 1)
    line_codes = np.stack([base_windows[reel][:, rows[:, reel]].astype(np.int16) * scale[reel]
                           for reel in range(REELS)])
    # The sentinel line: codes (N^3, 0, 0, 0, 0) -> prefix entry N^3 -> an all-zero finish row,
    # so the kernel can read one line per spin without asking whether any line is alive.
    sentinel = np.zeros((REELS, line_codes.shape[1], 1), dtype=np.int16)
    sentinel[0] = N_SYMBOLS ** 3
    line_codes = np.concatenate([line_codes, sentinel], axis=2)
    prefix = np.append(prefix, np.int16(len(finish)))
    finish = np.vstack([finish, np.zeros((1, finish.shape[1]), dtype=np.int16)])
    longest = base_windows.shape[1]
    hot_codes = np.concatenate([line_codes, coins[:, :, None].astype(np.int16)], axis=2)
    hot_rows = np.where(prefix >= 0, prefix.astype(np.int64) * finish.shape[1], 0)
    hc = model.hold_and_cash
    hold = _hold_params(hc.cell_weights, hc.coin_values, hc.cash_values, model.max_win_x,
                        hc.upgrade_line_bets)
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
        cash_multiples=np.array([v * LINE_COUNT for v in CASH_VALUES], dtype=np.int64),
        line_masks=masks,
        spin_threshold=np.array([spin_threshold(base_lengths)], dtype=np.int64),
        hot_codes=hot_codes.astype(np.uint16).reshape(-1),
        hot_masks=masks.reshape(-1).copy(),
        hot_rows=hot_rows.astype(np.uint16),
        hot_finish=finish.reshape(-1).copy(),
        hot_stride=np.array([longest], dtype=np.int64),
        hold_params=hold,
        feature=_feature(base_windows, coins, sw_lengths, sw_windows, rows, prefix, finish,
                         hold, sw_masks),
    )
