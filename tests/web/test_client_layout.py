"""Issue 38, point 5: at a laptop's 1366x768, a phone upright (390x844) and sideways (844x390),
in German and English, nothing is cut off or covered: the controls and Spin's label, the logo,
the €€€ meter and the jackpot values beside the Hold & Cash title and counter, the German
paytable's last column, the recall ribbon's "before → after" (above a Hold & Cash board's
title, never over it); the sign-up toast over no control, meter or message; an upright phone's
menu on one line and its reels taller; the bet picker; the reels named as reels and rows.
One page for the module, its viewport resized; ``?speed=`` keeps it fast.
``SF_LAYOUT_SHOTS=DIR`` saves what each check saw."""

from __future__ import annotations

import os
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

SIZES = [(1366, 768), (390, 844), (844, 390)]

RECTS = """sels => sels.map(sel => [...document.querySelectorAll(sel)]
    .filter(el => el.getClientRects().length)
    .map(el => { const r = el.getBoundingClientRect();
                 return [sel, r.left, r.top, r.right, r.bottom]; })).flat()"""


@pytest.fixture(scope="module")
def game(browser: Any, server: Server) -> Iterator[Game]:
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    started = Game(page, server, watch)
    started.new_player(40_000)
    yield started
    context.close()
    assert watch.errors == [], f"the page logged errors: {watch.errors}"


def _shot(game: Game, name: str) -> None:
    folder = os.environ.get("SF_LAYOUT_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        game.page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _rects(game: Game, selectors: list[str]) -> list[tuple[str, float, float, float, float]]:
    found: list[list[Any]] = game.page.evaluate(RECTS, selectors)
    return [(str(s), float(a), float(b), float(c), float(d)) for s, a, b, c, d in found]


def _outside(game: Game, selectors: list[str]) -> list[str]:
    """The elements (of those shown) not wholly inside the viewport."""
    w, h = game.page.evaluate("[innerWidth, innerHeight]")
    return [sel for sel, left, top, right, bottom in _rects(game, selectors)
            if left < -0.5 or top < -0.5 or right > w + 0.5 or bottom > h + 0.5]


def _overlaps(game: Game, first: list[str], second: list[str]) -> list[tuple[str, str]]:
    """Pairs of shown elements, one of ``first`` and one of ``second``, that overlap."""
    a, b = _rects(game, first), _rects(game, second)
    return [(p[0], q[0]) for p in a for q in b
            if min(p[3], q[3]) - max(p[1], q[1]) > 0.5 and min(p[4], q[4]) - max(p[2], q[2]) > 0.5]


def _settled(game: Game, selector: str) -> None:
    """Wait until no animation of ``selector`` runs (a rectangle read mid-animation is moved)."""
    game.page.wait_for_function(
        "([sel]) => document.querySelector(sel).getAnimations()"
        ".every(a => a.playState !== 'running')", arg=[selector])


@pytest.fixture(autouse=True)
def _let_go(game: Game) -> Iterator[None]:
    """After each test, whatever its outcome, no scene is held: one failure stays one."""
    yield
    game.page.evaluate("""() => { const hooks = window.starfever; hooks.holdAt = null;
        if (hooks.held && hooks.release) hooks.release(); }""")
    game.wait_idle()


def _language(game: Game, code: str) -> None:
    game.page.click(f'.topbar [data-lang="{code}"]')
    game.page.wait_for_function("([c]) => document.documentElement.lang === c", arg=[code])


HEAD = [".topbar .logo", ".pool", "#hc-pays"]
CONTROLS = ["#spin", "#bet-down", "#bet-up", "#bet-pick", "#balance", "#win", "#session-clock",
            "#open-paytable", "#open-history", "#open-protection", ".topbar .logo", ".pool",
            "#pays-minor", "#pays-major", "#pays-mega"]


@pytest.mark.parametrize("width,height", SIZES)
def test_nothing_is_cut_off_or_covered(game: Game, model: MathModel, width: int,
                                       height: int) -> None:
    page = game.page
    page.set_viewport_size({"width": width, "height": height})
    for code in ("en", "de"):
        _language(game, code)
        _shot(game, f"idle-{width}x{height}-{code}")
        assert _outside(game, CONTROLS) == []
        # Spin's label ("DREHEN") inside the button
        assert _overlaps(game, ["#spin-label"], ["#spin"]) and page.evaluate(
            """() => { const b = document.querySelector('#spin').getBoundingClientRect(),
                l = document.querySelector('#spin-label').getBoundingClientRect();
                return l.left >= b.left && l.right <= b.right; }""")
        assert _overlaps(game, [".topbar .logo"], [".pool", "#hc-pays", ".menu"]) == []
    # Hold & Cash: its title and counter cover neither the logo nor the meters
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 2)], []]))
    page.evaluate("window.starfever.holdAt = {kind: 'hc_respin', index: 1}")
    page.click("#spin")
    page.wait_for_function("() => window.starfever.held")
    for code in ("en", "de"):
        _language(game, code)
        _shot(game, f"hold-and-cash-{width}x{height}-{code}")
        assert _overlaps(game, [".hc-title", "#hc-respins"], HEAD) == []
        assert _outside(game, [".hc-title", "#hc-respins", "#hc-grid .hc-cell", *HEAD]) == []
    # the collect, coin by coin: its banner covers no cell of the board and no control
    page.evaluate("window.starfever.holdAt = {kind: 'end'}; window.starfever.release()")
    page.wait_for_function("() => window.starfever.held")
    _shot(game, f"collect-{width}x{height}-de")
    held = page.evaluate("document.querySelectorAll('#hc-grid .hc-cell:not([data-kind=EMPTY])')"
                         ".length")
    assert page.evaluate("document.querySelectorAll('#hc-grid .hc-cell.collected').length") == held
    assert page.is_visible("#banner")
    _settled(game, "#banner")  # measured where it rests, not mid-animation
    assert _overlaps(game, ["#banner"], ["#hc-grid .hc-cell", ".controls", ".foot", *HEAD]) == []
    assert _outside(game, ["#banner"]) == []
    page.evaluate("window.starfever.release()")
    game.wait_idle()
    _language(game, "en")


