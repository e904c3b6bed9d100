"""The exact theoretical return of a math model, in rational arithmetic.

Parts (RTP as a fraction of the total bet):
- lines: every line's 5 cells lie on 5 different reels, and with a uniform stop each row of a
  cyclic strip shows the strip's symbol frequencies, so one line's expected pay is a sum over
  independent cells, the same for all 20 lines; RTP = E[pay of one line] (total bet = 20 lines).
- Star Wild: for each way the 5 reels can show exactly 4 coins, the wilds are fixed and the
  respin's lines are evaluated over the respin strips' frequencies the same way.
- Hold & Cash: the coin count's distribution times the exact feature value (``holdcash``).
- progressive: the contribution rate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from itertools import product

import numpy as np

from starfever.engine.lines import LinePay, evaluate_line, is_jackpot_line
from starfever.engine.model import MathModel, ReelStrip
from starfever.engine.round import star_wilds
from starfever.engine.symbols import (
    COIN,
    HOLD_AND_CASH_COINS,
    LINE_COUNT,
    LINES,
    MAJOR_PAYS,
    MEGA_PAYS,
    MINOR_PAYS,
    PAYING_SYMBOLS,
    REELS,
    ROWS,
    STAR_WILD_COINS,
    SYMBOLS,
    WILD,
    WILDS,
    Symbol,
)
from starfever.math.holdcash import FeatureMoments, solver_for

F = Fraction
CellDistribution = dict[Symbol, Fraction]


def symbol_frequencies(strip: ReelStrip) -> CellDistribution:
    """What one row of a uniformly stopped cyclic strip shows."""
    return {s: F(n, len(strip)) for s, n in Counter(strip).items()}


def line_pay_distribution(cells: Sequence[CellDistribution]) -> dict[LinePay, Fraction]:
    """P(each line pay) for 5 independent cells, walking prefixes until the line is decided.

    A prefix is decided once no paying symbol and no wild-only run can extend it; the rest of the
    line then cannot change the pay, so ``evaluate_line`` is asked once per decided prefix.
    """
    found: dict[LinePay, Fraction] = {}

    def walk(prefix: list[Symbol], prob: Fraction) -> None:
        depth = len(prefix)
        if depth == REELS or not _alive(prefix):
            pay = evaluate_line(prefix + [COIN] * (REELS - depth))
            if pay is not None:
                found[pay] = found.get(pay, F(0)) + prob
            return
        for symbol, p in cells[depth].items():
            walk([*prefix, symbol], prob * p)

    walk([], F(1))
    return found


def expected_line_pay(cells: Sequence[CellDistribution]) -> Fraction:
    """E[line pay] in line bets for 5 independent cells."""
    return sum((pay.factor * p for pay, p in line_pay_distribution(cells).items()), F(0))


def _alive(prefix: list[Symbol]) -> bool:
    """Whether a further cell could still lengthen a run from reel 0."""
    if all(s in WILDS for s in prefix):
        return True
    named = {s for s in prefix if s not in WILDS}
    return len(named) == 1 and next(iter(named)) in PAYING_SYMBOLS


@dataclass
class ExactReport:
    """Exact figures of one model. RTPs as fractions of the total bet; frequencies per paid spin."""

    model: str
    lines: Fraction
    star_wild: Fraction
    hold_and_cash: Fraction
    progressive: Fraction
    hit_frequency: Fraction
    """P(the round's total win > 0): a line win, a €€€ share, Hold & Cash, or a Star Wild
    respin that pays (RULES.md; a respin that wins nothing is not a hit)."""
    star_wild_frequency: Fraction
    hold_and_cash_frequency: Fraction
    jackpot_frequency: Fraction
    mega_frequency: Fraction
    coin_counts: dict[int, Fraction]
    hold_and_cash_by_coins: dict[int, FeatureMoments] = field(repr=False)

    @property
    def game(self) -> Fraction:
        """RTP of lines, Star Wild and Hold & Cash."""
        return self.lines + self.star_wild + self.hold_and_cash

    @property
    def total(self) -> Fraction:
        """Game plus the progressive contribution."""
        return self.game + self.progressive

    @property
    def hold_and_cash_mean(self) -> Fraction:
        """Expected Hold & Cash payout in total bets, given it triggers."""
        return self.hold_and_cash / self.hold_and_cash_frequency

    def hold_and_cash_split(self) -> dict[str, Fraction]:
        """The Hold & Cash return (per unit total bet) by what pays it: ``cash`` (the CASH
        values, boosters included), the ``minor``, ``major`` and ``mega`` jackpots. Before any
        max-win cap: it adds up to the uncapped feature return (``hold_and_cash`` itself for a
        model without a cap)."""
        minor = major = mega = whole = Fraction(0)
        for n, moments in self.hold_and_cash_by_coins.items():
            p = self.coin_counts[n]
            minor += p * moments.minors * MINOR_PAYS
            major += p * moments.majors * MAJOR_PAYS
            mega += p * moments.mega * MEGA_PAYS
            whole += p * moments.mean
        return {"cash": whole - minor - major - mega, "minor": minor, "major": major,
                "mega": mega}


def _reel_coin_masks(strip: ReelStrip) -> Counter[tuple[bool, ...]]:
    """How often each pattern of coins (per row) shows on a reel."""
    n = len(strip)
    return Counter(tuple(strip[(stop + r) % n] == COIN for r in range(ROWS)) for stop in range(n))


def coin_count_distribution(strips: Sequence[ReelStrip]) -> dict[int, Fraction]:
    """P(k coins in the window) for k = 0..15."""
    dist = {0: F(1)}
    for strip in strips:
        per_reel = Counter(sum(m) for m in _reel_coin_masks(strip).elements())
        nxt: dict[int, Fraction] = {}
        for have, p in dist.items():
            for add, count in per_reel.items():
                nxt[have + add] = nxt.get(have + add, F(0)) + p * F(count, len(strip))
        dist = nxt
    return dict(sorted(dist.items()))


CoinPattern = tuple[bool, ...]
"""Which of a reel's 3 rows show a COIN."""


@dataclass(frozen=True)
class StarWildCase:
    """One way the 5 reels can show exactly 4 coins."""

    patterns: tuple[CoinPattern, ...]
    """Per reel, the rows holding a coin."""
    probability: Fraction
    """Probability per paid spin."""
    wilds: dict[tuple[int, int], Symbol]
    """What the coins become (WILD, or MWILD when 3 sit on one reel)."""
    expected_pay: Fraction
    """Expected respin line pay, in line bets."""


def star_wild_cases(model: MathModel) -> list[StarWildCase]:
    """Every 4-coin pattern of the base reels with its probability and expected respin pay."""
    masks = [_reel_coin_masks(s) for s in model.base_reels]
    free = [symbol_frequencies(s) for s in model.star_wild_reels]
    cache: dict[tuple[Symbol | None, ...], Fraction] = {}
    space = math.prod(len(s) for s in model.base_reels)
    cases = []
    for combo in product(*(m.items() for m in masks)):
        if sum(sum(mask) for mask, _ in combo) != STAR_WILD_COINS:
            continue
        grid = [[COIN if mask[r] else "" for r in range(ROWS)] for mask, _ in combo]
        wilds = star_wilds(grid)
        pay = F(0)
        for line in LINES:
            fixed = tuple(wilds.get((reel, row)) for reel, row in enumerate(line))
            if fixed not in cache:
                cells = [{f: F(1)} if f else free[reel] for reel, f in enumerate(fixed)]
                cache[fixed] = expected_line_pay(cells)
            pay += cache[fixed]
        cases.append(StarWildCase(
            patterns=tuple(mask for mask, _ in combo),
            probability=F(math.prod(count for _, count in combo), space),
            wilds=wilds, expected_pay=pay))
    return cases


@cache
def _pay_tables() -> tuple[np.ndarray, np.ndarray, dict[Symbol, int]]:
    """``pays[a, b, c]``: symbols a, b, c on reels 0-2 of a line make a paying run (so the line
    pays whatever reels 3-4 show); ``jack[a, b, c]``: they make a €€€ line. Built by the one
    line evaluator."""
    index = {s: i for i, s in enumerate(SYMBOLS)}
    n = len(SYMBOLS)
    pays = np.zeros((n, n, n), dtype=bool)
    jack = np.zeros((n, n, n), dtype=bool)
    for a, b, c in product(SYMBOLS, repeat=3):
        pays[index[a], index[b], index[c]] = evaluate_line([a, b, c, COIN, COIN]) is not None
        jack[index[a], index[b], index[c]] = is_jackpot_line([a, b, c])
    pays.flags.writeable = jack.flags.writeable = False  # shared by every caller (cached)
    return pays, jack, index


def _dead_first_three(strips: Sequence[ReelStrip],
                      fixed: dict[tuple[int, int], Symbol] | None = None,
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over every stop combination of reels 0-2: whether no line can win (no paying run of 3
    from reel 0, so reels 3-4 cannot make one) and no €€€ line shows; whether a €€€ line
    shows; and the coin pattern of each reel (bit r: row r holds a COIN). ``fixed`` overrides
    cells (the Star Wild respin's wilds). Counting, not sampling."""
    pays, jack, index = _pay_tables()
    cols = []
    for reel, strip in enumerate(strips[:3]):
        col = np.array([[index[strip[(stop + r) % len(strip)]] for r in range(ROWS)]
                        for stop in range(len(strip))])
        for (f_reel, row), symbol in (fixed or {}).items():
            if f_reel == reel:
                col[:, row] = index[symbol]
        cols.append(col)
    from starfever.math.cycles import dead_heads  # compiled: only a computation needs it

    rows = np.array([line[:3] for line in LINES], dtype=np.int64)
    col0, col1, col2 = (np.ascontiguousarray(c, dtype=np.int64) for c in cols)
    dead, jackpot = dead_heads(col0, col1, col2, rows, pays, jack)
    bits = 1 << np.arange(ROWS)
    masks = [((c == index[COIN]) * bits).sum(-1) for c in cols]
    return dead, jackpot, np.stack(np.broadcast_arrays(
        masks[0][:, None, None], masks[1][None, :, None], masks[2][None, None, :]))


def _first_three(model: MathModel) -> tuple[Fraction, dict[tuple[int, int, int], Fraction]]:
    """From reels 0-2 alone: P(some €€€ line), and per coin pattern of reels 0-2 the
    probability that the paid spin has no line win and no €€€ line."""
    dead, jackpot, masks = _dead_first_three(model.base_reels)
    space = dead.size
    code = (masks[0] * 64 + masks[1] * 8 + masks[2])[dead]
    counts = np.bincount(code.ravel(), minlength=512)
    return (F(int(jackpot.sum()), space),
            {(k // 64, k // 8 % 8, k % 8): F(int(v), space) for k, v in enumerate(counts) if v})


def _mask_bits(pattern: CoinPattern) -> int:
    return sum(1 << r for r, coin in enumerate(pattern) if coin)


def respin_pays_nothing(model: MathModel, wilds: dict[tuple[int, int], Symbol]) -> Fraction:
    """P(the Star Wild respin with these wilds has no line win and no €€€ line): exact, from
    every stop combination of the respin's reels 0-2 (a line pays iff reels 0-2 do)."""
    dead, _, _ = _dead_first_three(model.star_wild_reels, wilds)
    return F(int(dead.sum()), dead.size)


def no_win_probability(model: MathModel, cases: list[StarWildCase]) -> Fraction:
    """P(a round's total win is 0): the paid spin has no line win and no €€€ line, and either
    fewer than 4 coins or a Star Wild respin that pays nothing (Hold & Cash always pays)."""
    _, dead = _first_three(model)
    tails = [_reel_coin_masks(s) for s in model.base_reels[3:]]
    n3, n4 = (len(s) for s in model.base_reels[3:])
    by_case = {tuple(_mask_bits(p) for p in c.patterns): c for c in cases}
    zero_respin: dict[tuple[tuple[int, int], ...], Fraction] = {}
    total = F(0)
    for (m0, m1, m2), p in dead.items():
        head = sum(bin(m).count("1") for m in (m0, m1, m2))
        for mask3, c3 in tails[0].items():
            for mask4, c4 in tails[1].items():
                coins = head + sum(mask3) + sum(mask4)
                q = p * F(c3 * c4, n3 * n4)
                if coins < STAR_WILD_COINS:
                    total += q
                elif coins == STAR_WILD_COINS:
                    case = by_case[(m0, m1, m2, _mask_bits(mask3), _mask_bits(mask4))]
                    # only reels 0-2 decide whether a line pays, and any wild will do
                    head_wilds = {cell: WILD for cell in case.wilds if cell[0] < 3}
                    key = tuple(sorted(head_wilds))
                    if key not in zero_respin:
                        zero_respin[key] = respin_pays_nothing(model, head_wilds)
                    total += q * zero_respin[key]
    return total


def event_probability(model: MathModel) -> Fraction:
    """P(the paid spin has a line win, a €€€ line or 4+ coins): what the full cycle counts as
    ``hits`` (not the hit frequency: a Star Wild respin may still pay nothing)."""
    _, dead = _first_three(model)
    last_two = coin_count_distribution(model.base_reels[3:])
    quiet = sum((p * q for (m0, m1, m2), p in dead.items() for m, q in last_two.items()
                 if sum(bin(x).count("1") for x in (m0, m1, m2)) + m < STAR_WILD_COINS), F(0))
    return 1 - quiet


def compute(model: MathModel, *, rational_hold: bool = True) -> ExactReport:
    """Every exact figure of ``model`` but the win law's (the standard deviation, the bands
    and the largest wins: ``starfever.math.distribution``).

    ``rational_hold=False`` solves Hold & Cash in floats (relative error ~1e-13, ten times
    faster): for callers that only compare with a simulation, never for the published figures.
    """
    base = [symbol_frequencies(s) for s in model.base_reels]
    lines = expected_line_pay(base)  # one line, in line bets = all 20 lines, in total bets
    coins = coin_count_distribution(model.base_reels)
    solver = solver_for(model.hold_and_cash, exact=rational_hold)
    by_coins = {n: solver.feature(n) for n, p in coins.items() if n >= HOLD_AND_CASH_COINS and p}
    hold = sum((coins[n] * m.mean for n, m in by_coins.items()), F(0))
    mega = sum((coins[n] * m.mega for n, m in by_coins.items()), F(0))
    jackpot, _ = _first_three(model)
    cases = star_wild_cases(model)
    if model.max_win_x is not None:
        hold -= cap_cut(model, by_coins)
    report = ExactReport(
        model=model.name,
        lines=lines,
        star_wild=sum((c.probability * c.expected_pay for c in cases), F(0)) / LINE_COUNT,
        hold_and_cash=hold,
        progressive=model.contribution_rate,
        hit_frequency=1 - no_win_probability(model, cases),
        star_wild_frequency=coins.get(STAR_WILD_COINS, F(0)),
        hold_and_cash_frequency=sum((p for n, p in coins.items() if n >= HOLD_AND_CASH_COINS),
                                    F(0)),
        jackpot_frequency=jackpot,
        mega_frequency=mega,
        coin_counts=coins,
        hold_and_cash_by_coins=by_coins,
    )
    return report


def cap_cut(model: MathModel, by_coins: dict[int, FeatureMoments]) -> Fraction:
    """What the model's max-win cap takes off the Hold & Cash RTP (the only part a cap can
    reach): from every base stop combination and the payout DP, exact up to float rounding
    (~1e-13), so a capped model's total is no longer a pure rational (``docs/math.md``)."""
    from starfever.math.cycles import base_joint
    from starfever.math.distribution import cap_terms
    from starfever.math.holdcash_law import payout_laws

    assert model.max_win_x is not None
    joint = base_joint(model)
    coins = tuple(n for n in by_coins if joint.histogram[n].any())
    laws = payout_laws(model.hold_and_cash, cap=model.max_win_x, coins=coins)
    mean_cut, _ = cap_terms(joint, laws, {n: by_coins[n] for n in coins}, model.max_win_x)
    return F(mean_cut)


__all__ = ["ExactReport", "coin_count_distribution", "compute", "expected_line_pay",
           "line_pay_distribution", "symbol_frequencies"]
