"""The rules as the browser client shows them to players, rendered on the server for the
certification bundle, in German and English.

The client builds its rules and paytable pages in JavaScript (``web/static/js/pages.js``) from
two sources: the texts of ``web/static/js/i18n.js`` and the game data of ``GET /api/v1/game``
(``starfever.web.routes.game_data``, the engine's own paytable, lines and bet classes, for the
running model). This module reads the very same two sources: the texts are taken out of the
shipped ``i18n.js`` (its string literals, not a copy kept here) and filled with the same values
``pages.js`` passes, formatted as ``money.js`` formats cents. A placeholder left unfilled or a
text missing is an error, so a change of the client's texts cannot pass unnoticed (ADR 0021).
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any

from starfever.engine.errors import InputError
from starfever.engine.model import MathModel
from starfever.markets import MarketProfile

I18N_JS = Path(__file__).resolve().parent.parent / "web" / "static" / "js" / "i18n.js"
LANGUAGES = ("de", "en")
NEEDED = ("rulesHtml", "ptIntro", "ptSymbol", "ptOf", "wildRule", "coinRule", "jackpotRule",
          "linesTitle", "paytable", "rules", "totalBetWord", "maxWinCap", "maxWinCapGame",
          "maxWinNone", "upgradeLineBet", "upgradeTotalBet", "upgradeUnknown",
          "marketHtml", "marketTurboYes", "marketTurboNo", "marketSkipYes", "marketSkipNo",
          "marketMinRound", "marketClock", "respinJackpot", "respinNoJackpot",
          "marketYoungCap", "marketNoCelebration", "rulesHtmlNoPool", "maxWinNoneNoPool",
          "maxWinCapNoPool", "respinNoPool", "wildRuleNoPool")
_SECTION = re.compile(r"^(?:\s{2}(de|en): \{|Object\.assign\(STRINGS\.(de|en), \{)$",
                      re.MULTILINE)
_END = re.compile(r"^let current", re.MULTILINE)
_ENTRY = re.compile(r'(\w+):\s*("(?:[^"\\\n]|\\.)*"|`[^`]*`)', re.DOTALL)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
UPGRADE_RULES = {"line_bet": "upgradeLineBet", "total_bet": "upgradeTotalBet"}
"""``pages.js``'s ``UPGRADE_RULES``: the text that says what one UPGRADE adds, by unit."""
SEPARATORS = {"de": (".", ",", "", "\u00a0€"), "en": (",", ".", "€", "")}
"""group, decimal, before, after: what ``money.js`` (``Intl.NumberFormat``) writes for EUR."""


class RulesError(InputError):
    """The client's texts cannot be rendered as they are."""


def client_strings(path: Path = I18N_JS) -> dict[str, dict[str, str]]:
    """The texts of ``i18n.js`` by language and key."""
    source = path.read_text(encoding="utf-8")
    marks = list(_SECTION.finditer(source))
    if {m.group(1) or m.group(2) for m in marks} != set(LANGUAGES):
        raise RulesError(f"{path}: cannot find the de and en sections of STRINGS")
    stop = _END.search(source)
    out: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
    for i, mark in enumerate(marks):  # STRINGS.de, .en, then blocks added to either
        end = marks[i + 1].start() if i + 1 < len(marks) else (
            stop.start() if stop else len(source))
        body = source[mark.end():end]
        texts = out[mark.group(1) or mark.group(2)]
        for key, literal in _ENTRY.findall(body):
            texts[key] = literal[1:-1] if literal.startswith("`") else json.loads(literal)
    for lang in LANGUAGES:
        missing = [k for k in NEEDED if k not in out[lang]]
        if missing:
            raise RulesError(f"{path}: the {lang} texts lack {', '.join(missing)}")
    return out


def format_cents(cents: int, lang: str) -> str:
    """``money.js``'s ``formatCents``: "1.234,56 €" (de), "€1,234.56" (en)."""
    group_sep, decimal, before, after = SEPARATORS[lang]
    sign = "−" if cents < 0 else ""
    euros, rest = divmod(abs(cents), 100)
    return f"{sign}{before}{euros:,}".replace(",", group_sep) + f"{decimal}{rest:02d}{after}"


def fill(text: str, values: dict[str, Any]) -> str:
    """``i18n.js``'s ``t``: ``{name}`` replaced; every placeholder must have a value."""
    left = sorted({m.group(1) for m in _PLACEHOLDER.finditer(text)} - set(values))
    if left:
        raise RulesError(f"the client's text has placeholders the bundle cannot fill: "
                         f"{', '.join(left)} (update starfever/certify/rules.py with pages.js)")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)


def js_number(x: float | int | str, lang: str) -> str:
    """``pages.js``'s ``number``: JavaScript's ``String(x)`` (no ".0" on a whole number), with a
    decimal comma in German."""
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    text = str(x)
    return text.replace(".", ",") if lang == "de" else text


