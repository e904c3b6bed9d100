"""Issue 38, point 1: Spin is the stop button (slam stop), it never places a second bet, a
final win's lines are presented after the round so Spin is back at once and the next Spin cuts
them short. One page per module; the page's ``?speed=`` keeps it fast."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from starfever.engine.model import MathModel
from tests.harness import Server
from tests.web import forcing
from tests.web.browser import ConsoleWatch
from tests.web.conftest import Game

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def game(browser: Any, server: Server) -> Iterator[Game]:
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    started = Game(page, server, watch)
    started.new_player(20_000, speed=0.5)
    yield started
    context.close()
    assert watch.errors == [], f"the page logged errors: {watch.errors}"


def test_spin_is_the_stop_button_and_places_one_bet(game: Game, model: MathModel) -> None:
    page = game.page
    token = game.server.login(game.username)
    before = len(game.server.call("GET", "/rounds?limit=50", token).json()["rounds"])
    game.force(forcing.line_win_draws(model))
    # two presses in one go (the page cannot end the round between them): a round, then Stop
    label = page.evaluate("""() => { const spin = document.querySelector('#spin');
        spin.click();
        const during = [spin.disabled, spin.textContent.trim().toLowerCase()];
        spin.click();
        return during; }""")
    assert label == [False, "stop"]
    game.wait_idle(timeout=10_000)
    after = game.server.call("GET", "/rounds?limit=50", token).json()["rounds"]
    assert len(after) == before + 1
    assert [s["kind"] for s in game.log()][:2] == ["reveal", "lines"]  # still shown
    assert game.text("#spin").lower() == "spin"


def test_a_final_win_is_presented_after_the_round_and_the_next_spin_cuts_it(
        game: Game, model: MathModel) -> None:
    page = game.page
    game.force(forcing.line_win_draws(model))
    won = game.spin()
    lines = [e["line"] for e in won["events"] if e["type"] == "line_win"]
    assert len(lines) >= 2
    # Spin is back while the lines are shown one by one
    page.wait_for_function("() => document.querySelector('#paylines').dataset.focus")
    assert not page.is_disabled("#spin")
    text = game.text("#win-line")  # every line named, none left out
    assert all(f"Line {n}:" in text for n in lines) or all(str(n) in text for n in lines)
    game.force(forcing.no_win_draws(model))
    game.spin()
    assert page.evaluate("document.querySelector('#paylines').dataset.focus") is None


def test_skip_speeds_a_feature_up_and_never_leaves_it_out(game: Game, model: MathModel) -> None:
    page = game.page
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 2)], []]))
    page.click("#spin")
    page.click("#skip")  # at once, before the answer
    game.wait_idle(timeout=20_000)
    round_ = page.evaluate("window.starfever.state.lastRound")
    kinds = [s["kind"] for s in game.log()]
    respins = [e for e in round_["events"] if e["type"] == "respin"]
    assert kinds[:3] == ["reveal", "feature", "hc_start"]
    assert kinds.count("hc_respin") == len(respins) and "hc_end" in kinds


def test_sound_plays_its_cues_ticks_and_the_feature_bed(game: Game, model: MathModel) -> None:
    """Issue 38, point 2: generated sound, once turned on: reel stops, count-up ticks, the
    Hold & Cash sting, coins, boosters, and the music bed (the feature's during Hold & Cash)."""
    page = game.page
    page.click("#sound-toggle")
    try:
        # a win of 3 to 9 x the stake (line bets 60..180): celebrated, counted up, below a big win
        game.force(forcing.find_stops(model.base_reels, lambda _s, e: e.feature is None
                                      and not e.jackpot_lines and 60 <= e.line_factor <= 180))
        game.spin()
        played = page.evaluate("window.starfever.sound.played")
        assert {"stop", "win", "tick", "bed:base"} <= set(played)
        game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5],
                                               [[("CASH", 2), ("UPGRADE", 0)], []]))
        page.click("#spin")
        page.click("#skip")  # faster, every cue still played
        game.wait_idle(timeout=20_000)
        played = page.evaluate("window.starfever.sound.played")
        for cue in ("hcIntro", "bed:feature", "coin", "booster"):
            assert cue in played, cue
        assert "bed:base" in played[played.index("bed:feature"):]  # back after the feature
    finally:
        page.click("#sound-toggle")
