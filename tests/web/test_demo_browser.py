"""Demo play and the operator's controls in the browser (ADR 0066, 0067), on the session's
real server (ledger mode, market ``at``): "Play for fun" plays with DEMO on screen at all
times; a spin refused for maintenance tells the player so in their language and is not kept
to be sent again; a session the operator ended says so."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from starfever.server.services import demo
from tests.harness import Server, expect
from tests.web.conftest import Game, game_on

pytestmark = pytest.mark.browser


@pytest.fixture
def game(browser: Any, server: Server) -> Iterator[Game]:
    with game_on(browser, server, 1366, 768) as made:
        yield made
    assert made.watch.errors == [], made.watch.errors


def _maintenance(server: Server, on: bool) -> None:
    expect(server.call("PUT", "/operator/maintenance", server.operator_token, json={
        "maintenance": on, "reason": "browser test", "retry_after_seconds": 30}), 200)


def test_play_for_fun_shows_demo_at_all_times(game: Game) -> None:
    game.open()
    page = game.page
    assert not page.is_visible("#demo-badge")
    page.click("#play-demo")
    page.wait_for_selector("#game:not([hidden])")
    assert page.is_visible("#demo-badge") and "DEMO" in game.text("#demo-badge")
    assert game.cents("#balance") == demo.DEMO_BALANCE
    for _ in range(3):
        played = game.spin()
        assert played["demo"] is True
        assert page.is_visible("#demo-badge")
        assert game.cents("#balance") == played["balance_after"]
    page.locator("[data-lang=de]:visible").first.click()
    assert "Spielgeld" in game.text("#demo-badge")
    page.reload()  # still demo play, still on screen
    page.wait_for_function("() => window.starfever.ready")
    page.wait_for_selector("#game:not([hidden])")
    assert page.is_visible("#demo-badge") and "DEMO" in game.text("#demo-badge")


def test_maintenance_is_told_in_the_players_language(game: Game) -> None:
    game.new_player(5_000)
    page = game.page
    game.watch.allow("status of 503")  # the refusals this test provokes
    _maintenance(game.server, True)
    try:
        page.click("#spin")
        assert "maintenance" in game.wait_text("#status", "maintenance")
        game.wait_idle()
        assert page.evaluate("localStorage.getItem('sf.spinInFlight')") is None  # not kept
        page.locator("[data-lang=de]:visible").first.click()
        page.click("#spin")
        assert "gewartet" in game.wait_text("#status", "gewartet")
        game.wait_idle()
    finally:
        _maintenance(game.server, False)
    played = game.spin()
    assert played["total_bet"] == 20


def test_a_terminated_session_says_the_operator_ended_it(game: Game) -> None:
    name = game.new_player(5_000)
    game.spin()
    expect(game.server.call("POST", f"/operator/players/{name}/terminate",
                            game.server.operator_token, json={"reason": "browser test"}), 200)
    game.page.click("#spin")
    assert "operator ended" in game.wait_text("#auth-error", "operator ended")
    assert game.page.is_visible("#auth")
