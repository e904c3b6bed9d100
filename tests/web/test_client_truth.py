"""Issue 38, points 3 and 4: a balance that is always right (re-read after a refusal, a deposit
shown within seconds, the newest round by id wins across tabs) and every refusal a translated,
plain sentence (never the API's text). One page per module, reused by every test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from starfever.engine.model import MathModel
from tests.harness import Server
from tests.web import forcing
from tests.web.browser import ConsoleWatch
from tests.web.conftest import FAST, Game

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def game(browser: Any, server: Server) -> Iterator[Game]:
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    yield Game(page, server, watch)
    context.close()
    assert watch.errors == [], f"the page logged errors: {watch.errors}"


def _player(game: Game, cents: int) -> str:
    """A new player on the module's page (the last one's session forgotten)."""
    if game.page.url.startswith("http"):
        game.page.evaluate("localStorage.clear()")
    return game.new_player(cents)


def _hide(game: Game, hidden: bool) -> None:
    """Make the page hidden or visible as a background tab is (no real tab switch in headless)."""
    game.page.evaluate("""h => { Object.defineProperty(document, 'hidden',
        { configurable: true, get: () => h });
        document.dispatchEvent(new Event('visibilitychange')); }""", hidden)


def test_a_refusal_reads_the_balance_again(game: Game, model: MathModel) -> None:
    """Another device spent the money: the page still shows the old balance until the server
    refuses a bet (insufficient_funds); then it shows the wallet's at once and says plainly
    that the balance is below the smallest bet (no deposit button it does not have)."""
    name = _player(game, 100)
    token = game.server.login(name)
    _hide(game, True)  # a background tab: no polling, only the refusal can tell the page
    spent = game.server.spin(token, 5, draws=forcing.no_win_draws(model))  # €1.00 elsewhere
    assert spent.status_code == 201
    assert game.cents("#balance") == 100  # not known yet
    game.page.click("#spin")
    game.wait_text("#status", "below the smallest bet")
    assert game.cents("#balance") == game.server.balance(token) == 0
    _hide(game, False)


def test_a_deposit_shows_within_seconds(game: Game) -> None:
    """A deposit at the cashier shows while the page is open: read every few seconds while
    the page is visible, and at once when it comes back to the front."""
    name = _player(game, 0)
    token = game.server.login(name)
    _hide(game, True)
    game.server.deposit(name, 2_500)
    game.page.wait_for_timeout(50)
    assert game.cents("#balance") == 0  # hidden: not read
    _hide(game, False)  # back to the front: read at once
    game.page.wait_for_function(
        "document.querySelector('#balance').dataset.cents === '2500'", timeout=2_000)
    game.server.deposit(name, 500)  # while visible: the short poll (5 s) shows it
    game.page.wait_for_function(
        "document.querySelector('#balance').dataset.cents === '3000'", timeout=7_000)
    assert game.server.balance(token) == 3_000


def test_the_newest_round_wins_across_tabs(game: Game, model: MathModel) -> None:
    """Two tabs: whichever animation ends last, both show the balance after the newest round
    (by round id), never an older round's."""
    name = _player(game, 5_000)
    token = game.server.login(name)
    other = game.page.context.new_page()
    watch = ConsoleWatch(other)
    other.goto(f"{game.server.url}/?speed={FAST}")
    other.wait_for_selector("#game:not([hidden])")
    game.page.wait_for_selector('[data-testid="tabs-notice"]:not([hidden])')
    # tab 1's round is settled first but plays on (held after its reveal); tab 2 plays a
    # newer round to its end meanwhile
    game.page.evaluate("window.starfever.holdAt = {kind: 'reveal'}")
    game.force(forcing.line_win_draws(model))
    game.page.click("#spin")
    game.page.wait_for_function("() => window.starfever.held")
    first = game.page.evaluate("window.starfever.state.lastRound")  # not this one yet
    other.evaluate("d => { window.starfever.nextTestDraws = d; }", forcing.no_win_draws(model))
    other.click("#spin")
    other.wait_for_function("() => window.starfever.rounds > 0 && !window.starfever.state.busy")
    newest = game.server.balance(token)
    game.page.evaluate("window.starfever.release()")
    game.wait_idle()
    assert game.page.evaluate("window.starfever.state.lastRound.id") != (first or {}).get("id")
    assert game.cents("#balance") == newest  # the older round's animation ended last
    other.wait_for_function(
        f"document.querySelector('#balance').dataset.cents === '{newest}'", timeout=3_000)
    other.close()
    assert watch.errors == []


def test_refusals_are_plain_sentences_in_both_languages(game: Game) -> None:
    """A validation error, a lock-out and an unknown code: never the API's own text."""
    page = game.page
    page.evaluate("localStorage.clear()")
    game.open()
    for lang, needle in (("en", "date of birth"), ("de", "Geburtsdatum")):
        page.click(f"#auth [data-lang={lang}]")
        page.click("#tab-signup")
        page.fill("#auth-username", "plainwords")
        page.fill("#auth-password", "a-long-password")
        page.evaluate("document.querySelector('#auth-birth').type = 'text'")
        page.fill("#auth-birth", "1.1.1990")  # not the pattern the API wants
        page.click("#auth-submit")
        shown = game.wait_text("#auth-error", needle)
        assert "pattern" not in shown and "String should" not in shown and "\\d" not in shown
    texts = page.evaluate("""async () => {
        const { errorText } = await import(document.querySelector('script[type=module]')
          .src.replace('app.js', 'errors.js'));
        const { ApiError } = await import(document.querySelector('script[type=module]')
          .src.replace('app.js', 'api.js'));
        const i18n = await import(document.querySelector('script[type=module]')
          .src.replace('app.js', 'i18n.js'));
        const out = {};
        for (const lang of ['de', 'en']) {
          i18n.setLanguage(lang);
          out[lang] = [
            errorText(new ApiError(409, 'debit_rolled_back',
              'the debit of this spin was rolled back; send a new Idempotency-Key')),
            errorText(new ApiError(429, 'too_many_attempts',
              'too many failed log-ins for this username; try again in 60 s',
              { retryAfter: 60 })),
            errorText(new ApiError(418, 'something_new', 'developer words')),
            errorText(new ApiError(503, 'wallet_unavailable',
              "the operator's wallet did not answer")),
          ];
        }
        return out;
    }""")
    assert texts["en"][0].startswith("Not played: your stake was not taken")
    assert texts["de"][0].startswith("Nicht gespielt: Ihr Einsatz wurde nicht abgebucht")
    assert "60" in texts["en"][1] and "60 Sekunden" in texts["de"][1]
    for lang in ("de", "en"):
        for text in texts[lang]:
            assert "Idempotency" not in text and "developer" not in text
            assert "failed log-ins" not in text
    page.click("#auth [data-lang=en]")
