"""What a GBP player sees (issue 37, ADR 0076): every amount in pounds, in English and German,
from the session's currency (Intl.NumberFormat), the bet picker on the GBP ladder, the GBP
pool's meter; an EUR player of the same installation still sees euros. A real
``starfever serve --currency EUR,GBP`` (test mode, SQLite), Debian's Chromium."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness import Databases, Server, expect, start_server
from tests.web.conftest import Game, game_on

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def two_currencies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("currency-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, args=("--currency", "EUR,GBP")) as started:
        yield started


@pytest.fixture
def game(browser: Any, two_currencies: Server) -> Iterator[Game]:
    with game_on(browser, two_currencies, 1366, 768) as started:
        yield started


def _player(game: Game, currency: str, cents: int) -> str:
    name = f"cur{uuid.uuid4().hex[:12]}"
    game.server.register(name, currency=currency)
    game.server.deposit(name, cents)
    game.login(name)
    return name


def test_a_gbp_player_sees_pounds_everywhere(game: Game) -> None:
    _player(game, "GBP", 12_345)
    assert game.text("#balance") == "£123.45"
    assert game.text("#total-bet") == "£0.20"
    game.page.wait_for_function("() => document.querySelector('#pool-amount').textContent"
                                ".includes('£')")
    pool = expect(game.server.call("GET", "/jackpot?currency=GBP"), 200).json()["pool"]
    assert game.text("#pool-amount") == f"£{pool / 100:,.2f}"
    game.page.click("#bet-up")
    assert game.text("#total-bet") == "£0.40"
    round_ = game.spin()
    assert round_["total_bet"] == 40
    page_text = game.page.inner_text("#game")
    assert "€" not in page_text.replace("€€€", "")  # the jackpot's name is "€€€" in any currency
    game.page.click('#game [data-lang="de"]')
    assert game.text("#balance").endswith("\u00a0£") and "," in game.text("#balance")


def test_an_eur_player_of_the_same_installation_sees_euros(game: Game) -> None:
    _player(game, "EUR", 500)
    assert game.text("#balance") == "€5.00"
    assert game.page.evaluate("window.starfever.lib.formatCents(-250, 'en', 'GBP')") == "−£2.50"
    assert game.page.evaluate("window.starfever.lib.formatCents(123456789, 'de')") == (
        "1.234.567,89\u00a0€")


def test_the_rules_state_the_pool_share_and_the_deposit_limit_in_pounds(game: Game) -> None:
    """The rules tab's €€€ share ("line bet / 1.00") and the deposit limit's field name the
    session's currency, never euros (ADR 0078)."""
    _player(game, "GBP", 1_000)
    page = game.page
    page.click("#open-paytable")
    assert "£0.01" in game.text("#paytable-body")
    page.click("#tab-rules")
    rules = game.text("#rules-body")
    assert "line bet / £1.00 (£0.01 → 1 %, £1.00 → 100 %)" in rules
    assert "€" not in rules.replace("€€€", "")
    page.click('#dlg-paytable [data-lang="de"]')
    assert "Linieneinsatz / 1,00\u00a0£ (0,01\u00a0£ → 1 %" in game.text("#rules-body")
    page.click('#dlg-paytable [data-lang="en"]')
    page.keyboard.press("Escape")
    page.click("#open-protection")
    page.wait_for_selector('[data-testid="limit-now"]')
    assert game.text("#limit-currency") == "GBP"


