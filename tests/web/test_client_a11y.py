"""Issue 38, point 7: an axe-core scan (the npm package pinned by tests/web/a11y/package-lock.json,
installed by ``scripts/install --test``) of the served page in Chromium finds no serious or
critical violation: the log-in screen, the game, the Hold & Cash board, the paytable and the
bet picker, in English and German. axe runs through DevTools evaluation, so the page keeps its
Content-Security-Policy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import MathModel
from tests.harness import Server
from tests.web import forcing
from tests.web.browser import ConsoleWatch
from tests.web.conftest import Game

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "a11y" / "node_modules" / "axe-core" / "axe.min.js"

SCAN = """async () => {
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return [result.passes.length + result.violations.length,
        result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
        .map(v => [v.id, v.impact, v.nodes.slice(0, 3).map(n => n.target.join(' '))])]; }"""


@pytest.fixture(scope="module")
def game(browser: Any, server: Server) -> Iterator[Game]:
    if not AXE.exists():
        pytest.skip(f"{AXE} is missing: ./scripts/install --test installs it with npm ci")
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    yield Game(page, server, watch)
    context.close()
    assert watch.errors == [], f"the page logged errors: {watch.errors}"


def _scan(game: Game) -> list[Any]:
    if not game.page.evaluate("typeof window.axe !== 'undefined'"):
        game.page.evaluate(AXE.read_text(encoding="utf-8"))
    rules, found = game.page.evaluate(SCAN)
    assert rules > 10  # the scan ran its rules (19 apply to the log-in screen)
    return list(found)


def test_no_serious_accessibility_violation(game: Game, model: MathModel) -> None:
    page = game.page
    game.open()
    page.wait_for_selector("#auth:not([hidden])")
    assert _scan(game) == []
    game.new_player(20_000)
    for code in ("en", "de"):
        page.click(f'.topbar [data-lang="{code}"]')
        assert _scan(game) == [], code
    page.click("#bet-pick")
    page.wait_for_selector("#dlg-bet[open]")
    assert _scan(game) == []
    page.keyboard.press("Escape")
    page.click("#open-paytable")
    page.wait_for_selector("#dlg-paytable[open]")
    assert _scan(game) == []
    page.keyboard.press("Escape")
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("MINOR", 0)], []]))
    page.evaluate("window.starfever.holdAt = {kind: 'hc_respin', index: 1}")
    page.click("#spin")
    page.wait_for_function("() => window.starfever.held")
    assert _scan(game) == []
    page.evaluate("window.starfever.release()")
    game.wait_idle()
    assert _scan(game) == []
