"""Everything the game conditions state about one model, read from the model, the engine's
constants and the model's exact figures (:func:`starfever.math.figures.figures`): no number
of the conditions is written anywhere else, so a retuned model gets its own conditions."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from starfever.conditions.numbers import euros, percent, share_percent
from starfever.engine import money, symbols
from starfever.engine.errors import InputError
from starfever.engine.model import (
    UPGRADE_UNITS,
    MathModel,
    ModelError,
    check_offered,
)
from starfever.engine.symbols import Cents
from starfever.math.figures_format import Figures


class ConditionsError(InputError):
    """A model whose game conditions cannot be written (one line: what and why)."""


@dataclass(frozen=True)
class Facts:
    """What the conditions of one model say, in numbers."""

    name: str
    version: str
    sha256: str
    paytable: tuple[tuple[str, tuple[int, int, int]], ...]
    """Paying symbol code and its 3/4/5 factors (x line bet), lowest first; WILD last."""
    mwild_multiplier: int
    lines: tuple[tuple[int, ...], ...]
    """Row (0..2) per reel of each line, line 1 first."""
    bet_classes: tuple[Cents, ...]
    line_count: int
    star_wild_coins: int
    hold_and_cash_coins: int
    respins: int
    cells: int
    coin_values: tuple[tuple[int, Fraction], ...]
    """Value (x total bet) of a triggering coin and its probability (those that can occur)."""
    cash_values: tuple[tuple[int, Fraction], ...]
    """Value (x total bet) of a CASH landing in a respin and its probability."""
    cell_kinds: tuple[tuple[str, Fraction], ...]
    """What an empty cell lands in each respin, with its probability (kinds that can occur)."""
    minor: int
    major: int
    mega: int
    upgrade_unit: str
    """``line_bet`` or ``total_bet`` (``starfever.engine.model.UPGRADE_UNITS``)."""
    prize_names: str
    """How the fixed prizes are named: ``jackpot`` (Minor/Major/Mega Jackpot, the supplied
    conditions' words) or ``multiplier`` (by what they pay; ``engine.model.PRIZE_NAMES``)."""
    has_progressive: bool
    """Whether the model has the €€€ progressive; without it the text states that there is
    none and names no jackpot (ADR 0072)."""
    jackpot_reels: int
    share_base: Cents
    """The line bet (cents) that wins 100 % of the pool."""
    jackpot_rule: str
    contribution_rate: Fraction
    seed_cents: Cents
    respin_jackpot: bool
    """Whether the Star Wild respin's reels hold a JACKPOT at all."""
    cap_x: int | None
    max_base_x: float
    max_star_wild_x: float
    total: float
    game: float
    progressive: float
    by_class: tuple[tuple[Cents, float], ...]
    hit: float
    star_wild: float
    hold_and_cash: float

    def share(self, line_bet: Cents) -> Fraction:
        """The €€€ share a line bet wins (of the pool)."""
        return Fraction(line_bet, self.share_base)


def _probabilities(values: tuple[int, ...], weights: tuple[int, ...]) -> tuple[tuple[int,
                                                                                 Fraction], ...]:
    total = sum(weights)
    return tuple((v, Fraction(w, total)) for v, w in zip(values, weights, strict=True) if w)


def check_writable(model: MathModel) -> None:
    """:class:`ConditionsError` unless the text has words for every rule of ``model``: one
    that could not be offered (``check_offered``), an UPGRADE unit or €€€ rule the text does
    not know, a Star Wild respin whose reels hold a COIN. Reads no figures (a model's exact
    figures can take a minute to compute the first time)."""
    where = f"model {model.name} {model.version}"
    try:
        check_offered(model)
    except ModelError as error:
        raise ConditionsError(f"no game conditions for {error}") from None
    hc = model.hold_and_cash
    if hc.upgrade_unit not in UPGRADE_UNITS:
        raise ConditionsError(f"no game conditions for {where}: the UPGRADE unit "
                              f"{hc.upgrade_unit!r} is not one of {', '.join(UPGRADE_UNITS)}")
    if model.jackpot_rule not in money.JACKPOT_RULES:
        raise ConditionsError(f"no game conditions for {where}: the €€€ rule "
                              f"{model.jackpot_rule!r} is not one of "
                              f"{', '.join(money.JACKPOT_RULES)}")
    if any(symbols.COIN in strip for strip in model.star_wild_reels):
        raise ConditionsError(f"no game conditions for {where}: its Star Wild respin reels hold "
                              "a COIN, which the rules do not allow")


def gather(model: MathModel, figures: Figures | None = None) -> Facts:
    """The facts of ``model``; its exact figures are computed (or read from their cache) unless
    given. :class:`ConditionsError` for a model whose conditions cannot be written
    (:func:`check_writable`) or whose figures cannot be computed."""
    check_writable(model)
    where = f"model {model.name} {model.version}"
    hc = model.hold_and_cash
    if figures is None:
        from starfever.math.figures import figures as compute

        try:
            figures = compute(model)
        except (ModelError, ArithmeticError) as error:
            raise ConditionsError(f"no game conditions for {where}: its figures cannot be "
                                  f"computed: {error}") from None
    pays = symbols.PAYTABLE
    paying = [*symbols.PAYING_SYMBOLS, symbols.WILD]
    total = float(figures.exact.total)
    progressive = float(model.contribution_rate)
    largest = figures.max_win_x
    return Facts(
        name=model.name, version=model.version, sha256=model.sha256,
        paytable=tuple((code, pays[code]) for code in paying),
        mwild_multiplier=symbols.MWILD_MULTIPLIER,
        lines=tuple(tuple(line) for line in symbols.LINES),
        bet_classes=model.line_bets, line_count=symbols.LINE_COUNT,
        star_wild_coins=symbols.STAR_WILD_COINS,
        hold_and_cash_coins=symbols.HOLD_AND_CASH_COINS,
        respins=symbols.HOLD_AND_CASH_RESPINS, cells=symbols.CELLS,
        coin_values=_probabilities(symbols.CASH_VALUES, hc.coin_values),
        cash_values=_probabilities(symbols.CASH_VALUES, hc.cash_values),
        cell_kinds=tuple((kind, Fraction(w, sum(hc.cell_weights)))
                         for kind, w in zip(symbols.CELL_KINDS, hc.cell_weights, strict=True)
                         if w),
        minor=symbols.MINOR_PAYS, major=symbols.MAJOR_PAYS, mega=symbols.MEGA_PAYS,
        upgrade_unit=hc.upgrade_unit, prize_names=hc.prize_names,
        has_progressive=model.has_progressive, jackpot_reels=symbols.JACKPOT_REELS,
        share_base=Cents(money.JACKPOT_SHARE_BASE), jackpot_rule=model.jackpot_rule,
        contribution_rate=model.contribution_rate, seed_cents=model.seed_cents,
        respin_jackpot=any(symbols.JACKPOT in strip for strip in model.star_wild_reels),
        cap_x=model.max_win_x,
        max_base_x=float(largest.base), max_star_wild_x=float(largest.star_wild),
        total=total, game=total - progressive, progressive=progressive,
        by_class=tuple((bet, float(row.total)) for bet, row in sorted(figures.by_line_bet.items())),
        hit=float(figures.hit_frequency), star_wild=float(figures.star_wild_frequency),
        hold_and_cash=float(figures.hold_and_cash_frequency),
    )


# -- the tables' rows, built once for both languages (the words come from the language) --------


def paytable_rows(f: Facts, names: dict[str, str]) -> list[list[object]]:
    """Symbol name and its 3/4/5 factors, lowest paying first (``names``: code -> name)."""
    return [[names[code], *pays] for code, pays in f.paytable]


def line_rows(f: Facts) -> list[list[object]]:
    """Line number and its row (1 to 3) on reels 1 to 5."""
    return [[i + 1, *(row + 1 for row in line)] for i, line in enumerate(f.lines)]


def cell_kind_rows(f: Facts, names: dict[str, str], lang: str) -> list[list[object]]:
    """What an empty cell lands in a Hold & Cash respin (``names``: kind -> name) and its
    probability."""
    return [[names[kind], percent(p, lang, 4)] for kind, p in f.cell_kinds]


def cash_value_rows(f: Facts, unit: str, lang: str) -> list[list[object]]:
    """A cash value (``unit`` x value), its probability on a triggering coin and on a new
    cash symbol (0 where one cannot show it)."""
    coin, cash = dict(f.coin_values), dict(f.cash_values)
    return [[f"{unit} x{v}", percent(coin.get(v, 0), lang), percent(cash.get(v, 0), lang)]
            for v in sorted(coin.keys() | cash.keys())]


def jackpot_payout_rows(f: Facts, label: str) -> list[list[object]]:
    """The Minor, Major and Mega factors (x total bet), after ``label``."""
    return [[label, f.minor, f.major, f.mega]]


def share_rows(f: Facts, per_line: str, lang: str) -> list[list[object]]:
    """Each line bet (``per_line``: the words after it) and the €€€ share it wins."""
    return [[f"{euros(bet, lang)} {per_line}", share_percent(f.share(bet), lang)]
            for bet in f.bet_classes]


def return_rows(f: Facts, lang: str) -> list[list[object]]:
    """Each bet class, its total bet and its return, largest first."""
    return [[euros(bet, lang), euros(bet * f.line_count, lang), percent(rtp, lang)]
            for bet, rtp in reversed(f.by_class)]


def return_range(f: Facts, lang: str) -> tuple[float, float] | None:
    """The lowest and highest return of a bet class, or ``None`` where every class's, as
    written in ``lang``, is the total's."""
    if {percent(rtp, lang) for _, rtp in f.by_class} == {percent(f.total, lang)}:
        return None
    return min(rtp for _, rtp in f.by_class), max(rtp for _, rtp in f.by_class)


def alternatives(values: tuple[tuple[int, object], ...], last: str) -> str:
    """``x1, x2 or x5``: the values of ``values`` with ``last`` (the language's "or") before
    the last one."""
    shown = [f"x{v}" for v, _ in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" {last} " + shown[-1]
