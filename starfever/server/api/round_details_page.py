"""``GET /round-details/{round_id}/{signature}``: one round, rendered on the server, without a
log-in, in the player's language (``?lang=de|en``, else ``Accept-Language``; German by
default). Everything from the database is escaped. A malformed, altered or foreign signature
and a round that is not there are one and the same 404 page (no oracle).

``GET /round-details/{round_id}/{signature}/events.json``: the same round's stored draws and
events (and the game's fixed rules the client's renderer reads) for the page's replay, which
``js/round-replay.js`` of the web client plays with the client's own modules (ADR 0060); an
address that is not a round's answers the same JSON 404 as any unknown path."""

from __future__ import annotations

import json
from html import escape
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException

from starfever.markets import load_market
from starfever.server.api.deps import Context
from starfever.server.services import round_details
from starfever.server.services.free_rounds import RoundGrant
from starfever.server.services.support import CallLine
from starfever.web.routes import SYMBOL_NAMES, game_data

LANGUAGES: Final = ("de", "en")
TEXT: Final[dict[str, dict[str, str]]] = {
    "de": {"title": "Spielrunde {id}", "not_found": "Diese Runde gibt es nicht.",
           "played": "Gespielt", "test": "Testrunde", "bet": "Einsatz",
           "market": "Markt", "currency": "Währung", "unrecorded": "nicht erfasst",
           "line_bet": "Linieneinsatz", "total_bet": "Gesamteinsatz",
           "balance_before": "Guthaben vorher", "balance_after": "Guthaben nachher",
           "wins": "Gewinne", "base_win": "Grundspiel", "star_wild_win": "Star Wild",
           "hold_and_cash_win": "Hold & Cash", "progressive_win": "€€€-Anteil",
           "total_win": "Gesamtgewinn", "contribution": "Beitrag zum €€€-Pool",
           "pool_before": "€€€-Pool vorher", "pool_after": "€€€-Pool nachher",
           "steps": "Ablauf", "draws": "Zufallszahlen", "calls": "Buchungen beim Betreiber",
           "kind": "Art", "ours": "Transaktion Star Fever", "theirs": "Transaktion Betreiber",
           "status": "Status", "amount": "Betrag", "build": "Software und Modell",
           "model": "Mathematisches Modell", "model_sha256": "Modell (SHA-256)",
           "build_sha256": "Software (SHA-256)", "hash": "Runden-Hash",
           "reel": "Walze", "row": "Reihe", "line": "Linie", "step": "Schritt",
           "free_round": "Freispiel", "free_round_note": "Ein Freispiel: kein Einsatz wurde "
           "abgebucht.", "grant": "Freispiel-Gutschrift", "campaign": "Aktion",
           "paid_win": "Ausgezahlter Gewinn", "withheld": "Über der Obergrenze, nicht "
           "ausgezahlt",
           "payment": "Auszahlung", "paid": "ausgezahlt",
           "pending": "Gutschrift beim Betreiber in Bearbeitung",
           "unpaid": "Gewinn noch nicht vom Betreiber ausgezahlt",
           "settled_manually": "vom Betreiber außerhalb des Spiels abgerechnet",
           "replay": "Wiedergabe", "play": "Abspielen", "again": "Nochmals abspielen",
           "win": "Gewinn"},
    "en": {"title": "Round {id}", "not_found": "There is no such round.",
           "played": "Played", "test": "Test round", "bet": "Bet",
           "market": "Market", "currency": "Currency", "unrecorded": "not recorded",
           "line_bet": "Line bet", "total_bet": "Total bet",
           "balance_before": "Balance before", "balance_after": "Balance after",
           "wins": "Wins", "base_win": "Base game", "star_wild_win": "Star Wild",
           "hold_and_cash_win": "Hold & Cash", "progressive_win": "€€€ share",
           "total_win": "Total win", "contribution": "Contribution to the €€€ pool",
           "pool_before": "€€€ pool before", "pool_after": "€€€ pool after",
           "steps": "Steps", "draws": "Random draws", "calls": "Bookings at the operator",
           "kind": "Kind", "ours": "Star Fever transaction", "theirs": "Operator transaction",
           "status": "Status", "amount": "Amount", "build": "Software and model",
           "model": "Math model", "model_sha256": "Model (SHA-256)",
           "build_sha256": "Software (SHA-256)", "hash": "Round hash",
           "reel": "Reel", "row": "Row", "line": "Line", "step": "Step",
           "free_round": "Free round", "free_round_note": "A free round: no stake was "
           "taken.", "grant": "Free-round grant", "campaign": "Campaign",
           "paid_win": "Win paid", "withheld": "Above the cap, not paid",
           "payment": "Payment", "paid": "paid",
           "pending": "credit in progress at the operator",
           "unpaid": "win pending payment by the operator",
           "settled_manually": "settled by the operator outside the game",
           "replay": "Replay", "play": "Play", "again": "Play again", "win": "Win"},
}
EVENTS: Final[dict[str, tuple[str, str]]] = {
    "reveal": ("Walzen", "Reels"), "line_win": ("Liniengewinn", "Line win"),
    "feature": ("Feature ausgelöst", "Feature triggered"),
    "star_wild": ("Star Wild: Wilds gesetzt", "Star Wild: wilds placed"),
    "hold_and_cash_start": ("Hold & Cash: Start", "Hold & Cash: start"),
    "respin": ("Hold & Cash: Respin", "Hold & Cash: respin"),
    "mega": ("Hold & Cash: Mega", "Hold & Cash: Mega"),
    "hold_and_cash_end": ("Hold & Cash: Ende", "Hold & Cash: end"),
    "jackpot": ("€€€-Anteil", "€€€ share"), "max_win": ("Höchstgewinn erreicht", "Max win reached"),
    "round_end": ("Rundenende", "Round end"),
}
"""German and English names of the engine's event types (``engine.round``, ``holdcash``)."""
MONEY_FIELDS: Final = frozenset({"win", "total_win", "pool_after", "pool_left", "refill",
                                 "withheld", "value", "cash"})
