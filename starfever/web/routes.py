"""``GET /api/v1/game``: the game's rules as data, straight from :mod:`starfever.engine`, the
running math model and its exact figures (:mod:`starfever.math.figures`), and the market
profile (:mod:`starfever.markets`), so the paytable and rules pages of the browser client can
never disagree with the engine, nor state a return the running model does not have."""

from __future__ import annotations

import logging
import threading
from typing import Any, Final

from fastapi import APIRouter, Request, Response
from starlette.exceptions import HTTPException

from starfever.currencies import DEFAULT_CURRENCY, load_currency
from starfever.engine import money, symbols
from starfever.engine.model import MathModel
from starfever.engine.symbols import Symbol
from starfever.markets import DEFAULT_MARKET, MarketProfile, load_market
from starfever.math.figures_format import Figures

log = logging.getLogger("starfever.server")

router = APIRouter(tags=["game"])

SYMBOL_NAMES: Final[dict[Symbol, tuple[str, str]]] = {
    symbols.LEMON: ("Zitrone", "Lemon"),
    symbols.CHERRY: ("Kirsche", "Cherry"),
    symbols.MELON: ("Melone", "Melon"),
    symbols.BAR: ("BAR", "BAR"),
    symbols.GOLD: ("Goldbarren", "Gold bar"),
    symbols.BELL: ("Glocke", "Bell"),
    symbols.SEVEN: ("Lucky 7", "Lucky 7"),
    symbols.DIAMOND: ("Diamant", "Diamond"),
    symbols.WILD: ("Wild", "Wild"),
    symbols.MWILD: ("Multiplikator Wild (x3)", "Multiplier Wild (x3)"),
    symbols.COIN: ("Star Coin", "Star Coin"),
    symbols.JACKPOT: ("€€€-Jackpot", "€€€ Jackpot"),
}
"""German (binding) and English names of every symbol code (RULES.md, symbol table)."""


def _kind(symbol: Symbol) -> str:
    if symbol in symbols.PAYING_SYMBOLS:
        return "paying"
    if symbol in symbols.WILDS:
        return "wild"
    return "scatter" if symbol == symbols.COIN else "jackpot"


_rtp_lock = threading.Lock()
_rtp_by_model: dict[str, Figures] = {}


def model_figures(model: MathModel) -> Figures:
    """The running model's exact figures: from the figures cached per model hash (the shipped
    models' ship with them), else computed (every figure, the largest wins too: seconds, ADR
    0023) and cached, once per process."""
    with _rtp_lock:
        known = _rtp_by_model.get(model.sha256)
        if known is None:
            from starfever.math.figures import figures

            known = _rtp_by_model[model.sha256] = figures(model)
        return known


def respin_can_show_jackpot(model: MathModel) -> bool:
    """Whether the Star Wild respin's reels hold a JACKPOT at all. Where none does (no shipped
    model's does), the respin can never win the €€€, and the rules page says so instead of
    "as in any spin"."""
    return any(symbols.JACKPOT in strip for strip in model.star_wild_reels)


def game_data(model: MathModel | None = None,
              market: MarketProfile | None = None) -> dict[str, Any]:
    """Paytable, lines, bet classes, feature rules and symbol names as one JSON-ready dict;
    with the running ``model``, its exact RTP, hit and feature frequencies, the €€€ pool's
    seed and contribution, whether the Star Wild respin can win the €€€, the win cap and what it
    holds, and what one UPGRADE adds; and
    the ``market`` profile (the default market's when none is given)."""
    pays = symbols.PAYTABLE
    data: dict[str, Any] = {
        "reels": symbols.REELS,
        "rows": symbols.ROWS,
        "symbols": [
            {"code": code, "kind": _kind(code),
             "name": {"de": SYMBOL_NAMES[code][0], "en": SYMBOL_NAMES[code][1]},
             "pays": list(pays.get(code, pays[symbols.WILD] if code == symbols.MWILD else ()))
             or None}
            for code in symbols.SYMBOLS
        ],
        "mwild_multiplier": symbols.MWILD_MULTIPLIER,
        "lines": [list(line) for line in symbols.LINES],
        "bet_classes": list(symbols.BET_CLASSES),
        "line_count": symbols.LINE_COUNT,
        "star_wild_coins": symbols.STAR_WILD_COINS,
        "hold_and_cash_coins": symbols.HOLD_AND_CASH_COINS,
        "hold_and_cash": {
            "respins": symbols.HOLD_AND_CASH_RESPINS,
            "cash_values": list(symbols.CASH_VALUES),
            "minor": symbols.MINOR_PAYS,
            "major": symbols.MAJOR_PAYS,
            "mega": symbols.MEGA_PAYS,
        },
        "jackpot": {"reels": symbols.JACKPOT_REELS,
                    "share_base": money.JACKPOT_SHARE_BASE},
        "market": (market or load_market(DEFAULT_MARKET)).public(),
    }
    if model is not None:
        # what the running model offers: its classes within the market's stake cap (the spin
        # route refuses the rest), whether it has the €€€ pool, how its fixed prizes are named
        # (``jackpot``: Minor/Major/Mega; ``multiplier``: by what they pay, ADR 0072)
        data["bet_classes"] = offered_classes(model, market or load_market(DEFAULT_MARKET))
        data["hold_and_cash"]["prize_names"] = model.hold_and_cash.prize_names
        data["jackpot"]["progressive"] = model.has_progressive
        figures = model_figures(model)
        exact = figures.exact
        data["model"] = {"name": model.name, "version": model.version,
                         "progressive": model.has_progressive}
        # the exact return, split into the game (lines, Star Wild, Hold & Cash) and the €€€
        # contribution, as fractions of the total bet
        data["rtp"] = {"total": float(exact.total), "game": float(exact.game),
                       "progressive": float(exact.progressive)}
        # RULES.md: a hit is a round whose total win is above zero; the features' frequencies
        # (probabilities per round) are stated beside it
        data["frequencies"] = {"hit": float(exact.hit_frequency),
                               "star_wild": figures.star_wild_frequency,
                               "hold_and_cash": figures.hold_and_cash_frequency}
        data["star_wild_respin_jackpot"] = respin_can_show_jackpot(model)
        data["jackpot"].update(seed_cents=int(model.seed_cents),
                               contribution_rate=float(model.contribution_rate),
                               rule=model.jackpot_rule)
        data["max_win"] = {"cap_x": model.max_win_x,
                           "largest_x": {"base": figures.max_win_x.base,
                                         "star_wild": figures.max_win_x.star_wild}}
        if model.max_win_x is not None:  # the whole round, or the game win (earlier models)
            data["max_win"]["scope"] = model.max_win_scope
        # what one UPGRADE adds: 1 x line bet or 1 x total bet (the model's)
        data["hold_and_cash"]["upgrade_unit"] = model.hold_and_cash.upgrade_unit
    return data


