"""Tuning a model to several targets at once (ADR 0016).

Targets: total RTP, hit frequency, Star Wild and Hold & Cash frequency, the base share of the
game RTP (line wins against the features), a standard deviation band and P(Mega). Levers: the
base reel strips (one stop changes symbol per step, so every reel keeps its length and the
combination count stays the same) and every Hold & Cash weight (cells, trigger coin values,
CASH values). The Star Wild respin strips and the €€€ settings are kept.

Method: greedy coordinate descent. A step evaluates every single-stop change of the base strips
(a few hundred candidates; ``tune_eval`` gives their exact figures in milliseconds, the standard
deviation estimated from the current state's cross moments), or every weight scaled by 0.8 or
1.25 (tried when no strip step lowers the objective by 5 %), and takes the best one if it
lowers the objective, the sum of squared distances outside each target's search band in units
of its tolerance; the state it takes is recomputed exactly. When every target is inside its
band (or nothing improves), the Hold & Cash BLANK weight is fitted to the total RTP by
bisection (finer weights when the integer grid is too coarse), and the result is checked with
the exact calculator (rational): a target it misses is an error, and no model is written.
Without a total RTP target the source's exact total is the target (``kept_rtp``), searched and
fitted like a given one.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from tqdm import tqdm

from starfever.engine.errors import InputError
from starfever.engine.model import HoldAndCashModel, MathModel, ReelStrip
from starfever.engine.symbols import COIN, JACKPOT, PAYING_SYMBOLS, WILD
from starfever.math import exact
from starfever.math.tune_eval import Evaluator, Figures

RTP_TOLERANCE = Fraction(1, 10_000)
"""Allowed |total RTP - target|: 0.01 percentage points (RULES.md asks for < 0.02)."""
RTP_SEARCH = 0.015
"""The first round's search leaves the total RTP to the fit once it is within 1.5 pp: a tighter
band would block the Hold & Cash steps that move the volatility (each moves the RTP too). The
fit (the BLANK weight) moves the other figures back, so each further round searches from the
fitted model with a band 4 times narrower (0.375, 0.094, 0.023 pp), and its fit moves less."""
SEARCH_MARGIN = 0.6
"""The search aims inside this share of each tolerance, leaving room for the final fit."""
RTP_RANGE = (0.80, 1.0)
"""Total RTP targets outside [80 %, 100 %) are refused: not a regulated slot's return."""
MAX_BLANK = 10**9
STRIP_SYMBOLS = (*PAYING_SYMBOLS, WILD, COIN)
"""What a base stop may become (JACKPOT stays where it is: it drives the €€€ pool's law)."""
WEIGHT_FACTORS = (0.8, 1.25)
WEIGHTS_WHEN = 0.05
"""Weight steps are tried when the best strip step lowers the objective by less than 5 %."""


class TuneError(InputError):
    """A target that is malformed or that the model's design cannot reach."""


@dataclass(frozen=True)
class Target:
    """One figure to aim at: inside [low, high]."""

    key: str
    """Attribute of :class:`Figures` (``total``, ``hit_frequency``, ...)."""
    label: str
    low: float
    high: float
    text: str
    """As given on the command line."""
    goal: Fraction | None = None
    """For the total RTP: the exact value the BLANK weight is fitted to, where it is not the
    band's middle (the source's own total, kept when no ``--rtp`` is given)."""

    def distance(self, value: float, margin: float = 1.0, rtp_band: float = RTP_SEARCH
                 ) -> float:
        """How far ``value`` lies outside the band shrunk to ``margin`` of its half-width
        (0 inside), in units of that half-width; in the search (``margin`` < 1) the total RTP's
        band is +/- ``rtp_band``, the rest is left to the fit."""
        mid, half = (self.low + self.high) / 2, (self.high - self.low) / 2
        if self.key == "total" and margin < 1:
            half = max(half, rtp_band)
            return max(abs(value - mid) - half, 0.0) / half
        return max(abs(value - mid) - half * margin, 0.0) / half


@dataclass(frozen=True)
class Kind:
    """A kind of target: what it reads and how wide a point target's band is."""

    key: str
    label: str
    absolute: float = 0.0
    relative: float = 0.0
    probability: bool = True