"""Event fields that hold cents."""


def language(request: Request) -> str:
    """``?lang=`` when it names a served language, else the first served language of
    ``Accept-Language``, else German."""
    asked = request.query_params.get("lang", "")
    if asked in LANGUAGES:
        return asked
    for part in request.headers.get("accept-language", "").split(","):
        tag = part.split(";")[0].strip().lower()[:2]
        if tag in LANGUAGES:
            return tag
    return "de"


SYMBOLS = {"EUR": "€", "GBP": "£"}
"""The sign of each shipped currency (another is written by its code)."""


def money(cents: int, lang: str, currency: str = "EUR") -> str:
    """``1.234,56 €`` (de) or ``€1,234.56`` (en), or ``£1,234.56`` for a GBP round (minor
    units with two decimals, as every shipped currency has)."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(int(cents)), 100)
    mark = SYMBOLS.get(currency, currency)
    if lang == "de":
        return f"{sign}{whole:,}".replace(",", ".") + f",{part:02d} {mark}"
    return f"{sign}{mark}{whole:,}.{part:02d}"


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _symbol(code: Any, lang: str) -> str:
    names = SYMBOL_NAMES.get(code)
    return _e(names[0 if lang == "de" else 1] if names else code)


def _grid(grid: list[list[Any]], lang: str) -> str:
    """A window (columns of reels) as a table, rows top to bottom."""
    rows = max((len(column) for column in grid), default=0)
    body = "".join("<tr>" + "".join(f"<td>{_symbol(column[r], lang)}</td>" for column in grid)
                   + "</tr>" for r in range(rows))
    return f'<table class="grid">{body}</table>'


def _value(name: str, value: Any, lang: str, cur: str = "EUR") -> str:
    if name in MONEY_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        return _e(money(value, lang, cur))
    if name == "symbol":
        return _symbol(value, lang)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "; ".join(", ".join(f"{_e(k)} {_value(k, v, lang, cur)}" for k, v in item.items()
                                   if not isinstance(v, list)) for item in value)
    return _e(json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value)


def _event(event: dict[str, Any], lang: str, cur: str = "EUR") -> str:
    kind = str(event.get("type", ""))
    names = EVENTS.get(kind)
    title = _e(names[0 if lang == "de" else 1] if names else kind)
    facts = ", ".join(f"{_e(k)}: {_value(k, v, lang, cur)}" for k, v in event.items()
                      if k not in ("type", "grid"))
    grid = _grid(event["grid"], lang) if isinstance(event.get("grid"), list) else ""
    return (f'<li class="step step-{_e(kind)}"><span class="what">{title}</span> '
            f'<span class="facts">{facts}</span>{grid}</li>')


def _rows(pairs: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in pairs)


def _calls(calls: list[CallLine], t: dict[str, str], lang: str, cur: str) -> str:
    if not calls:
        return ""
    head = "".join(f"<th>{_e(t[k])}</th>" for k in ("kind", "ours", "theirs", "status",
                                                      "amount"))
    body = "".join(f"<tr><td>{_e(c.kind)}</td><td>{_e(c.transaction_id)}</td>"
                   f"<td>{_e(c.operator_transaction_id or '-')}</td><td>{_e(c.status)}</td>"
                   f"<td>{_e(money(c.amount, lang, cur))}</td></tr>" for c in calls)
    return (f'<h2>{_e(t["calls"])}</h2><table class="calls"><tr>{head}</tr>{body}</table>')


def _free_round(free: RoundGrant | None, t: dict[str, str], lang: str, cur: str) -> str:
    """A free round's grant, campaign, paid win and what its cap withheld."""
    if free is None:
        return ""
    rows = [(t["grant"], _e(free.grant_id)), (t["campaign"], _e(free.campaign_id or "-")),
            (t["paid_win"], _e(money(free.paid_win, lang, cur))),
            (t["withheld"], _e(money(free.withheld, lang, cur)))]
    return (f'<h2>{_e(t["free_round"])}</h2><p class="free-round">'
            f'{_e(t["free_round_note"])}</p><table class="facts">{_rows(rows)}</table>')


