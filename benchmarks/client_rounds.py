"""How long a round keeps the player, in Debian's Chromium at the pace a player sees: from the
click on Spin to the moment Spin is back (issue 38, point 1). Not a test: prints one table.

A real ``starfever serve`` in test mode (tests/harness.py, SQLite; a second one on
``--model capped`` for the capped round) forces each kind of round with the tests' draws
(tests/web/forcing.py): a line win, a Star Wild, a Hold & Cash (two landings, then three
blank respins) and a capped Hold & Cash. Each is played twice: by a patient player (no key
pressed) and by a quick one, who presses Stop 0.3 s after the click and Space every 0.5 s
while a round or a show runs. The times are measured in the page (a capture listener on the
click, a mutation observer on ``body.busy``), so this process's round trips do not count.

    python benchmarks/client_rounds.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # ``python benchmarks/client_rounds.py``
    sys.path.insert(0, str(REPO_ROOT))

from starfever.engine.model import MathModel, load_model  # noqa: E402
from tests.harness import PLAYER_PASSWORD, Server, running_server  # noqa: E402
from tests.web import forcing  # noqa: E402
from tests.web.browser import CHROMIUM, ConsoleWatch  # noqa: E402

MEASURE = """() => {
    const t = window.__round = {};
    document.querySelector('#spin').addEventListener('click',
        () => { t.clicked = performance.now(); }, { capture: true, once: true });
    new MutationObserver((changes, observer) => {
        if (t.clicked && !document.body.classList.contains('busy')) {
            t.idle = performance.now(); observer.disconnect(); }
    }).observe(document.body, { attributes: true, attributeFilter: ['class'] }); }"""

Kinds = list[tuple[str, Callable[[MathModel], list[int]]]]
DEFAULT_KINDS: Kinds = [
    ("line win (2+ lines)", forcing.line_win_draws),
    ("Star Wild", forcing.star_wild_draws),
    ("Hold & Cash", lambda m: forcing.hold_and_cash_draws(
        m, [1, 2, 3, 1, 5], [[("CASH", 2)], [("CASH", 1)], []])),
]
CAPPED_KINDS: Kinds = [("capped Hold & Cash", forcing.capped_hold_and_cash_draws)]


def play(page: Any, draws: list[int], quick: bool) -> float:
    """One forced round; its seconds from the click to Spin back."""
    page.evaluate("d => { window.starfever.nextTestDraws = d; }", draws)
    page.evaluate(MEASURE)
    page.click("#spin")
    if quick:
        page.wait_for_timeout(300)
        if page.evaluate("window.starfever.state.busy"):
            page.click("#spin")  # Stop
        while page.evaluate("window.starfever.state.busy || "
                            "!document.querySelector('#celebrate').hidden"):
            page.locator("body").press("Space")
            page.wait_for_timeout(500)
    page.wait_for_function("window.__round.idle !== undefined", timeout=120_000)
    timing = page.evaluate("window.__round")
    page.wait_for_timeout(1_500)  # the next round starts from a quiet page
    return float(timing["idle"] - timing["clicked"]) / 1000


def measure(browser: Any, server: Server, model: MathModel, kinds: Kinds,
            repeat: int) -> list[tuple[str, float, float]]:
    name = f"bench{id(server) % 100000}"
    server.register(name)
    server.deposit(name, 40_000)  # the weekly deposit limit
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)  # also: waits that work under the page's CSP
    page.goto(server.url + "/")
    page.wait_for_function("window.starfever && window.starfever.ready")
    page.fill("#auth-username", name)
    page.fill("#auth-password", PLAYER_PASSWORD)
    page.click("#auth-submit")
    page.wait_for_selector("#game:not([hidden])")
    rows = []
    for label, make in kinds:
        draws = make(model)
        patient = statistics.median(play(page, draws, False) for _ in range(repeat))
        quick = statistics.median(play(page, draws, True) for _ in range(repeat))
        rows.append((label, patient, quick))
        print(f"  {label}: {patient:.2f} s, quick {quick:.2f} s", file=sys.stderr)
    context.close()
    if watch.errors:
        print(f"  the page logged errors: {watch.errors}", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="rounds of each kind (median)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        with running_server(Path(tmp) / "default") as server:
            rows += measure(browser, server, load_model("default"), DEFAULT_KINDS, args.repeat)
        with running_server(Path(tmp) / "capped", args=("--model", "capped")) as server:
            rows += measure(browser, server, load_model("capped"), CAPPED_KINDS, args.repeat)
        browser.close()
    print("| round | Spin back after (s) | with a quick player's presses (s) |")
    print("|---|---|---|")
    for label, patient, quick in rows:
        print(f"| {label} | {patient:.2f} | {quick:.2f} |")


if __name__ == "__main__":
    main()