@pytest.mark.parametrize("width,height", SIZES)
def test_the_german_paytable_and_the_recall_ribbon_fit(game: Game, model: MathModel, width: int,
                                                       height: int) -> None:
    page = game.page
    page.set_viewport_size({"width": width, "height": height})
    _language(game, "de")
    page.click("#open-paytable")
    page.wait_for_selector("#dlg-paytable[open]")
    _shot(game, f"paytable-{width}x{height}-de")
    cut = page.evaluate("""() => { const body = document.querySelector('#paytable-body');
        const box = body.getBoundingClientRect();
        return [...body.querySelectorAll('td, th')].filter(c => {
            const r = c.getBoundingClientRect();
            return r.right > box.right + 0.5 || r.left < box.left - 0.5; }).length
          + (body.scrollWidth > body.clientWidth + 1 ? 1000 : 0); }""")
    assert cut == 0
    page.keyboard.press("Escape")
    # the round recalled is a Hold & Cash: its board's title and counter stand where the
    # ribbon would (over the marquee)
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 2)], []]))
    game.spin()
    page.click("#open-history")
    page.click("#history-list button[data-round]")
    page.wait_for_selector("#recall-ribbon:not([hidden])")
    game.wait_idle()
    _shot(game, f"recall-{width}x{height}-de")
    ribbon = page.evaluate("""() => { const el = document.querySelector('#recall-ribbon');
        return [el.scrollWidth <= el.clientWidth + 1, el.scrollHeight <= el.clientHeight + 1,
                el.textContent]; }""")
    assert ribbon[0] and ribbon[1], ribbon[2]
    assert "→" in ribbon[2] or "->" in ribbon[2] or "vorher" in ribbon[2].lower()
    assert _outside(game, ["#recall-ribbon", ".hc-title", "#hc-respins", *CONTROLS]) == []
    assert page.is_visible("#holdboard")
    assert _overlaps(game, ["#recall-ribbon"], [".hc-title", "#hc-respins", "#hc-grid .hc-cell",
                                                ".topbar", ".controls"]) == []
    page.click("#bet-up")  # play goes on: the recall ends
    page.click("#bet-down")
    _language(game, "en")


def test_the_bet_picker_sets_any_allowed_bet(game: Game) -> None:
    page = game.page
    page.set_viewport_size({"width": 390, "height": 844})
    page.click("#bet-pick")
    page.wait_for_selector("#dlg-bet[open]")
    choices = page.locator("#bet-grid [data-bet-index]")
    allowed = page.evaluate("""() => { const g = window.starfever.state.game;
        return g.bet_classes.filter(b => b * g.line_count <= g.market.max_stake_cents).length; }""")
    assert choices.count() == allowed
    assert _outside(game, ["#bet-grid [data-bet-index]"]) == []
    choices.nth(4).click()
    page.wait_for_selector("#dlg-bet", state="hidden")
    line = page.evaluate("window.starfever.state.game.bet_classes[4]")
    assert game.cents("#total-bet") == 20 * line
    assert game.cents("#pays-minor") == page.evaluate(
        "window.starfever.state.game.hold_and_cash.minor") * 20 * line
    page.click("#bet-pick")
    page.locator("#bet-grid [data-bet-index]").first.click()
    smallest = page.evaluate("window.starfever.state.game.bet_classes[0]")
    assert game.cents("#total-bet") == 20 * smallest


def test_the_reels_are_named_as_reels_and_rows(game: Game) -> None:
    page = game.page
    named = page.evaluate("""() => { const root = document.querySelector('#reels');
        return [root.getAttribute('role'), root.getAttribute('aria-label'),
          [...root.querySelectorAll('.reel')].map(r => r.getAttribute('aria-label')),
          [...root.querySelectorAll('.reel[data-reel="0"] .cell[data-row]')]
            .map(c => c.getAttribute('aria-label'))]; }""")
    assert named[0] == "group" and named[1] == "Reels: 5 reels, 3 rows"
    assert named[2] == ["Reel 1", "Reel 2", "Reel 3", "Reel 4", "Reel 5"]
    assert [label.split(":")[0] for label in named[3]] == ["Row 1", "Row 2", "Row 3"]
    _language(game, "de")
    first = page.evaluate("document.querySelector('#reels .reel').getAttribute('aria-label')")
    assert first == "Walze 1"
    _language(game, "en")


