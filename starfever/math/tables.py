"""Lookup tables built from the one line evaluator, for vectorised and compiled code.

``line_pay_table()[a, b, c, d, e]`` is the pay (in line bets, MWILD multiplier included) of a
line showing symbols with indices a..e (``SYMBOLS`` order) on reels 0..4.
"""

from __future__ import annotations

from functools import cache
from itertools import product

import numpy as np
import numpy.typing as npt

from starfever.engine.lines import evaluate_line, is_jackpot_line
from starfever.engine.model import ReelStrip
from starfever.engine.symbols import ROWS, SYMBOLS

SYMBOL_INDEX = {s: i for i, s in enumerate(SYMBOLS)}
N_SYMBOLS = len(SYMBOLS)


@cache
def line_pay_table() -> npt.NDArray[np.int32]:
    """Dense table of line pays over all 12^5 symbol tuples."""
    table = np.zeros((N_SYMBOLS,) * 5, dtype=np.int32)
    for a, b, c in product(range(N_SYMBOLS), repeat=3):
        head = [SYMBOLS[a], SYMBOLS[b], SYMBOLS[c]]
        if evaluate_line([*head, "COIN", "COIN"]) is None:
            continue  # no run of 3 from reel 0: reels 3 and 4 cannot make one
        for d, e in product(range(N_SYMBOLS), repeat=2):
            pay = evaluate_line([*head, SYMBOLS[d], SYMBOLS[e]])
            table[a, b, c, d, e] = pay.factor if pay else 0
    table.flags.writeable = False
    return table


@cache
def jackpot_table() -> npt.NDArray[np.bool_]:
    """``jackpot_table()[a, b, c]``: reels 0-2 showing these symbols make a €€€ line."""
    table = np.zeros((N_SYMBOLS,) * 3, dtype=np.bool_)
    for a, b, c in product(range(N_SYMBOLS), repeat=3):
        table[a, b, c] = is_jackpot_line([SYMBOLS[a], SYMBOLS[b], SYMBOLS[c]])
    table.flags.writeable = False
    return table


def strip_indices(strip: ReelStrip) -> npt.NDArray[np.int8]:
    """A strip as symbol indices."""
    return np.array([SYMBOL_INDEX[s] for s in strip], dtype=np.int8)


def strip_windows(strip: ReelStrip) -> npt.NDArray[np.int8]:
    """``windows[stop, row]``: symbol index shown on each row for each stop."""
    idx = strip_indices(strip)
    n = len(idx)
    return np.stack([idx[(np.arange(n) + r) % n] for r in range(ROWS)], axis=1)