def _page(lang: str, title: str, body: str, css: str | tuple[str, ...],
          script: str = "") -> str:
    sheets = "".join(f'<link rel="stylesheet" href="{_e(href)}">'
                     for href in ((css,) if isinstance(css, str) else css))
    module = f'<script type="module" src="{_e(script)}"></script>' if script else ""
    return (f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="robots" content="noindex">'
            f'<title>{_e(title)}</title>{sheets}{module}</head>'
            f'<body class="round-details">{body}</body></html>')


def _replay(t: dict[str, str], events_url: str) -> str:
    """The replay's stage (the client's reels, paylines, Hold & Cash board and banner), hidden
    until ``js/round-replay.js`` shows it: with scripts off the page shows no dead button."""
    return (f'<section class="replay" id="replay" hidden data-events="{_e(events_url)}" '
            f'data-again="{_e(t["again"])}"><h2>{_e(t["replay"])}</h2>'
            '<div id="sprite-host" aria-hidden="true"></div><div class="replay-stage">'
            '<div class="stage" id="stage"><div class="reels" id="reels"></div>'
            '<div class="sticky" id="sticky" aria-hidden="true"></div>'
            '<svg class="paylines" id="paylines" viewBox="0 0 500 300" '
            'preserveAspectRatio="none" aria-hidden="true"></svg>'
            '<div class="holdboard" id="holdboard" hidden><div class="hc-head">'
            '<span class="hc-title">HOLD &amp; CASH</span><span class="hc-respins" '
            'id="hc-respins"><span>Respins</span> <b id="hc-respins-n">3</b> <span '
            'class="dots" id="hc-dots"><i></i><i></i><i></i></span></span></div>'
            '<div class="hc-grid" id="hc-grid"></div></div>'
            '<div class="banner" id="banner" hidden></div></div></div>'
            '<p class="win-line" id="win-line" aria-live="polite">&nbsp;</p>'
            f'<p class="replay-controls"><span>{_e(t["win"])} <output id="win" '
            'class="meter-value win">–</output></span> <button type="button" '
            f'id="replay-play" disabled>{_e(t["play"])}</button></p></section>')


