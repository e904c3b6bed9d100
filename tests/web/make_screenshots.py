"""Screenshots of the client's main states into docs/screenshots/ (PNG).

Run: ``python -m tests.web.make_screenshots [OUT_DIR [uk]]`` (``uk``: only ``uk.png``). Starts
its own test-mode server on a temporary database, forces each state with engine-checked
``test_draws``, and holds the page at the scene to photograph (``window.starfever.holdAt``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from starfever.engine.model import load_model
from tests.harness import PLAYER_PASSWORD, Databases, running_server, start_server
from tests.web import forcing
from tests.web.browser import CHROMIUM, ConsoleWatch

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _spin(page: Any, draws: list[int], hold: dict[str, Any] | None = None) -> None:
    page.evaluate("([d, h]) => { window.starfever.nextTestDraws = d;"
                  " window.starfever.holdAt = h; }", [draws, hold])
    page.click("#spin")
    if hold:
        page.wait_for_function("() => window.starfever.held", timeout=60_000)
        page.wait_for_timeout(700)  # let the scene's animations settle
    else:
        page.wait_for_function("() => !window.starfever.state.busy", timeout=60_000)
        page.wait_for_timeout(900)


def _spin_until(page: Any, draws: list[int], selector: str, settle_ms: int = 1200) -> None:
    """Spin and wait until ``selector`` shows (a celebration's final sting: celebrate.js), then
    let it settle."""
    page.evaluate("d => { window.starfever.nextTestDraws = d; }", draws)
    page.click("#spin")
    page.wait_for_selector(selector, timeout=60_000)
    page.wait_for_timeout(settle_ms)


def _idle(page: Any) -> None:
    page.wait_for_function("() => !window.starfever.state.busy", timeout=60_000)
    page.wait_for_timeout(600)


def _login(page: Any, url: str, name: str) -> None:
    page.goto(url)
    page.wait_for_function("() => window.starfever.ready")
    page.fill("#auth-username", name)
    page.fill("#auth-password", PLAYER_PASSWORD)
    page.click("#auth-submit")
    page.wait_for_selector("#game:not([hidden])")


def _release(page: Any) -> None:
    page.evaluate("window.starfever.release()")
    page.wait_for_function("() => !window.starfever.state.busy", timeout=60_000)
    page.wait_for_timeout(900)


def main(out: Path = OUT) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    model = load_model("default")
    shots: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp, running_server(Path(tmp)) as server, \
            sync_playwright() as p:
        server.register("stella")
        server.deposit("stella", 25_000)
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 860}, locale="en-GB")
        page = context.new_page()
        watch = ConsoleWatch(page)

        def shot(name: str) -> None:
            path = out / f"{name}.png"
            page.screenshot(path=str(path))
            shots.append(path)

        page.goto(f"{server.url}/?speed=0.6")
        page.wait_for_function("() => window.starfever.ready")
        page.fill("#auth-username", "stella")
        page.fill("#auth-password", PLAYER_PASSWORD)
        shot("login")
        page.click("#auth-submit")
        page.wait_for_selector("#game:not([hidden])")
        page.click("#bet-up")
        page.click("#bet-up")  # line bet 0.03, total 0.60
        page.wait_for_timeout(300)
        shot("idle")

        _spin(page, forcing.line_win_draws(model))
        shot("line-win")

        _spin(page, forcing.star_wild_draws(model), {"kind": "star_wild"})
        shot("star-wild")
        _release(page)
        shot("star-wild-respin")

        hc = forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [
            [("CASH", 2)], [], [("MINOR", 0), ("UPGRADE", 0)], [],
            [("MULTIPLIER", 0), ("MAJOR", 0)]])
        _spin(page, hc, {"kind": "hc_respin", "index": 3})
        shot("hold-and-cash")
        _release(page)
        shot("hold-and-cash-end")

        _spin_until(page, forcing.jackpot_draws(model),
                    '#celebrate[data-kind="jackpot"][data-act="sting"]:not([hidden])', 500)
        shot("jackpot")
        _idle(page)

        big = forcing.find_stops(model.base_reels, lambda _s, e: e.feature is None
                                 and not e.jackpot_lines and e.line_factor >= 600)
        _spin_until(page, big, '#celebrate[data-kind="bigwin"][data-act="sting"]:not([hidden])',
                    400)
        shot("big-win")
        _idle(page)
        mega = forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 1)] * 10])
        _spin_until(page, mega, '#celebrate[data-kind="mega"][data-act="sting"]:not([hidden])',
                    600)
        shot("mega")
        _idle(page)

        page.click("#bet-up")  # a round at another bet than the live one
        _spin(page, forcing.line_win_draws(model))
        line_round = page.evaluate("window.starfever.state.lastRound.id")
        page.click("#bet-down")
        page.click("#open-history")
        page.click(f'#history-list button[data-round="{line_round}"]')
        page.wait_for_selector("#recall-ribbon:not([hidden])")
        _idle(page)
        shot("recall")

        page.click("#open-paytable")
        page.wait_for_timeout(300)
        shot("paytable")
        page.click('#dlg-paytable [data-lang="de"]')
        page.click("#tab-rules")
        page.wait_for_timeout(200)
        shot("rules-de")
        page.click('#dlg-paytable [data-lang="en"]')
        page.locator('[data-testid="rtp-statement"]').scroll_into_view_if_needed()
        page.wait_for_timeout(200)
        shot("rules-rtp")
        page.keyboard.press("Escape")

        page.click("#open-history")
        page.wait_for_selector("#history-list button")
        shot("history")
        page.keyboard.press("Escape")
        page.click("#open-protection")
        page.wait_for_selector('[data-testid="limit-now"]')
        shot("protection")
        page.keyboard.press("Escape")

        phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="de-AT",
                                    device_scale_factor=2, is_mobile=True, has_touch=True)
        mobile = phone.new_page()
        mobile_watch = ConsoleWatch(mobile)
        mobile.goto(f"{server.url}/?speed=0.6")
        mobile.wait_for_function("() => window.starfever.ready")
        mobile.fill("#auth-username", "stella")
        mobile.fill("#auth-password", PLAYER_PASSWORD)
        mobile.click("#auth-submit")
        mobile.wait_for_selector("#game:not([hidden])")
        page = mobile
        _spin(page, hc, {"kind": "hc_respin", "index": 5})
        shot("phone-hold-and-cash")
        _release(page)

        sideways = browser.new_context(viewport={"width": 844, "height": 390}, locale="en-GB",
                                       device_scale_factor=2, is_mobile=True, has_touch=True)
        page = sideways.new_page()
        side_watch = ConsoleWatch(page)
        _login(page, f"{server.url}/?speed=0.6", "stella")
        _spin(page, forcing.line_win_draws(model))
        shot("phone-landscape")
        errors = watch.errors + mobile_watch.errors + side_watch.errors

        with Databases(Path(tmp) / "strict-db") as databases, start_server(
                databases, "sqlite", Path(tmp) / "strict",
                args=("--market", "strict")) as strict:
            strict.register("stella")
            strict.deposit("stella", 25_000)
            plain = browser.new_context(viewport={"width": 1280, "height": 860},
                                        locale="en-GB")
            page = plain.new_page()
            strict_watch = ConsoleWatch(page)
            _login(page, f"{strict.url}/?speed=0.6", "stella")
            _spin(page, forcing.line_win_draws(model))
            _spin(page, forcing.no_win_draws(model))
            shot("strict")
            errors += strict_watch.errors
        de_model = load_model("de")
        with Databases(Path(tmp) / "de-db") as databases, start_server(
                databases, "sqlite", Path(tmp) / "de",
                args=("--market", "de", "--model", "de")) as german:
            german.register("greta")
            german.deposit("greta", 25_000)
            plain = browser.new_context(viewport={"width": 1280, "height": 860},
                                        locale="de-DE")
            page = plain.new_page()
            de_watch = ConsoleWatch(page)
            _login(page, f"{german.url}/?speed=0.6&lang=de", "greta")
            _spin(page, forcing.line_win_draws(de_model))
            shot("de")  # no €€€ meter, prizes named by multiplier, the panic button
            errors += de_watch.errors
        browser.close()
        if errors:
            raise SystemExit(f"console errors: {errors}")
    return [*shots, uk_screenshot(out)]


def uk_screenshot(out: Path = OUT) -> Path:
    """``--market uk`` for a 20-year-old: the ladder at its cap of 200 minor units, "Stake",
    the net position and the clock, no Turbo or Skip (ADR 0077)."""
    model = load_model("default")
    path = out / "uk.png"
    with tempfile.TemporaryDirectory() as tmp, Databases(Path(tmp) / "db") as databases, \
            start_server(databases, "sqlite", Path(tmp), args=("--market", "uk")) as uk, \
            sync_playwright() as p:
        today = uk.now().date()
        uk.register("ellie", birth_date=f"{today.year - 20}-01-01")
        uk.deposit("ellie", 10_000)  # a player under 26: EUR 200 a week
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_context(viewport={"width": 1280, "height": 860},
                                   locale="en-GB").new_page()
        watch = ConsoleWatch(page)
        _login(page, f"{uk.url}/?speed=0.6&lang=en", "ellie")
        while page.is_enabled("#bet-up"):
            page.click("#bet-up")
        _spin(page, forcing.line_win_draws(model))
        _spin(page, forcing.no_win_draws(model))
        page.screenshot(path=str(path))
        browser.close()
        if watch.errors:
            raise SystemExit(f"console errors: {watch.errors}")
    return path


if __name__ == "__main__":  # OUT_DIR, and "uk" to make only that one
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    for path in [uk_screenshot(folder)] if sys.argv[2:] == ["uk"] else main(folder):
        print(path)
