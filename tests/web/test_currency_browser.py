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
    game.page.wait_for_function("document.querySelector('#pool-amount').textContent"
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