KINDS: dict[str, Kind] = {
    "rtp": Kind("total", "total RTP", absolute=float(RTP_TOLERANCE)),
    "hit_frequency": Kind("hit_frequency", "hit frequency", absolute=0.002),
    "star_wild_frequency": Kind("star_wild_frequency", "Star Wild frequency", relative=0.02),
    "hold_and_cash_frequency": Kind("hold_and_cash_frequency", "Hold & Cash frequency",
                                    relative=0.02),
    "base_share": Kind("base_share", "base share of the game RTP", absolute=0.005),
    "std_dev": Kind("std_dev", "standard deviation", relative=0.02, probability=False),
    "mega_frequency": Kind("mega_frequency", "P(Mega)", relative=0.05),
}
"""Option name (``--hit-frequency`` ...) to kind. A point target gets the band point +/- the
absolute or relative tolerance; a range ``LO:HI`` is used as given."""


def parse_number(text: str, *, probability: bool) -> float:
    """``0.955``, ``95.5%``, ``1/80`` (one in 80); for a probability a number above 1 (and at
    most 100) is read as a percentage."""
    raw = text.strip()
    match = re.fullmatch(r"1\s*/\s*([0-9][0-9_.,]*)", raw)
    try:
        if match:
            return 1 / float(match.group(1).replace(",", "").replace("_", ""))
        if raw.endswith("%"):
            return float(raw[:-1]) / 100
        value = float(raw)
    except (ValueError, ZeroDivisionError):
        raise TuneError(f"{text!r} is not a number like 0.955, 95.5% or 1/80") from None
    if not math.isfinite(value):
        raise TuneError(f"{text!r} is not a finite number")
    return value / 100 if probability and 1 < value <= 100 else value


def parse_target(option: str, text: str) -> Target:
    """A target from its option name and text: a point (``0.33``) or a range (``6:9``)."""
    kind = KINDS[option]
    label = kind.label
    if ":" in text:
        lo_text, hi_text = text.split(":", 1)
        low = parse_number(lo_text, probability=kind.probability)
        high = parse_number(hi_text, probability=kind.probability)
        if not low < high:
            raise TuneError(f"{label} range {text!r}: the low end must be below the high end")
    else:
        point = parse_number(text, probability=kind.probability)
        half = kind.absolute or kind.relative * abs(point)
        low, high = point - half, point + half
        if kind.probability and 0 < point < 1:
            low, high = max(low, 0.0), min(high, 1.0)
    if kind.probability and not (low >= 0 and high <= 1):
        raise TuneError(f"{label} {text!r} is not a probability in (0, 1)")
    if option == "rtp" and not (RTP_RANGE[0] <= low and high < RTP_RANGE[1]):
        raise TuneError(f"total RTP target {text!r} is outside the tuner's range "
                        f"[{RTP_RANGE[0]:.0%}, {RTP_RANGE[1]:.0%})")
    if (low < 0 or (low == 0 and option not in ("base_share", "hit_frequency",
                                                 "mega_frequency"))) or high <= 0:
        raise TuneError(f"{label} {text!r} must be above 0")
    return Target(kind.key, label, low, high, text)


def kept_rtp(model: MathModel) -> Target:
    """The target when none names the total RTP: the source's own exact total, in the usual
    band. Every lever moves the RTP, so a search aimed only at other figures would otherwise
    take it anywhere (a hit frequency of 99 % was once met at an RTP of 1,101 %)."""
    total = exact.compute(model).total
    if not RTP_RANGE[0] <= total < RTP_RANGE[1]:
        raise TuneError(f"the source's total RTP {float(total):.4%} is outside the tuner's range "
                        f"[{RTP_RANGE[0]:.0%}, {RTP_RANGE[1]:.0%}): give the total to aim at "
                        "with --rtp")
    return Target("total", "total RTP", float(total - RTP_TOLERANCE),
                  float(total + RTP_TOLERANCE), f"{float(total):.5%} (the source's, kept)",
                  goal=total)


