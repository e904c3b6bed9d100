"""The rules and paytable in a certification bundle are what the browser shows players: the
server-side rendering (``starfever.certify.rules``) against the text Chromium shows in the
client's rules and paytable pages, in German and English, line by line."""

from __future__ import annotations

import html
import re

import pytest

from starfever.certify import rules
from starfever.conditions import render
from starfever.engine.model import MathModel
from starfever.markets import load_market
from starfever.web.routes import game_data
from tests.web.conftest import Game


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("lang", ["de", "en"])
def test_the_bundles_rules_are_the_ones_players_see(game: Game, model: MathModel,
                                                    lang: str) -> None:
    data = game_data(model)
    texts = rules.client_strings()[lang]
    line_bet = min(data["bet_classes"])
    ours = rules.fill(texts["rulesHtml"], rules.rules_values(data, texts, lang, line_bet))
    expected = _lines(rules.as_text(f"<body>{ours}</body>"))
    table = rules.paytable_html(data, texts, lang, line_bet)
    rows = {code: " ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split())
            for code, row in re.findall(r'<tr data-symbol="(\w+)">(.*?)</tr>', table)}
    game.new_player(0)  # the smallest line bet
    page = game.page
    page.click("#open-paytable")
    page.click(f'#dlg-paytable [data-lang="{lang}"]')
    shown_rows = {code: " ".join(page.locator(f'#paytable-body tr[data-symbol="{code}"]')
                                 .inner_text().split()) for code in rows}
    assert shown_rows == rows
    page.click("#tab-rules")
    assert _lines(game.text("#rules-body")) == expected
    assert len(expected) >= 12
    # beside the rules: the full game conditions of the running model, in the page's language
    link = page.locator("#conditions-a")
    assert link.is_visible()
    assert link.inner_text() == texts["conditionsLink"]
    href = link.get_attribute("href")
    assert href == f"/api/v1/game/conditions/{lang}"
    served = page.request.get(page.url.split("?")[0].rstrip("/") + href)
    assert served.status == 200
    # the running market's section included (the default market here: ADR 0077)
    assert served.text() == render(model, market=load_market("at"))[lang].html
    page.click("#tab-paytable")
    assert not link.is_visible()
