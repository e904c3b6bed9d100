"""Tuning a model to a target RTP.

Lines and the Star Wild respin are fixed by the reel strips; the Hold & Cash value falls
monotonically as the BLANK cell weight grows, so the method searches the BLANK weight (by
bisection over integers, in floats) until the total RTP is within the tolerance of the target,
refining the weights' resolution tenfold when the integer grid is too coarse, then confirms the
result exactly in rational arithmetic.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from starfever.engine.errors import InputError
from starfever.engine.model import HoldAndCashModel, MathModel
from starfever.engine.symbols import HOLD_AND_CASH_COINS, LINE_COUNT
from starfever.math import exact
from starfever.math.holdcash import HoldAndCashSolver

TOLERANCE = Fraction(1, 10_000)
"""Allowed |total RTP - target|: 0.01 percentage points (RULES.md asks for < 0.02)."""
MAX_BLANK = 10**9


class TuneError(InputError):
    """A target the model's design cannot reach."""


def _with_blank(weights: HoldAndCashModel, blank: int, scale: int) -> HoldAndCashModel:
    cells = (blank, *(w * scale for w in weights.cell_weights[1:]))
    return replace(weights, cell_weights=cells)


def tune(model: MathModel, target: Fraction, *, name: str | None = None,
         tolerance: Fraction = TOLERANCE) -> tuple[MathModel, exact.ExactReport]:
    """A copy of ``model`` whose total RTP is within ``tolerance`` of ``target``."""
    if not 0 < target < 2:
        raise TuneError(f"target RTP {float(target)!r} is not a fraction of the bet in (0, 2)")
    coins = exact.coin_count_distribution(model.base_reels)
    base = [exact.symbol_frequencies(s) for s in model.base_reels]
    fixed = (exact.expected_line_pay(base) + exact.star_wild_value(model) / LINE_COUNT
             + model.contribution_rate)
    triggers = [(n, float(p)) for n, p in coins.items() if n >= HOLD_AND_CASH_COINS and p]

    def total(weights: HoldAndCashModel) -> float:
        solver = HoldAndCashSolver(weights, exact=False)
        return float(fixed) + sum(p * float(solver.feature(n).mean) for n, p in triggers)

    goal = float(target)
    weights = model.hold_and_cash
    for scale in (1, 10, 100, 1000):
        low, high = 1, MAX_BLANK  # total(low) is the highest reachable, total(high) the lowest
        top = total(_with_blank(weights, low, scale))
        bottom = total(_with_blank(weights, high, scale))
        if not bottom <= goal <= top:
            raise TuneError(
                f"target {goal:.4%} is out of reach for model {model.name!r}: the Hold & Cash "
                f"BLANK weight moves its total RTP only between {bottom:.4%} and {top:.4%}")
        while high - low > 1:
            mid = (low + high) // 2
            if total(_with_blank(weights, mid, scale)) >= goal:
                low = mid
            else:
                high = mid
        best = min((low, high), key=lambda b: abs(total(_with_blank(weights, b, scale)) - goal))
        candidate = replace(model, hold_and_cash=_with_blank(weights, best, scale),
                            name=name or model.name)
        if abs(total(candidate.hold_and_cash) - goal) < float(tolerance) / 2:
            report = exact.compute(candidate, with_std_dev=False)
            if abs(report.total - target) < tolerance:
                return candidate, report
    raise TuneError(f"target {goal:.4%} cannot be met within {float(tolerance):.4%} "
                    f"by the BLANK weight of model {model.name!r}")