def check_consistent(targets: list[Target]) -> None:
    """Refuse targets that contradict each other before searching."""
    by = {t.key: t for t in targets}

    def low(key: str) -> float:
        return by[key].low if key in by else 0.0

    if "hit_frequency" in by and by["hit_frequency"].high < low("hold_and_cash_frequency"):
        raise TuneError("hit frequency below the Hold & Cash frequency is impossible "
                        "(every Hold & Cash pays)")
    if "hold_and_cash_frequency" in by and by["hold_and_cash_frequency"].high < low(
            "mega_frequency"):
        raise TuneError("P(Mega) above the Hold & Cash frequency is impossible")
    if low("star_wild_frequency") + low("hold_and_cash_frequency") > 1:
        raise TuneError("Star Wild and Hold & Cash frequencies add up to more than 1")


def objective(fig: Figures, targets: list[Target], margin: float = SEARCH_MARGIN,
              rtp_band: float = RTP_SEARCH) -> float:
    """Sum of squared distances outside the targets' search bands."""
    return sum(t.distance(getattr(fig, t.key), margin, rtp_band) ** 2 for t in targets)


# -- moves ----------------------------------------------------------------------------------

Strips = tuple[ReelStrip, ...]


def _distance_to(strip: ReelStrip, stop: int, symbol: str) -> int:
    n = len(strip)
    return min((min((i - stop) % n, (stop - i) % n) for i, s in enumerate(strip)
                if s == symbol and i != stop), default=n)


def strip_moves(strips: Strips) -> Iterator[tuple[int, int, str]]:
    """(reel, stop, new symbol) for every single-stop change worth trying: per reel, every
    symbol there into every other allowed one; the stop is the one that spreads the new symbol
    most, and for COIN also the one that clusters coins most (clusters make 5+ coins likelier
    against exactly 4). The €€€ symbols stay, and so does a reel's last COIN (the conditions let
    Star Coins appear on every reel)."""
    for reel, strip in enumerate(strips):
        counts = Counter(strip)
        for old in sorted(counts):
            if old == JACKPOT or (old == COIN and counts[COIN] == 1):
                continue
            places = [i for i, s in enumerate(strip) if s == old]
            for new in STRIP_SYMBOLS:
                if new == old:
                    continue
                spread = max(places, key=lambda i: (_distance_to(strip, i, new), -i))
                chosen = {spread}
                if COIN in (old, new):
                    chosen.add(min(places, key=lambda i: (_distance_to(strip, i, COIN), i)))
                for stop in sorted(chosen):
                    yield reel, stop, new


def apply_move(strips: Strips, reel: int, stop: int, symbol: str) -> Strips:
    strip = list(strips[reel])
    strip[stop] = symbol
    return (*strips[:reel], tuple(strip), *strips[reel + 1:])


def weight_moves(weights: HoldAndCashModel) -> Iterator[tuple[str, HoldAndCashModel]]:
    """Every Hold & Cash weight scaled by 0.8 or 1.25 (at least by 1)."""
    for field_name in ("cell_weights", "coin_values", "cash_values"):
        values = getattr(weights, field_name)
        for i, w in enumerate(values):
            for factor in WEIGHT_FACTORS:
                new = round(w * factor)
                if new == w:
                    new = w + (1 if factor > 1 else -1)
                if new < 0 or (field_name == "cell_weights" and i == 0 and new < 1):
                    continue
                changed = (*values[:i], new, *values[i + 1:])
                if sum(changed) == 0:
                    continue
                fields: dict[str, Any] = {field_name: changed}
                yield f"{field_name}[{i}] {w}->{new}", replace(weights, **fields)


# -- the search -----------------------------------------------------------------------------

@dataclass
class Outcome:
    """What the tuner made."""

    model: MathModel
    report: exact.ExactReport
    achieved: dict[str, float]
    """Target key -> the exact figure."""
    steps: int
    met: bool
    targets: list[Target]
    """The targets aimed at: those given, and the source's total RTP when none named it."""