def render(found: round_details.RoundDetails, lang: str, css: str | tuple[str, ...],
           script: str = "", events_url: str = "") -> str:
    """The page of one round; with ``script`` and ``events_url``, with its replay."""
    t, r = TEXT[lang], found.round
    cur = r.currency or "EUR"  # the round's own currency (ADR 0076)
    # where it was played (ADR 0078): a round from before migration 0028 names no market
    cents = [(t["market"], _e(r.market or t["unrecorded"])), (t["currency"], _e(cur))]
    cents += [(t[name], _e(money(getattr(r, name), lang, cur)))
              for name in ("line_bet", "total_bet", "balance_before", "balance_after")]
    wins = [(t[name], _e(money(getattr(r, name), lang, cur)))
            for name in ("base_win", "star_wild_win", "hold_and_cash_win", "progressive_win",
                         "total_win", "contribution", "pool_before", "pool_after")]
    payment = found.payment if found.payment in t else "paid"
    wins.append((t["payment"], f'<span class="payment" data-payment="{_e(payment)}">'
                               f'{_e(t[payment])}</span>'))
    events = json.loads(r.events)
    steps = "".join(_event(e, lang, cur) for e in events)
    build = [(t["model"], _e(f"{r.model_name} {r.model_version}")),
             (t["model_sha256"], _e(r.model_sha256 or "-")),
             (t["build_sha256"], _e(r.build_sha256 or "-")), (t["hash"], _e(r.hash))]
    title = t["title"].format(id=r.id)
    draws = ", ".join(map(str, json.loads(r.draws)))
    played = f"{t['played']}: {r.created_at:%Y-%m-%d %H:%M:%S} UTC"
    body = (f"<h1>{_e(title)}</h1><p>{_e(played)}"
            + (f" · {_e(t['test'])}" if r.test else "") + "</p>"
            + _free_round(found.free_round, t, lang, cur)
            + f'<h2>{_e(t["bet"])}</h2><table class="facts">{_rows(cents)}</table>'
            + (_replay(t, events_url) if script and events_url else "") +
            f'<h2>{_e(t["steps"])}</h2><ol class="steps">{steps}</ol>'
            f'<h2>{_e(t["wins"])}</h2><table class="facts">{_rows(wins)}</table>'
            + _calls(found.calls, t, lang, cur)
            + f'<h2>{_e(t["build"])}</h2><table class="facts">{_rows(build)}</table>'
            f'<h2>{_e(t["draws"])}</h2><p class="draws">{_e(draws)}</p>')
    return _page(lang, title, body, css, script)


REPLAY_FIELDS: Final = ("id", "line_bet", "total_bet", "base_win", "star_wild_win",
                        "hold_and_cash_win", "progressive_win", "total_win", "feature",
                        "currency")
"""What the replay reads of the round itself, besides its draws and events."""


def replay_data(found: round_details.RoundDetails, game: dict[str, Any],
                test_mode: bool) -> dict[str, Any]:
    """The body of ``events.json``: this round's figures, draws and events, and the game's
    fixed rules (lines, symbols, Hold & Cash pays, the market's presentation rules; no live
    pool, nothing of any other round)."""
    r = found.round
    played = {name: getattr(r, name) for name in REPLAY_FIELDS}
    return {"round": {**played, "draws": json.loads(r.draws), "events": json.loads(r.events)},
            "game": game, "test_mode": test_mode}


def mount(app: FastAPI, context: Context, *, css: str | tuple[str, ...],
          script: str = "") -> None:
    """Add the page's routes; ``css``: the addresses of its stylesheets; ``script``: the
    address of its replay's module (none: a page without a replay)."""
    key = round_details.details_key(context.settings.secret_key)
    headers = {"Cache-Control": "private, max-age=300", "X-Robots-Tag": "noindex"}
    # the game's fixed rules, as GET /game has them without the running model's figures
    game = game_data(None, load_market(context.settings.market))
    test_mode = bool(context.settings.test_mode)

    def not_found(lang: str) -> HTMLResponse:
        t = TEXT[lang]
        return HTMLResponse(_page(lang, t["not_found"], f"<h1>{_e(t['not_found'])}</h1>", css),
                            status_code=404, headers=headers)

    @app.api_route(f"{round_details.PATH}/{{round_id}}/{{sent}}", methods=["GET", "HEAD"],
                   include_in_schema=False)
    def details(request: Request, round_id: str, sent: str) -> HTMLResponse:
        lang = language(request)
        number = round_details.verified_round_id(key, round_id, sent)
        found = None if number is None else round_details.load(context.db, number)
        if found is None:
            return not_found(lang)
        events = f"{round_details.path_of(key, found.round.id)}/events.json"
        return HTMLResponse(render(found, lang, css, script, events), headers=headers)

    @app.api_route(f"{round_details.PATH}/{{round_id}}/{{sent}}/events.json",
                   methods=["GET", "HEAD"], include_in_schema=False)
    def events(round_id: str, sent: str) -> JSONResponse:
        number = round_details.verified_round_id(key, round_id, sent)
        found = None if number is None else round_details.load(context.db, number)
        if found is None:  # the very answer of any unknown path: no oracle
            raise HTTPException(status_code=404)
        return JSONResponse(replay_data(found, game, test_mode), headers=headers)


__all__ = ["LANGUAGES", "language", "money", "mount", "render", "replay_data"]
