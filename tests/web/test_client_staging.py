"""Issue 38, point 2: the staged shows and the sound. The Mega and a big €€€ share are shown in
three acts (intro, count-up, final sting); Skip, Space, Collect and Spin only speed a show up,
none cuts it short or starts a round under it. Sound stays off until turned on; under reduced
motion it has no music bed, no ticks and only short stings. One page for the module, at a pace
(``?speed=0.3``) where a show lasts long enough to be pressed during."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from starfever.engine.model import MathModel
from tests.harness import Server
from tests.web import forcing
from tests.web.browser import ConsoleWatch
from tests.web.conftest import Game

pytestmark = pytest.mark.browser

ACTS = "window.starfever.celebration.acts"
OPEN = "!document.querySelector('#celebrate').hidden"


@pytest.fixture(scope="module")
def game(browser: Any, server: Server) -> Iterator[Game]:
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    started = Game(page, server, watch)
    started.new_player(40_000, speed=0.3)
    yield started
    context.close()
    assert watch.errors == [], f"the page logged errors: {watch.errors}"


def _hurried_show(game: Game, kind: str, press: str) -> tuple[list[str], float]:
    """Wait for the show ``kind`` to be in its intro, press ``press`` ("spin": a click on Spin,
    "space", "collect") and then Spin once more; return its acts and how long it ran on."""
    page = game.page
    page.wait_for_function(f"{OPEN} && document.querySelector('#celebrate').dataset.kind === "
                           f"'{kind}' && {ACTS}.includes('intro')", timeout=30_000)
    rounds = page.evaluate("window.starfever.rounds")
    pressed = time.monotonic()
    if press == "collect":  # the show's own button has the focus
        assert page.evaluate("document.activeElement.id") == "cel-close"
        page.keyboard.press("Enter")
    elif press == "space":
        page.keyboard.press("Space")
    # Spin under the show (its keyboard shortcut, or a script's click): the stop button only
    page.evaluate("document.querySelector('#spin').click()")
    assert page.evaluate(OPEN)  # never cut short
    page.wait_for_function(f"!({OPEN})", timeout=30_000)
    ran_on = time.monotonic() - pressed
    game.wait_idle()
    assert page.evaluate("window.starfever.rounds") == rounds  # no round started under it
    shows: list[dict[str, Any]] = page.evaluate("window.starfever.celebration.shows")
    acts: list[str] = next(s["acts"] for s in shows if s["kind"] == kind)  # a big win may follow
    return acts, ran_on


def test_the_mega_show_is_staged_and_skip_only_speeds_it_up(game: Game,
                                                           model: MathModel) -> None:
    page = game.page
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 1)] * 10]))
    page.click("#spin")
    acts, ran_on = _hurried_show(game, "mega", "space")
    assert acts == ["intro", "count", "sting"]  # every act seen, in order
    assert ran_on < 9.0 * 0.3  # faster than the whole show at this pace
    mega = next(s for s in game.log() if s["kind"] == "mega")
    assert mega["celebration"]["kind"] == "mega"
    assert mega["celebration"]["amount"] == 1000 * page.evaluate(
        "window.starfever.state.lastRound.total_bet")
    # the Skip button during the feature (before the show) speeds up as well, never skips it
    # (the round's big win after the Mega is staged too: it has no intro of its own)
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 1)] * 10]))
    page.click("#spin")
    page.wait_for_selector("#skip:not([hidden])")
    page.click("#skip")
    game.wait_idle()
    shows = page.evaluate("window.starfever.celebration.shows")
    assert shows[0] == {"kind": "mega", "acts": ["intro", "count", "sting"]}, shows
    assert all(s["acts"][-2:] == ["count", "sting"] for s in shows[1:]), shows


def test_the_pool_show_is_staged_and_collect_only_speeds_it_up(game: Game,
                                                              model: MathModel) -> None:
    page = game.page
    game.force(forcing.jackpot_draws(model))
    page.click("#spin")
    acts, _ = _hurried_show(game, "jackpot", "collect")
    assert acts == ["intro", "count", "sting"]
    shown = next(s for s in game.log() if s["kind"] == "jackpot")
    share = next(e for e in page.evaluate("window.starfever.state.lastRound.events")
                 if e["type"] == "jackpot")
    assert shown["celebration"]["kind"] == "jackpot"
    assert shown["celebration"]["amount"] == share["win"]
    assert game.cents("#cel-amount") == share["win"]  # it ended on the amount


def test_sound_under_reduced_motion_has_no_bed_and_only_short_stings(
        game: Game, model: MathModel) -> None:
    page = game.page
    assert page.evaluate("window.starfever.sound.on") is False  # off until turned on
    assert page.evaluate("window.starfever.sound.context") is None
    page.emulate_media(reduced_motion="reduce")
    page.click("#sound-toggle")
    try:
        game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5],
                                               [[("CASH", 2), ("UPGRADE", 0)], []]))
        game.spin(timeout=60_000)
        played: list[str] = page.evaluate("window.starfever.sound.played")
        assert played and all(cue.endswith(":short") for cue in played), played
        assert "hcIntro:short" in played and "coin:short" in played
        assert not any(cue.startswith(("bed:", "tick", "anticipate")) for cue in played)
        page.emulate_media(reduced_motion="no-preference")
        game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 2)], []]))
        game.spin(timeout=60_000)
        played = page.evaluate("window.starfever.sound.played")
        assert "bed:feature" in played and "hcIntro" in played  # the bed comes back
    finally:
        page.emulate_media(reduced_motion="no-preference")
        page.click("#sound-toggle")