def search(model: MathModel, targets: list[Target], ev: Evaluator, *, max_steps: int,
           levers: frozenset[str], progress: bool, log: Callable[[str], None],
           rtp_band: float = RTP_SEARCH) -> tuple[Strips, HoldAndCashModel, int]:
    """Greedy descent from ``model`` (see the module docstring)."""
    want_sd = any(t.key == "std_dev" for t in targets)
    strips, weights = model.base_reels, model.hold_and_cash
    current = ev.figures(strips, weights, want_sd=want_sd, exact_sd=True)
    ev.save()  # the costly respin pieces, for the next search with these Star Wild strips
    score = objective(current, targets, rtp_band=rtp_band)
    steps = 0
    bar = tqdm(total=max_steps, desc="tune", unit="step", disable=not progress, leave=False)
    try:
        while steps < max_steps and score > 0:
            best: tuple[float, Strips, HoldAndCashModel, str] | None = None
            move: tuple[int, str, str] | None = None
            if "strips" in levers:  # cheap: every single-stop change
                for reel, stop, symbol in strip_moves(strips):
                    cand = apply_move(strips, reel, stop, symbol)
                    fig = ev.figures(cand, weights, parent=(strips, reel, stop), want_sd=want_sd)
                    value = objective(fig, targets, rtp_band=rtp_band)
                    if best is None or value < best[0]:
                        best = (value, cand, weights,
                                f"reel {reel + 1} stop {stop}: {strips[reel][stop]} -> {symbol}")
                        move = (reel, strips[reel][stop], symbol)
            # a Hold & Cash solve per candidate: only when the strips gain little
            if "weights" in levers and (best is None or best[0] > score * (1 - WEIGHTS_WHEN)):
                for what, cand_w in weight_moves(weights):
                    fig = ev.figures(strips, cand_w, want_sd=want_sd)
                    value = objective(fig, targets, rtp_band=rtp_band)
                    if best is None or value < best[0]:
                        best, move = (value, strips, cand_w, what), None
            if best is None or best[0] >= score * (1 - 1e-9):
                break
            strips, weights = best[1], best[2]
            steps += 1
            if move is not None:  # the same change again while it keeps helping
                strips, steps = _repeat(strips, weights, move, best[0], targets, ev, want_sd,
                                        steps, max_steps, rtp_band)
            current = ev.figures(strips, weights, want_sd=want_sd, exact_sd=True)
            score = objective(current, targets, rtp_band=rtp_band)
            log(f"step {steps}: {best[3]}; objective {score:.4g}; " + ", ".join(
                f"{t.key} {getattr(current, t.key):.6g}" for t in targets))
            bar.n = steps
            bar.refresh()
            bar.set_postfix(objective=f"{score:.3g}")
    finally:
        bar.close()
    return strips, weights, steps


def _repeat(strips: Strips, weights: HoldAndCashModel, move: tuple[int, str, str], value: float,
            targets: list[Target], ev: Evaluator, want_sd: bool, steps: int,
            max_steps: int, rtp_band: float) -> tuple[Strips, int]:
    """Repeat the strip change just taken (same reel, same symbols, its stop chosen the same
    way) while the objective falls: a line search that spares full scans."""
    reel, old, new = move
    while steps < max_steps:
        stops = [stop for r, stop, symbol in strip_moves(strips)
                 if r == reel and symbol == new and strips[reel][stop] == old]
        if not stops:
            break
        cand = apply_move(strips, reel, stops[0], new)
        fig = ev.figures(cand, weights, parent=(strips, reel, stops[0]), want_sd=want_sd)
        cand_value = objective(fig, targets, rtp_band=rtp_band)
        if cand_value >= value * (1 - 1e-9):
            break
        strips, value, steps = cand, cand_value, steps + 1
    return strips, steps


def _with_blank(weights: HoldAndCashModel, blank: int, scale: int) -> HoldAndCashModel:
    cells = (blank, *(w * scale for w in weights.cell_weights[1:]))
    return replace(weights, cell_weights=cells)


