"""What a player sees in the ``uk`` market (issue 37; ADR 0077), in English and German: the net
position and the elapsed session time on screen, British wording ("Stake", "Net position"), no
Turbo and no Skip, no celebration of a win at the stake, a bet ladder that stops at GBP 5 for an
adult and at GBP 2 for a 20-year-old (registered, and launched by an operator with her birth
date), and the rules stating both caps. A real ``starfever serve --market uk`` (test mode,
SQLite; in operator mode against the reference wallet), Debian's Chromium. Amounts are read in
minor units (``data-cents``), never by their currency symbol: the server serves EUR until the
currencies land and GBP after."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

from starfever.certify.rules import client_strings
from starfever.engine.model import load_model
from starfever.markets import load_market
from tests.harness import (
    Databases,
    OperatorWallet,
    Server,
    expect,
    operator_mode_args,
    operator_mode_env,
    signed_launch,
    start_server,
)
from tests.web import forcing
from tests.web.browser import ConsoleWatch
from tests.web.conftest import FAST, Game, game_on

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def uk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``starfever serve --market uk`` (test mode, SQLite, the default model)."""
    directory = tmp_path_factory.mktemp("uk-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, args=("--market", "uk")) as started:
        yield started


@pytest.fixture
def uk_game(browser: Any, uk_server: Server) -> Iterator[Game]:
    with game_on(browser, uk_server, 1366, 768) as started:
        yield started


def _player(game: Game, age: int, cents: int) -> str:
    """A player of ``age`` whole years (registered through the API), paid in, logged in."""
    today = game.server.now().date()
    born = date(today.year - age, 1, 1) if today.month > 1 or today.day > 1 \
        else date(today.year - age - 1, 6, 1)
    name = f"uk{age}{today.toordinal() % 1000}{id(game) % 100000}"
    game.server.register(name, birth_date=born.isoformat())
    game.server.deposit(name, cents)
    game.login(name, speed=FAST)
    return name


def _top_bet(game: Game) -> int:
    page = game.page
    for _ in range(12):
        if not page.is_disabled("#bet-up"):
            page.click("#bet-up")
    assert page.is_disabled("#bet-up")
    return game.cents("#total-bet")


def test_a_20_year_olds_ladder_stops_at_200_and_an_adults_at_500(browser: Any,
                                                                 uk_server: Server) -> None:
    with game_on(browser, uk_server, 1366, 768) as young:
        _player(young, 20, 5_000)
        assert young.page.evaluate("window.starfever.state.game.market") == load_market(
            "uk").public()
        assert _top_bet(young) == 200  # GBP 2 for players aged 18-24
        young.page.click("#bet-pick")  # the bet picker offers no more either
        offered = young.page.locator("#bet-grid [data-bet-index]").count()
        assert offered == 6  # total bets of 20, 40, 60, 80, 100 and 200
        young.page.keyboard.press("Escape")
    with game_on(browser, uk_server, 1366, 768) as adult:
        _player(adult, 40, 5_000)
        assert _top_bet(adult) == 500  # GBP 5 a spin


def test_the_uk_market_in_the_browser(uk_game: Game) -> None:
    game = uk_game
    page = game.page
    model = load_model("default")
    _player(game, 30, 20_000)
    page.click('.topbar [data-lang="en"]')
    assert not page.is_visible(".turbo")  # no Turbo
    assert game.text(".meter-label[data-i18n='bet']").upper() == "STAKE"  # British wording
    # a win equal to the stake: shown, not celebrated
    game.force(forcing.find_stops(model.base_reels, lambda _s, e: e.feature is None
                                  and not e.jackpot_lines and e.line_factor == 20))
    page.click("#spin")
    page.wait_for_timeout(300)
    assert not page.is_visible("#skip")  # no slam stop
    page.locator("body").press("Space")  # nor by the keyboard
    game.wait_idle(timeout=10_000)
    first = page.evaluate("window.starfever.state.lastRound")
    assert first["total_win"] == first["total_bet"]
    end = game.log()[-1]
    assert end["kind"] == "end" and end["glow"] is False and end["celebration"] is None
    # the net position and the elapsed session time are on screen, in British English
    assert game.cents("#net-position") == 0
    assert game.text("#net-position").startswith("Net position")
    inside = page.evaluate("""() => ['#net-position', '#session-clock'].map(sel => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight && r.height > 8; })""")
    assert inside == [True, True]
    # the rules state the caps and the presentation, in English and in German
    page.click("#open-paytable")
    page.click("#tab-rules")
    rules = game.text("#rules-body")
    assert re.search(r"Maximum stake \D*5\.00\D* a spin\. Players under 25 may stake at most "
                     r"\D*2\.00\D* a spin\.", rules), rules
    assert "A win at or below the stake is not celebrated." in rules
    assert "No Turbo." in rules and "cannot be cut short (no slam stop)" in rules
    assert "Every game cycle lasts at least 2.5 seconds." in rules
    assert "The elapsed session time and your net position are always on screen." in rules
    page.click("#dlg-paytable [data-close]")
    page.click('.topbar [data-lang="de"]')
    assert game.text(".meter-label[data-i18n='bet']").upper() == "EINSATZ"
    page.click("#open-paytable")
    page.click("#tab-rules")
    rules = game.text("#rules-body")
    assert re.search(r"Für Spieler unter 25 Jahren höchstens 2,00\D* pro Runde", rules), rules
    assert "Ein Gewinn bis zur Höhe des Einsatzes wird nicht gefeiert." in rules
    assert "2,5 Sekunden" in rules


def test_every_text_is_in_german_and_english_and_the_refusals_read_plainly(
        uk_game: Game) -> None:
    texts = client_strings()
    # every message in both languages (``KEY__uk``: British words for a KEY both have)
    assert set(texts["de"]) == {k for k in texts["en"] if "__" not in k}
    assert all(k.split("__")[0] in texts["de"] for k in texts["en"])
    for key in ("err_stake_above_age_limit", "err_birth_date_required", "marketYoungCap",
                "marketNoCelebration", "rulesHtmlNoPool"):
        assert texts["de"][key] and texts["en"][key], key
    uk_game.open()
    shown = uk_game.page.evaluate("""async () => {
        const src = document.querySelector('script[type=module]').src;
        const { errorText } = await import(src.replace('app.js', 'errors.js'));
        const { ApiError } = await import(src.replace('app.js', 'api.js'));
        const i18n = await import(src.replace('app.js', 'i18n.js'));
        const out = {};
        for (const lang of ['de', 'en']) {
          i18n.setLanguage(lang);
          out[lang] = ['stake_above_age_limit', 'birth_date_required'].map(
            (code) => errorText(new ApiError(422, code, 'developer words')));
        }
        return out; }""")
    assert shown["en"][0].startswith("This stake is above the limit for your age")
    assert shown["de"][0].startswith("Dieser Einsatz liegt über der Grenze für Ihr Alter")
    assert "date of birth" in shown["en"][1] and "Geburtsdatum" in shown["de"][1]


def test_a_launched_20_year_old_is_offered_stakes_up_to_200(
        browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Operator mode: the cap comes from the launch's ``birth_date`` (the reference wallet
    and the server both real processes)."""
    directory = tmp_path_factory.mktemp("uk-operator-web")
    wallet = OperatorWallet(directory)
    try:
        with Databases(directory / "db") as databases, start_server(
                databases, "sqlite", directory, operator_mode_env(wallet),
                args=("--market", "uk", *operator_mode_args(wallet))) as server:
            wallet.player("uk-web-20", 10_000)
            today = server.now().date()
            answer = expect(signed_launch(
                server, wallet.secret, "uk-web-20", market="uk", currency="GBP", language="en",
                birth_date=f"{today.year - 20}-01-01"), 200).json()
            context = browser.new_context(viewport={"width": 1366, "height": 768},
                                          locale="en-GB")
            page = context.new_page()
            watch = ConsoleWatch(page)
            game = Game(page, server, watch)
            page.goto(f"{answer['url']}&speed={FAST}")
            page.wait_for_function("() => window.starfever && window.starfever.ready")
            page.wait_for_selector("#game:not([hidden])")
            assert _top_bet(game) == 200
            assert game.text(".meter-label[data-i18n='bet']").upper() == "STAKE"
            assert game.text("#balance").startswith("£")  # the launch's GBP, in pounds
            context.close()
            assert watch.errors == []
    finally:
        wallet.stop()
