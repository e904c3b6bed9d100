"""Browser fixtures: one real ``starfever serve`` (tests/harness.py: test mode, a fresh SQLite
database) for the session, one headless Debian Chromium, a fresh browser context per test that
fails on console errors."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import MathModel, load_model
from tests.harness import PLAYER_PASSWORD, Server, running_server
from tests.web.browser import CHROMIUM, ConsoleWatch

FAST = 0.04
"""Animation speed factor for tests (1 = the pace a player sees)."""

_names = itertools.count(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if CHROMIUM.exists():
        return
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is missing: the browser tests drive Debian's "
                                   "Chromium and never download a browser")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def model() -> MathModel:
    return load_model("default")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("web")) as running:
        yield running


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


class Game:
    """A page of the game, with the helpers the tests share."""

    def __init__(self, page: Any, server: Server, watch: ConsoleWatch) -> None:
        self.page = page
        self.server = server
        self.watch = watch
        self.username = ""

    def open(self, speed: float = FAST) -> None:
        self.page.goto(f"{self.server.url}/?speed={speed}")
        self.page.wait_for_function("() => window.starfever && window.starfever.ready")

    def login(self, username: str, *, speed: float = FAST, signup: bool = False) -> None:
        self.open(speed)
        if signup:
            self.page.click("#tab-signup")
            self.page.fill("#auth-birth", "1990-01-01")
        self.page.fill("#auth-username", username)
        self.page.fill("#auth-password", PLAYER_PASSWORD)
        self.page.click("#auth-submit")
        self.page.wait_for_selector("#game:not([hidden])")
        self.page.wait_for_function("() => window.starfever.ready")
        self.username = username

    def new_player(self, cents: int = 0, *, speed: float = FAST) -> str:
        """A registered player (through the API) with ``cents`` deposited, logged in."""
        name = f"web{next(_names)}{id(self) % 10000}"
        self.server.register(name)
        if cents:
            self.server.deposit(name, cents)
        self.login(name, speed=speed)
        return name

    def force(self, draws: list[int]) -> None:
        self.page.evaluate("d => { window.starfever.nextTestDraws = d; }", draws)

    def spin(self, *, key: bool = False, timeout: float = 30_000) -> dict[str, Any]:
        """Spin (button or Space) and wait until the round has played; return the round."""
        before = self.page.evaluate("window.starfever.rounds")
        if key:
            self.page.locator("body").press("Space")
        else:
            self.page.click("#spin")
        self.page.wait_for_function(
            f"window.starfever.rounds > {before} && !window.starfever.state.busy",
            timeout=timeout)
        round_: dict[str, Any] = self.page.evaluate("window.starfever.state.lastRound")
        return round_

    def wait_idle(self, timeout: float = 30_000) -> None:
        self.page.wait_for_function("() => !window.starfever.state.busy", timeout=timeout)

    def cents(self, selector: str) -> int:
        return int(self.page.get_attribute(selector, "data-cents") or "0")

    def text(self, selector: str) -> str:
        text: str = self.page.inner_text(selector)
        return text.strip()

    def wait_text(self, selector: str, needle: str, timeout: float = 15_000) -> str:
        """Wait until the element's text contains ``needle`` (case-insensitive): for messages
        that arrive with a server response."""
        self.page.wait_for_function(
            "([sel, needle]) => (document.querySelector(sel)?.textContent || '')"
            ".toLowerCase().includes(needle)", arg=[selector, needle.lower()], timeout=timeout)
        return self.text(selector)

    def log(self) -> list[dict[str, Any]]:
        log: list[dict[str, Any]] = self.page.evaluate("window.starfever.log")
        return log

    def screenshot(self, path: Path) -> None:
        self.page.screenshot(path=str(path))


@contextmanager
def game_on(browser: Any, server: Server, width: int, height: int) -> Iterator[Game]:
    """A page of ``server`` in a fresh browser context (English, ``width`` x ``height``); when
    the test is done, the page must have logged no error."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    yield Game(page, server, watch)
    context.close()
    assert watch.errors == [], f"the page logged errors: {watch.errors}"


@pytest.fixture
def game(browser: Any, server: Server) -> Iterator[Game]:
    with game_on(browser, server, 1280, 860) as started:
        yield started