def offered_classes(model: MathModel, market: MarketProfile) -> list[int]:
    """The running model's classes within the market's stake cap (the spin route refuses the
    rest; the smallest class where the cap allows none)."""
    cap = market.max_stake_cents
    return [int(b) for b in model.line_bets
            if b * symbols.LINE_COUNT <= cap] or [int(model.line_bets[0])]


def currency_data(code: str, classes: list[int]) -> dict[str, Any]:
    """A served currency as ``/game`` and the wallet answer name it: its code, exponent, share
    base and ladder (its line bets among the bet ``classes`` the model and market offer)."""
    found = load_currency(code)
    ladder = [b for b in found.line_bets if b in classes] or classes[:1]
    return {**found.public(), "line_bets": ladder}


@router.get("/game")
def game(request: Request) -> dict[str, Any]:
    """The rules as data: what the paytable and rules pages show, with the served currencies
    (``currencies``, each with its ladder; ``currency``: the first, a new wallet's)."""
    context = getattr(request.app.state, "context", None)
    settings = getattr(context, "settings", None)
    market = load_market(getattr(settings, "market", DEFAULT_MARKET))
    data = game_data(getattr(context, "model", None), market)
    served = settings.served_currencies if settings is not None else (DEFAULT_CURRENCY,)
    data["currencies"] = [currency_data(code, data["bet_classes"]) for code in served]
    data["currency"] = served[0]
    # the page's test hooks (?speed=, a scene to hold at) work only against a test-mode server
    data["test_mode"] = bool(getattr(getattr(context, "settings", None), "test_mode", False))
    return data


_conditions_lock = threading.Lock()
_conditions_by_model: dict[str, Any] = {}
CONDITIONS_FORMATS = {"html": "text/html; charset=utf-8", "md": "text/markdown; charset=utf-8"}


def model_conditions(model: MathModel, market: MarketProfile | None = None) -> Any:
    """The running model's game conditions per language (:func:`starfever.conditions.render`)
    with the running market's section, rendered once per process: the server checked at
    start-up that it has words for every rule of the model
    (``starfever.server.identity.check_conditions``), and renders them beside the serving
    (:func:`warm_figures`)."""
    key = f"{model.sha256}:{market.name if market else ''}"
    with _conditions_lock:
        known = _conditions_by_model.get(key)
        if known is None:
            from starfever.conditions import render

            known = _conditions_by_model[key] = render(model, market=market)
        return known


def warm_figures(model: MathModel, market: MarketProfile | None = None) -> None:
    """Compute (or read from their cache) the running model's figures and render its game
    conditions, beside the serving: a model never seen takes up to a minute. A failure is
    logged here, and the endpoints that need them answer it as an error of their own."""
    from starfever.conditions import ConditionsError

    try:
        model_figures(model)
        model_conditions(model, market)
    except (ConditionsError, ArithmeticError, ValueError) as error:
        log.error("the figures or game conditions of model %s %s cannot be made: %s",
                  model.name, model.version, error)


@router.get("/game/conditions/{lang}", response_class=Response, responses={
    200: {"content": {"text/html": {}, "text/markdown": {}},
          "description": "The game conditions of the running model (German binds)"},
    404: {"description": "No conditions in that language or format, or no model runs"},
    503: {"description": "The running model's figures, and so its conditions, failed"}})
def conditions(lang: str, request: Request, format: str = "html") -> Response:
    """The game conditions of the running model, generated from it, beside the rules page:
    ``de`` (binding) or ``en``, as an HTML page or (``?format=md``) Markdown."""
    from starfever.conditions import LANGUAGES

    if lang not in LANGUAGES:
        raise HTTPException(404, f"no game conditions in {lang!r}: there are "
                                 f"{', '.join(LANGUAGES)}")
    if format not in CONDITIONS_FORMATS:
        raise HTTPException(404, f"no game conditions as {format!r}: format is html or md")
    model = getattr(getattr(request.app.state, "context", None), "model", None)
    if model is None:
        raise HTTPException(404, "this server runs no model")
    from starfever.conditions import ConditionsError

    try:
        settings = getattr(request.app.state.context, "settings", None)
        market = load_market(getattr(settings, "market", DEFAULT_MARKET))
        page = model_conditions(model, market)[lang]
    except ConditionsError as error:
        raise HTTPException(503, str(error)) from None
    body = page.html if format == "html" else page.markdown
    return Response(body, media_type=CONDITIONS_FORMATS[format],
                    headers={"Content-Language": lang, "Cache-Control": "no-cache"})