def fit_rtp(model: MathModel, target: Fraction, ev: Evaluator,
            tolerance: Fraction = RTP_TOLERANCE) -> tuple[MathModel, exact.ExactReport]:
    """``model`` with its BLANK weight set so that the total RTP is within ``tolerance`` of
    ``target``, confirmed by the exact (rational) calculator."""
    goal = float(target)
    weights = model.hold_and_cash
    # the BLANK weight moves only the Hold & Cash part: the rest is fixed by the strips
    base = ev.figures(model.base_reels, weights, want_sd=False)
    fixed = base.total - base.hold_and_cash

    def total(w: HoldAndCashModel) -> float:
        return fixed + ev.figures(model.base_reels, w, want_sd=False).hold_and_cash

    # the scale keeps the current weights' proportions: start from BLANK x scale
    for scale in (1, 10, 100, 1000):
        low, high = 1, MAX_BLANK  # total(low) is the highest reachable, total(high) the lowest
        top = total(_with_blank(weights, low, scale))
        bottom = total(_with_blank(weights, high, scale))
        if not bottom <= goal <= top:
            raise TuneError(
                f"total RTP {goal:.4%} is out of reach for these strips: the Hold & Cash BLANK "
                f"weight moves it only between {bottom:.4%} and {top:.4%}")
        while high - low > 1:
            mid = (low + high) // 2
            if total(_with_blank(weights, mid, scale)) >= goal:
                low = mid
            else:
                high = mid
        best = min((low, high), key=lambda b: abs(total(_with_blank(weights, b, scale)) - goal))
        candidate = replace(model, hold_and_cash=_with_blank(weights, best, scale))
        if abs(total(candidate.hold_and_cash) - goal) < float(tolerance) / 2:
            report = exact.compute(candidate)
            if abs(report.total - target) < tolerance:
                return candidate, report
    raise TuneError(f"total RTP {goal:.4%} cannot be met within {float(tolerance):.4%} "
                    f"by the BLANK weight of these strips")


def achieved(report: exact.ExactReport, fig: Figures) -> dict[str, float]:
    """The exact figures a target can name (the standard deviation from ``fig``, counted)."""
    return {
        "total": float(report.total),
        "hit_frequency": float(report.hit_frequency),
        "star_wild_frequency": float(report.star_wild_frequency),
        "hold_and_cash_frequency": float(report.hold_and_cash_frequency),
        "base_share": float(report.lines / report.game),
        "mega_frequency": float(report.mega_frequency),
        "std_dev": fig.std_dev,
    }


def tune(model: MathModel, targets: list[Target], *, max_steps: int = 300,
         levers: frozenset[str] = frozenset({"strips", "weights"}), rounds: int = 4,
         progress: bool = False, log: Callable[[str], None] | None = None) -> Outcome:
    """Search, fit the RTP, check exactly; repeat from the fitted model while a target is
    missed and the search still moves (at most ``rounds`` times)."""
    if model.max_win_x is not None:
        raise TuneError(f"model {model.name!r} has a max-win cap: tune the uncapped model, then "
                        "set max_win_x and fit (the search's fast figures leave the cap out)")
    if not targets:
        raise TuneError("give at least one target (--rtp, --hit-frequency, ...)")
    check_consistent(targets)
    rtp = next((t for t in targets if t.key == "total"), None)
    if rtp is None:  # keep the source's total: every lever moves it
        rtp = kept_rtp(model)
        targets = [rtp, *targets]
    ev = Evaluator(model)
    say = log or (lambda _: None)
    current = model
    steps = 0
    outcome: Outcome | None = None
    for round_no in range(rounds):
        strips, weights, taken = search(current, targets, ev, max_steps=max_steps - steps,
                                        levers=levers, progress=progress, log=say,
                                        rtp_band=RTP_SEARCH / 4 ** round_no)
        steps += taken
        current = replace(current, base_reels=strips, hold_and_cash=weights)
        goal = rtp.goal if rtp.goal is not None else Fraction(
            (rtp.low + rtp.high) / 2).limit_denominator(10**9)
        current, report = fit_rtp(current, goal, ev)
        want_sd = any(t.key == "std_dev" for t in targets)
        fig = ev.figures(current.base_reels, current.hold_and_cash, want_sd=want_sd,
                         exact_sd=True)
        got = achieved(report, fig)
        met = all(t.low <= got[t.key] <= t.high for t in targets)
        outcome = Outcome(current, report, got, steps, met, targets)
        say(f"round {round_no + 1}: {taken} steps, targets "
            f"{'met' if met else 'not all met'}")
        if met or taken == 0:
            break
    assert outcome is not None
    ev.save()
    return outcome


def log_stderr(message: str) -> None:
    print(message, file=sys.stderr)