def test_reduced_motion_plays_rounds_at_half_the_pace(game: Game, model: MathModel) -> None:
    page = game.page
    game.force(forcing.no_win_draws(model))
    game.spin()
    normal = page.evaluate("window.starfever.speed()")
    page.emulate_media(reduced_motion="reduce")
    try:
        game.force(forcing.line_win_draws(model))
        game.spin()
        assert page.evaluate("window.starfever.speed()") == pytest.approx(normal / 2)
        assert [s["kind"] for s in game.log()][:2] == ["reveal", "lines"]  # nothing left out
    finally:
        page.emulate_media(reduced_motion="no-preference")


@pytest.mark.parametrize("width,height", SIZES)
def test_the_upright_phone_menu_is_one_line_and_the_reels_take_the_room(
        game: Game, width: int, height: int) -> None:
    """Portrait wasted about 200 px while the menu wrapped: the menu is one line at every size
    (upright: icons, named for screen readers), and upright the reels grow into the height."""
    page = game.page
    page.set_viewport_size({"width": width, "height": height})
    for code in ("en", "de"):
        _language(game, code)
        tops = {round(top) for sel, _l, top, _r, _b in _rects(game, [".menu > *"])}
        assert max(tops) - min(tops) <= 8, tops  # one line
        names = page.evaluate("[...document.querySelectorAll('.menu .icon-btn')]"
                              ".filter(b => b.getClientRects().length).map(b => b.innerText.trim()"
                              " || b.textContent.trim())")
        assert all(names), names  # every button keeps its name
        assert _outside(game, CONTROLS) == []
    stage = _rects(game, ["#stage"])[0]
    cell_w, cell_h = (stage[3] - stage[1]) / 5, (stage[4] - stage[2]) / 3
    below = page.evaluate("innerHeight - document.querySelector('.foot').getBoundingClientRect()"
                          ".bottom")
    controls_to_foot = page.evaluate("""() => document.querySelector('.foot')
        .getBoundingClientRect().top - document.querySelector('#status')
        .getBoundingClientRect().bottom""")
    if (width, height) == (390, 844):
        _shot(game, f"portrait-{width}x{height}")
        assert cell_h >= 1.4 * cell_w  # the reels take the height the width leaves over
        assert controls_to_foot < 60 and below >= -0.5  # little left empty, nothing below
    else:
        assert cell_h == pytest.approx(cell_w, abs=0.5)  # square elsewhere
    _language(game, "en")


@pytest.mark.parametrize("width,height", SIZES)
def test_the_sign_up_toast_covers_no_control_meter_or_error(game: Game, width: int,
                                                            height: int) -> None:
    """After signing up with no money, the toast ("signed up") covers no control, not the
    logo, the €€€ meter or the prizes, and not the refusal of a first Spin."""
    page = game.page
    page.set_viewport_size({"width": width, "height": height})
    page.click("#logout")
    page.wait_for_selector("#auth:not([hidden])")
    page.click("#tab-signup")
    page.fill("#auth-birth", "1990-01-01")
    page.fill("#auth-username", f"toast{width}x{id(game) % 10000}")
    page.fill("#auth-password", "a-long-password-1")
    page.click("#auth-submit")
    page.wait_for_selector("#game:not([hidden])")
    page.click("#spin")
    page.wait_for_selector("#status.error")
    assert page.is_visible("#toast")
    _shot(game, f"toast-{width}x{height}")
    assert _overlaps(game, ["#toast"], ["#status", ".controls", ".menu > *", *HEAD,
                                        "#pays-minor", "#pays-major", "#pays-mega"]) == []
    assert _outside(game, ["#toast", "#status"]) == []


@pytest.mark.parametrize("width,height", SIZES)
def test_the_demo_strip_covers_nothing(game: Game, width: int, height: int) -> None:
    """Demo play's DEMO strip is on screen at all times, above the page: it covers no control,
    not the logo, the meters or a message, and the page still fits the viewport."""
    page = game.page
    page.set_viewport_size({"width": width, "height": height})
    if not page.is_visible("#demo-badge"):
        page.click("#logout")
        page.wait_for_selector("#auth:not([hidden])")
        page.click("#play-demo")
        page.wait_for_selector("#game:not([hidden])")
        page.wait_for_function("() => window.starfever.ready")
    page.wait_for_selector("#demo-badge:not([hidden])")
    assert game.text("#status") == ""  # the last player's refusal went with the log-out
    _shot(game, f"demo-{width}x{height}")
    assert _overlaps(game, ["#demo-badge"], [*CONTROLS, ".menu > *", "#status"]) == []
    assert _outside(game, [*CONTROLS, "#demo-badge"]) == []
    page.evaluate("window.scrollTo(0, 0)")
