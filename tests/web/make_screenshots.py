"""Screenshots of the client's main states into docs/screenshots/ (PNG).

Run: ``python -m tests.web.make_screenshots [OUT_DIR]``. Starts its own test-mode server on a
temporary database, forces each state with engine-checked ``test_draws``, and holds the page at the
scene to photograph (``window.starfever.holdAt``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from starfever.engine.model import load_model
from tests.harness import PLAYER_PASSWORD, running_server
from tests.web import forcing
from tests.web.browser import CHROMIUM, ConsoleWatch

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _spin(page: Any, draws: list[int], hold: dict[str, Any] | None = None) -> None:
    page.evaluate("([d, h]) => { window.starfever.nextTestDraws = d;"
                  " window.starfever.holdAt = h; }", [draws, hold])
    page.click("#spin")
    if hold:
        page.wait_for_function("window.starfever.held", timeout=60_000)
        page.wait_for_timeout(700)  # let the scene's animations settle
    else:
        page.wait_for_function("!window.starfever.state.busy", timeout=60_000)
        page.wait_for_timeout(900)


def _release(page: Any) -> None:
    page.evaluate("window.starfever.release()")
    page.wait_for_function("!window.starfever.state.busy", timeout=60_000)
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
        page.wait_for_function("window.starfever.ready")
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

        _spin(page, forcing.jackpot_draws(model), {"kind": "jackpot"})
        shot("jackpot")
        _release(page)
        page.click("#cel-close")

        page.click("#open-paytable")
        page.wait_for_timeout(300)
        shot("paytable")
        page.click('#dlg-paytable [data-lang="de"]')
        page.click("#tab-rules")
        page.wait_for_timeout(200)
        shot("rules-de")
        page.click('#dlg-paytable [data-lang="en"]')
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
        mobile.wait_for_function("window.starfever.ready")
        mobile.fill("#auth-username", "stella")
        mobile.fill("#auth-password", PLAYER_PASSWORD)
        mobile.click("#auth-submit")
        mobile.wait_for_selector("#game:not([hidden])")
        page = mobile
        _spin(page, hc, {"kind": "hc_respin", "index": 5})
        shot("phone-hold-and-cash")
        _release(page)
        browser.close()
        errors = watch.errors + mobile_watch.errors
        if errors:
            raise SystemExit(f"console errors: {errors}")
    return shots


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(path)
