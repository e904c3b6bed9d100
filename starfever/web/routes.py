"""``GET /api/v1/game``: the game's rules as data, straight from :mod:`starfever.engine`, so the
paytable and rules pages of the browser client can never disagree with the engine."""

from __future__ import annotations

from typing import Any, Final

from fastapi import APIRouter, Request

from starfever.engine import money, symbols
from starfever.engine.symbols import Symbol

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


def game_data(model: Any = None) -> dict[str, Any]:
    """Paytable, lines, bet classes, feature rules and symbol names as one JSON-ready dict."""
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
        "advertised_rtp": "95.5",
    }
    if model is not None:
        data["model"] = {"name": model.name, "version": model.version}
    return data


@router.get("/game")
def game(request: Request) -> dict[str, Any]:
    """The rules as data: what the paytable and rules pages show."""
    context = getattr(request.app.state, "context", None)
    data = game_data(getattr(context, "model", None))
    # the page's test hooks (?speed=, a scene to hold at) work only against a test-mode server
    data["test_mode"] = bool(getattr(getattr(context, "settings", None), "test_mode", False))
    return data