def percent(fraction: float, lang: str) -> str:
    """``pages.js``'s ``percent``: a fraction as a percentage with two decimals."""
    return js_number(f"{fraction * 100:.2f}", lang)


def one_in(probability: float | None, digits: int, lang: str) -> str:
    """``pages.js``'s ``oneIn``: "1 in N" of a probability per round, N with ``digits``
    decimals (JavaScript's ``toFixed``), "–" when unknown."""
    if not probability or probability <= 0:
        return "–"
    return js_number(f"{1 / probability:.{digits}f}", lang)


def rules_values(game: dict[str, Any], texts: dict[str, str], lang: str,
                 line_bet: int) -> dict[str, Any]:
    """What ``pages.js``'s ``renderRules`` passes to ``rulesHtml`` at ``line_bet``."""
    hc = game["hold_and_cash"]
    market = game["market"]
    total_bet = line_bet * game["line_count"]
    cap = (game.get("max_win") or {}).get("cap_x")
    largest = (game.get("max_win") or {}).get("largest_x") or {}
    pool = has_pool(game)
    if cap:
        scoped = "maxWinCapNoPool" if not pool else "maxWinCapGame" \
            if (game.get("max_win") or {}).get("scope") == "game" else "maxWinCap"
        max_win = fill(texts[scoped], {"cap": cap,
                                       "amount": format_cents(cap * total_bet, lang)})
    else:
        max_win = fill(texts["maxWinNone" if pool else "maxWinNoneNoPool"], {
            "base": js_number(largest.get("base", "–"), lang),
            "star": js_number(largest.get("star_wild", "–"), lang), "mega": hc["mega"]})
    min_round = market.get("min_round_ms") or 0
    market_html = fill(texts["marketHtml"], {
        "name": market["name"],
        "turbo": texts["marketTurboYes" if market.get("turbo") else "marketTurboNo"],
        "skip": texts["marketSkipYes" if market.get("slam_stop") else "marketSkipNo"],
        "minRound": fill(texts["marketMinRound"], {"s": js_number(min_round / 1000, lang)})
        if min_round else "",
        "maxStake": format_cents(market["max_stake_cents"], lang),
        "clock": texts["marketClock"] if market.get("show_net_position") else "",
        "young": fill(texts["marketYoungCap"], {
            "age": young["below_age"], "stake": format_cents(young["max_stake_cents"], lang)})
        if (young := market.get("young_adult_stake_cap")) else "",
        "celebrate": texts["marketNoCelebration"]
        if market.get("celebrate_win_equal_to_stake") is False else "",
    })
    rtp = game.get("rtp") or {}
    freq = game.get("frequencies") or {}
    jackpot = game["jackpot"]
    rate = jackpot.get("contribution_rate")
    model = game.get("model")
    return {
        "lines": game["line_count"],
        "classes": ", ".join(format_cents(c, lang) for c in game["bet_classes"]),
        "shareBase": format_cents(100, lang), "shareOne": format_cents(1, lang),
        "mult": game["mwild_multiplier"], "sw": game["star_wild_coins"],
        "hc": game["hold_and_cash_coins"], "cash": ", ".join(map(str, hc["cash_values"])),
        "respins": hc["respins"], "minor": hc["minor"], "major": hc["major"],
        "mega": hc["mega"],
        "model": f"{model['name']} {model['version']}" if model else "–",
        "rtp": percent(rtp["total"], lang) if "total" in rtp else "–",
        "rtpGame": percent(rtp["game"], lang) if "game" in rtp else "–",
        "rtpJackpot": percent(rtp["progressive"], lang) if "progressive" in rtp else "–",
        "contribution": "–" if rate is None
        else js_number(math.floor(rate * 10000 + 0.5) / 100, lang),
        "seed": "–" if jackpot.get("seed_cents") is None
        else format_cents(jackpot["seed_cents"], lang),
        "maxWin": max_win,
        "market": market_html,
        "respinRule": texts["respinNoPool" if not pool else "respinNoJackpot"
                            if game.get("star_wild_respin_jackpot") is False
                            else "respinJackpot"],
        "upgradeRule": texts[UPGRADE_RULES.get(hc.get("upgrade_unit", ""), "upgradeUnknown")],
        "hit": percent(freq["hit"], lang) if "hit" in freq else "–",
        "hitOneIn": one_in(freq.get("hit"), 2, lang),
        "starWildOneIn": one_in(freq.get("star_wild"), 1, lang),
        "holdOneIn": one_in(freq.get("hold_and_cash"), 1, lang),
    }


def worded(texts: dict[str, str], market: str) -> dict[str, str]:
    """``i18n.js``'s ``setMarketWording``: a text ``KEY__market`` stands for ``KEY`` (the uk
    market's British English, ADR 0077)."""
    suffix = f"__{market}"
    return {**texts, **{key.removesuffix(suffix): text for key, text in texts.items()
                        if key.endswith(suffix)}}