def test_the_back_office_shows_one_currency_at_a_time_and_rounds_in_their_own(
        browser: Any, two_currencies: Server) -> None:
    """The meters page's currency picker: the pool, RTP rows and daily lines of the currency
    chosen, in its money, never a sum of two; a GBP round's recall in pounds (ADR 0078)."""
    import pyotp

    from tests.harness import OPERATOR_PASSWORD, create_operator
    from tests.web.browser import backoffice_log_in

    server = two_currencies
    name = f"bo{uuid.uuid4().hex[:10]}"
    secret = create_operator(server.database_url, name)
    gbp_name, gbp = server.player(deposit=5_000, currency="GBP")
    spun = expect(server.spin(gbp, line_bet=3), 201).json()["round"]
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    try:
        page.goto(f"{server.url}/operator")
        page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
        backoffice_log_in(page, name, OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
        page.wait_for_selector("#shell:not([hidden])")
        page.click("[data-testid=tab-meters]")
        page.wait_for_selector("#page-meters:not([hidden])")
        page.wait_for_function("() => document.querySelectorAll('#m-currency option').length == 2")
        assert page.input_value("#m-currency") == "EUR"
        assert page.inner_text("#pool-facts dd[data-fact='Pool now']").startswith("€")
        assert page.locator("#rtp-body tr[data-line-bet='3']").count() == 0  # no EUR round at 3
        page.select_option("#m-currency", "GBP")
        page.click("[data-testid=m-load]")
        page.wait_for_function("() => document.querySelector(\"#pool-facts dd[data-fact='Pool "
                               "now']\").textContent.startsWith('£')")
        row = page.locator("#rtp-body tr[data-line-bet='3']")
        assert row.count() == 1 and "£0.03" in row.inner_text()
        page.click("[data-testid=tab-rounds]")
        page.wait_for_selector("#page-rounds:not([hidden])")
        page.fill("[data-testid=rs-id]", str(spun["id"]))
        page.click("[data-testid=rs-search]")
        page.click(f"#rounds-body [data-recall='{spun['id']}']")
        page.wait_for_selector("#recall:not([hidden])")
        facts = page.inner_text("#recall-facts")
        assert "market at · GBP" in facts and "total bet £0.60" in facts and "€0.60" not in facts
        # the cashier books in the wallet's currency, read by its exponent
        page.click("[data-testid=tab-cashier]")
        page.fill("[data-testid=cash-user]", gbp_name)
        page.fill("[data-testid=cash-amount]", "12.50")
        page.click("[data-testid=cash-deposit]")
        page.wait_for_function("() => document.querySelector('[data-testid=cash-result]')"
                               ".textContent.startsWith('Deposited')")
        result = page.inner_text("[data-testid=cash-result]")
        assert "Deposited £12.50" in result and "€" not in result, result
        assert server.balance(gbp) == 5_000 - 60 + spun["total_win"] + 1_250
        page.fill("[data-testid=cash-amount]", "0.001")
        page.click("[data-testid=cash-deposit]")
        page.wait_for_function("() => document.querySelector('[data-testid=cash-result]')"
                               ".textContent.startsWith('Enter an amount in GBP')")
    finally:
        context.close()


def test_the_round_search_and_free_rounds_pages_name_each_amounts_currency(
        browser: Any, two_currencies: Server) -> None:
    """The round search's "win at least" is in the currency picked (its label says which; none
    picked with two served: refused, nothing asked); the free-rounds page shows a GBP player's
    grant in pounds and an EUR one's in euros (ADR 0078)."""
    import pyotp

    from tests.harness import OPERATOR_PASSWORD, create_operator
    from tests.web.browser import backoffice_log_in

    server = two_currencies
    name = f"bo{uuid.uuid4().hex[:10]}"
    secret = create_operator(server.database_url, name)
    gbp_name, gbp = server.player(deposit=5_000, currency="GBP")
    eur_name, _ = server.player(deposit=5_000, currency="EUR")
    spun = expect(server.spin(gbp, line_bet=4), 201).json()["round"]
    for player, code in ((gbp_name, "GBP"), (eur_name, "EUR")):
        expect(server.call("POST", "/operator/free-rounds/grants", server.operator_token, json={
            "grant_id": f"g-{code}-{player}", "player_id": player, "rounds": 2,
            "line_bet": 5}), 201)
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    try:
        page.goto(f"{server.url}/operator")
        page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
        backoffice_log_in(page, name, OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
        page.wait_for_selector("#shell:not([hidden])")
        page.click("[data-testid=tab-rounds]")
        page.wait_for_function("() => document.querySelectorAll('#rs-currency option')"
                               ".length == 3")
        assert page.inner_text("[data-testid=rs-min-label]") == \
            "Win at least (choose a currency)"
        page.fill("[data-testid=rs-player]", gbp_name)
        page.fill("[data-testid=rs-min]", "0")
        page.click("[data-testid=rs-search]")
        page.wait_for_function("() => document.querySelector('#status').textContent"
                               ".includes('currency_needed')")
        page.select_option("[data-testid=rs-currency]", "GBP")
        assert page.inner_text("[data-testid=rs-min-label]") == "Win at least (GBP)"
        page.click("[data-testid=rs-search]")
        page.wait_for_selector(f"#rounds-body tr[data-round='{spun['id']}']")
        assert "£0.80" in page.inner_text(f"#rounds-body tr[data-round='{spun['id']}']")
        page.select_option("[data-testid=rs-currency]", "EUR")
        page.click("[data-testid=rs-search]")
        page.wait_for_function("() => document.querySelector('#rounds-body').textContent"
                               ".includes('No round matches')")
        page.click("[data-testid=tab-freerounds]")
        page.wait_for_function("() => !document.body.dataset.loading")
        for player, code, symbol in ((gbp_name, "GBP", "£"), (eur_name, "EUR", "€")):
            row = page.locator(f"#fr-grants tr:has-text('g-{code}-{player}')")
            assert row.get_attribute("data-currency") == code
            cells = row.locator("td.num").all_inner_texts()
            assert cells[1] == f"{symbol}0.05", cells  # the line bet in the player's currency
    finally:
        context.close()
