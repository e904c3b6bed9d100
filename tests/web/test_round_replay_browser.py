"""The round details page's replay in Chromium (ADR 0060): opened from its signed address with
no session, Play replays the stored round with the player client's own modules (reels, Star
Wild respin, Hold & Cash board with boosters and MINOR/MAJOR), which end on the round's final
state as stored, in the page's language, under the server's Content-Security-Policy (a
violation is a console error, and any fails the test); with scripts off the facts stand."""

from __future__ import annotations

from typing import Any

import pytest

from starfever.engine.model import MathModel
from tests.harness import Server, expect
from tests.web import forcing
from tests.web.conftest import FAST, Game, game_on

pytestmark = pytest.mark.browser


def _euro(cents: int, lang: str) -> str:
    whole, part = divmod(cents, 100)
    if lang == "de":
        return f"{whole:,}".replace(",", ".") + f",{part:02d}\u00a0€"
    return f"€{whole:,}.{part:02d}"


def _events(round_: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in round_["events"] if e["type"] == kind]


def _played(server: Server, draws: list[int]) -> dict[str, Any]:
    """A round forced through the API (no page plays it), as the recall API has it."""
    _, token = server.player(5_000)
    spun = expect(server.spin(token, draws=draws), 201).json()["round"]
    return dict(expect(server.call("GET", f"/rounds/{spun['id']}", token), 200).json())


def _replayed(stranger: Game, round_: dict[str, Any], lang: str) -> None:
    """Open the round's details page (a fresh context: no session), press Play, wait."""
    page = stranger.page
    answer = page.goto(f"{stranger.server.url}{round_['details_url']}?lang={lang}&speed={FAST}")
    assert answer is not None and answer.status == 200
    page.wait_for_function(
        "() => window.__replay && (window.__replay.ready || window.__replay.failed)")
    assert page.evaluate("window.__replay.failed") is None
    assert page.is_visible("#replay") and page.is_enabled("#replay-play")
    page.click("#replay-play")
    page.wait_for_function("() => window.__replay.played >= 1", timeout=30_000)
    # the modules are the player client's own files, loaded from its static prefix
    loaded = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    for module in ("round-replay.js", "player.js", "reels.js", "holdcash.js", "timeline.js"):
        assert any("/static/" in s and s.endswith(f"/js/{module}") for s in loaded), module


def test_the_replay_plays_a_hold_and_cash_round_to_its_stored_board(
        browser: Any, server: Server, model: MathModel) -> None:
    round_ = _played(server, forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [
        [("CASH", 2)], [], [("MINOR", 0), ("UPGRADE", 0)], [],
        [("MULTIPLIER", 0), ("MAJOR", 0)]]))
    held = {f"{c['reel']},{c['row']}": f"CASH:{_euro(c['value'], 'en')}"
            for c in _events(round_, "hold_and_cash_start")[0]["cells"]}
    for respin in _events(round_, "respin"):
        for c in respin["landed"]:
            if c["kind"] in ("CASH", "MINOR", "MAJOR"):
                label = _euro(c["value"], "en") if c["kind"] == "CASH" else c["kind"]
                held[f"{c['reel']},{c['row']}"] = f"{c['kind']}:{label}"
        for booster in respin["boosters"]:
            for v in booster["values"]:
                held[f"{v['reel']},{v['row']}"] = f"CASH:{_euro(v['value'], 'en')}"
    boosters = {b["kind"] for r in _events(round_, "respin") for b in r["boosters"]}
    assert boosters == {"UPGRADE", "MULTIPLIER"}  # the forced round has what it should
    with game_on(browser, server, 1100, 900) as stranger:
        _replayed(stranger, round_, "en")
        page = stranger.page
        kinds = [s["kind"] for s in page.evaluate("window.__replay.log")]
        assert kinds[0] == "reveal" and "hc_start" in kinds and "hc_respin" in kinds
        assert kinds[-1] == "end"
        assert page.is_visible("#holdboard")
        board = page.evaluate("""[...document.querySelectorAll('#hc-grid .hc-cell')]
            .filter((el) => el.dataset.kind !== 'EMPTY')
            .map((el) => `${el.dataset.reel},${el.dataset.row}:${el.dataset.kind}:${
              el.querySelector('.hc-label')?.textContent ?? ''}`)""")
        assert sorted(board) == sorted(f"{k}:{v}" for k, v in held.items())
        assert stranger.cents("#win") == round_["total_win"]
        assert stranger.text("#win") == _euro(round_["total_win"], "en")
        end = _events(round_, "hold_and_cash_end")[0]
        assert _euro(end["win"], "en") in stranger.text("#win-line")
        assert stranger.text("#replay-play") == "Play again"


def test_the_replay_plays_a_star_wild_round_in_german_to_its_stored_reels(
        browser: Any, server: Server, model: MathModel) -> None:
    round_ = _played(server, forcing.star_wild_draws(model))
    final = _events(round_, "reveal")[-1]
    wilds = _events(round_, "star_wild")[0]["wilds"]
    with game_on(browser, server, 1100, 900) as stranger:
        _replayed(stranger, round_, "de")
        page = stranger.page
        log = page.evaluate("window.__replay.log")
        kinds = [s["kind"] for s in log]
        assert kinds[:3] == ["reveal", "feature", "star_wild"] and "reveal" in kinds[3:]
        after_wild = log[kinds.index("star_wild")]["grid"]
        for w in wilds:  # the coins visibly became WILD / MWILD (x3)
            assert f"{w['reel']},{w['row']}:{w['symbol']}" in after_wild
        shown = page.evaluate("""[...document.querySelectorAll('#reels .cell[data-reel]')]
            .map((el) => `${el.dataset.reel},${el.dataset.row}:${el.dataset.symbol}`)""")
        assert shown == [f"{r},{w}:{final['grid'][r][w]}" for r in range(5) for w in range(3)]
        assert stranger.cents("#win") == round_["total_win"] > 0
        assert stranger.text("#win") == _euro(round_["total_win"], "de")
        assert "Linie" in stranger.text("#win-line")  # the client's own German texts
        assert stranger.text("#replay-play") == "Nochmals abspielen"
        # Play again: the same round once more, to the same end
        page.click("#replay-play")
        page.wait_for_function("() => window.__replay.played >= 2", timeout=30_000)
        assert stranger.cents("#win") == round_["total_win"]


def test_with_scripts_off_the_facts_stand_and_no_dead_button_shows(
        browser: Any, server: Server, model: MathModel) -> None:
    round_ = _played(server, forcing.no_win_draws(model))
    context = browser.new_context(java_script_enabled=False, locale="en-GB")
    try:
        page = context.new_page()
        answer = page.goto(f"{server.url}{round_['details_url']}")
        assert answer is not None and answer.status == 200
        assert page.inner_text("h1") == f"Round {round_['id']}"
        assert page.locator("ol.steps > li").count() == len(round_["events"])
        assert not page.is_visible("#replay") and not page.is_visible("#replay-play")
    finally:
        context.close()