def has_pool(game: dict[str, Any]) -> bool:
    """``market_de.js``'s ``hasPool``: whether the running model has the €€€ pool; without it
    no rule names a pool or a jackpot (ADR 0072)."""
    return game["jackpot"].get("progressive") is not False


def paytable_html(game: dict[str, Any], texts: dict[str, str], lang: str,
                  line_bet: int) -> str:
    """``renderPaytable`` without the symbol pictures: every paying symbol's 3/4/5 wins in
    multiples of the line bet and in euros at ``line_bet``, the special symbols, the lines."""
    esc = html.escape
    names = {s["code"]: s["name"].get(lang) or s["name"]["en"] for s in game["symbols"]}
    rows = []
    for s in reversed([s for s in game["symbols"] if s["pays"] and s["code"] != "MWILD"]):
        cells = "".join(f"<td><b>{f}×</b> <small>{format_cents(f * line_bet, lang)}</small>"
                        "</td>" for f in s["pays"])
        rows.append(f'<tr data-symbol="{s["code"]}"><th scope="row">{esc(names[s["code"]])}'
                    f"</th>{cells}</tr>")
    hc = game["hold_and_cash"]
    heads = "".join(f'<th scope="col">{fill(texts["ptOf"], {"n": n})}</th>' for n in (3, 4, 5))
    coin = fill(texts["coinRule"], {"sw": game["star_wild_coins"],
                                    "hc": game["hold_and_cash_coins"]})
    lines = "".join(f"<li>{i + 1}: {' '.join(str(r + 1) for r in rows_)}</li>"
                    for i, rows_ in enumerate(game["lines"]))
    pool = has_pool(game)
    jackpot = (f"<p><b>{esc(names['JACKPOT'])}</b> – {texts['jackpotRule']}</p>\n"
               if pool else "")
    prizes = (f"<b>MINOR</b> {hc['minor']}× · <b>MAJOR</b> {hc['major']}× · <b>MEGA</b> "
              f"{hc['mega']}×" if pool and hc.get("prize_names") != "multiplier" else
              f"<b>×{hc['minor']}</b> · <b>×{hc['major']}</b> · <b>{texts['prizeFullScreen']}"
              f"</b> {hc['mega']}×")
    return (f"<p>{fill(texts['ptIntro'], {'bet': format_cents(line_bet, lang)})}</p>\n"
            f'<table class="paytable"><thead><tr><th scope="col">{texts["ptSymbol"]}</th>'
            f"{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table>\n"
            f"<p>{texts['wildRule' if pool else 'wildRuleNoPool']}</p>\n"
            f"<p><b>{esc(names['COIN'])}</b> – "
            f"{coin}</p>\n{jackpot}"
            f"<p>{prizes} · CASH {'/'.join(map(str, hc['cash_values']))}× "
            f"{texts['totalBetWord']} ("
            f"{format_cents(line_bet * game['line_count'], lang)})</p>\n"
            f"<h3>{texts['linesTitle']}</h3>\n<ol class=\"lines\">{lines}</ol>")


def render(model: MathModel, path: Path = I18N_JS,
           market: MarketProfile | None = None) -> dict[str, dict[str, str]]:
    """Per language: ``html`` (a page with the rules and the paytable as the client shows
    them, at the smallest line bet) and ``text`` (the same as plain text)."""
    from starfever.web.routes import game_data

    game = game_data(model, market)
    strings = client_strings(path)
    line_bet = min(game["bet_classes"])
    out: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        texts = worded(strings[lang], game["market"]["name"])
        template = texts["rulesHtml" if has_pool(game) else "rulesHtmlNoPool"]
        rules = fill(template, rules_values(game, texts, lang, line_bet)).strip()
        table = paytable_html(game, texts, lang, line_bet)
        title = f"Star Fever — {texts['paytable']} &amp; {texts['rules']}"
        page = (f'<!doctype html>\n<html lang="{lang}"><head><meta charset="utf-8">'
                f"<title>{title}</title></head><body>\n<h1>{title}</h1>\n"
                f"<p>Model {html.escape(model.name)} {html.escape(model.version)}, SHA-256 "
                f"{model.sha256}</p>\n<h2>{texts['rules']}</h2>\n{rules}\n"
                f"<h2>{texts['paytable']}</h2>\n{table}\n</body></html>\n")
        out[lang] = {"html": page, "text": as_text(page)}
    return out


def as_text(page: str) -> str:
    """An HTML page as plain text, a paragraph or heading a line."""
    body = page.split("<body>", 1)[-1]
    body = re.sub(r"</(p|h1|h2|h3|tr|li|table)>", "\n", body)
    body = re.sub(r"<(td|th)[^>]*>", " ", body)
    body = re.sub(r"<[^>]+>", "", body)
    lines = [" ".join(html.unescape(line).split()) for line in body.splitlines()]
    return "\n".join(line for line in lines if line) + "\n"
