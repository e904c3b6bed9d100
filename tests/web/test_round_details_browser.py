"""Round details in Chromium (ADR 0060): the player's history links each round's signed
details page, and the page, rendered on the server, opens in a browser without a log-in,
styled by its own stylesheet under the Content-Security-Policy, and logs no error."""

from __future__ import annotations

from typing import Any

import pytest

from starfever.engine.model import MathModel
from tests.harness import Server
from tests.web import forcing
from tests.web.conftest import Game, game_on

pytestmark = pytest.mark.browser


def test_the_history_links_the_rounds_details_page_which_opens_without_a_log_in(
        game: Game, model: MathModel, browser: Any, server: Server) -> None:
    game.new_player(2_000)
    game.force(forcing.no_win_draws(model))
    played = game.spin()
    game.page.click("#open-history")
    link = game.page.locator("#history-list a.h-details")
    link.first.wait_for()
    assert link.count() == 1
    href = link.first.get_attribute("href")
    assert href == played["details_url"]
    assert href.startswith(f"/round-details/{played['id']}/")
    with game_on(browser, server, 1000, 800) as stranger:  # a fresh context: no session
        answer = stranger.page.goto(f"{server.url}{href}")
        assert answer is not None and answer.status == 200
        assert stranger.text("h1") == f"Round {played['id']}"  # the context is en-GB
        # the stylesheet loaded (the CSP allows no inline style): the page is laid out by it
        width = stranger.page.evaluate("getComputedStyle(document.body).maxWidth")
        assert width == "960px", width
        steps = stranger.page.locator("ol.steps > li")
        assert steps.count() == len(played["events"])
