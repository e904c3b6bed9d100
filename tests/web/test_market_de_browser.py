"""What a player sees in the ``de`` market (issue 37; ADR 0072, ADR 0075), in English and
German: no €€€ meter and no prize presented as a jackpot (the fixed prizes named by what they
pay), no bet above EUR 1.00, the panic button (asked once, then 24 hours without play, which
the server refuses too), and a page whose session a second log-in ended saying why. A real
``starfever serve --market de --model de`` (test mode, SQLite), Debian's Chromium."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from starfever.engine.model import load_model
from tests.harness import Databases, Server, expect, start_server
from tests.web import forcing
from tests.web.conftest import Game, game_on

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def de_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``starfever serve --market de --model de`` (test mode, SQLite)."""
    directory = tmp_path_factory.mktemp("de-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, args=("--market", "de", "--model", "de")) as started:
        yield started


@pytest.fixture
def de_game(browser: Any, de_server: Server) -> Iterator[Game]:
    with game_on(browser, de_server, 1366, 768) as started:
        yield started


def _labels(game: Game) -> list[str]:
    return [text.strip() for text in game.page.locator("#hc-pays dt").all_inner_texts()]


def test_no_jackpot_meter_and_prizes_named_by_multiplier_in_english_and_german(
        de_game: Game) -> None:
    game = de_game
    game.new_player(5_000)
    page = game.page
    assert not page.locator(".jackpots .pool").is_visible()  # no €€€ meter
    assert _labels(game) == ["×20", "×200", "Full screen"]
    top = game.text(".topbar") + game.text("#marquee")
    assert "€€€" not in top and "JACKPOT" not in top.upper() and "MEGA" not in top.upper()
    # what each prize pays at the smallest bet (EUR 0.20): 20, 200 and 1000 x the total bet
    assert [game.cents(f"#pays-{k}") for k in ("minor", "major", "mega")] == [400, 4_000,
                                                                               20_000]
    # at most EUR 1.00 a game: the bet stops at line bets of 5 cents
    while page.is_enabled("#bet-up"):
        page.click("#bet-up")
    assert game.cents("#total-bet") == 100
    page.click('.topbar [data-lang="de"]')
    assert _labels(game) == ["×20", "×200", "Vollbild"]
    assert game.text("#marquee") == "20 GEWINNLINIEN · STAR WILD · HOLD & CASH"
    page.click("#open-paytable")
    paytable = game.text("#paytable-body")
    page.click("#dlg-paytable [data-close]")
    assert "€€€" not in paytable and "MINOR" not in paytable and "Vollbild" in paytable
    # nor does the rules tab name a pool or a jackpot, in either language (ADR 0077)
    for lang in ("de", "en"):
        page.click(f'.topbar [data-lang="{lang}"]')
        page.click("#open-paytable")
        page.click("#tab-rules")
        rules = game.text("#rules-body")
        page.click("#dlg-paytable [data-close]")
        assert "Star Wild" in rules and not re.search(r"€€€|jackpot|\bpool", rules, re.I), rules


def test_the_hold_and_cash_board_names_the_prizes_by_multiplier(de_game: Game) -> None:
    """The board's MINOR and MAJOR cells say what they pay ("×20", "×200"), never MINOR,
    MAJOR, MEGA or jackpot, in the board, its labels for screen readers and the texts."""
    game = de_game
    game.new_player(5_000)
    model = load_model("de")
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5],
                                           [[("MINOR", 0)], [("MAJOR", 0)], []]))
    round_ = game.spin()
    kinds = {c["kind"] for e in round_["events"] if e["type"] == "respin" for c in e["landed"]}
    assert {"MINOR", "MAJOR"} <= kinds
    boards = [cell for scene in game.log() for cell in scene.get("board", [])]
    assert any(cell.endswith(":MINOR:×20") for cell in boards), boards
    assert any(cell.endswith(":MAJOR:×200") for cell in boards), boards
    shown = game.page.evaluate("""() => [...document.querySelectorAll('#hc-grid .hc-cell')]
        .map(c => (c.querySelector('.hc-label')?.textContent || '') + ' '
                  + (c.getAttribute('aria-label') || '')).join(' ')""")
    words = shown + game.text("#win-line") + game.text(".topbar")
    assert "×20" in shown and "×200" in shown
    for word in ("MINOR", "MAJOR", "MEGA", "JACKPOT", "€€€"):
        assert word not in words.upper(), (word, words)


def test_the_panic_button_asks_once_then_excludes_for_24_hours(de_game: Game) -> None:
    game = de_game
    name = game.new_player(5_000)
    page = game.page
    page.click('.topbar [data-lang="en"]')
    page.click("#panic")
    dialog = page.locator("#dlg-panic")
    assert dialog.is_visible()
    assert "24 hours" in game.text("#dlg-panic") and "cannot be lifted early" in game.text(
        "#dlg-panic")
    page.click("#panic-cancel")  # the first press only asks
    assert not dialog.is_visible() and page.is_enabled("#spin")
    page.click('.topbar [data-lang="de"]')
    page.click("#panic")
    assert "24 Stunden" in game.text("#dlg-panic")
    page.click("#panic-confirm")
    notice = game.wait_text("#exclusion-notice", "ausgeschlossen")
    assert notice and not page.is_enabled("#spin")
    # the server refuses the player too (a deposit here; a bet the same way)
    refused = game.server.call("POST", f"/players/{name}/deposits", game.server.operator_token,
                               json={"amount": 100},
                               headers={"Idempotency-Key": uuid.uuid4().hex})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "self_excluded"


def test_a_second_log_in_ends_the_page_session_with_a_clear_message(de_game: Game) -> None:
    game = de_game
    name = game.new_player(5_000)
    game.page.click('.topbar [data-lang="en"]')
    other = game.server.login(name)  # the same player elsewhere: the page's session ends
    game.page.click("#spin")
    message = game.wait_text("#auth-error", "elsewhere")
    assert "one session at a time" in message
    expect(game.server.call("GET", "/wallet", other), 200)  # the second session plays on
