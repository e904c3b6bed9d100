"""What the browser tests and ``make_screenshots.py`` share besides the server (which is
tests/harness.py): Debian's Chromium, and a watch that fails a page on console errors."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
"""The browser the tests drive: Debian's package, never a downloaded one."""


class ConsoleWatch:
    """Collects console errors, page errors and failed requests of a page."""

    IGNORED_STATUS = (401, 403, 404, 409, 422)  # refusals the tests provoke on purpose

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        self.allowed: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.wait_for_function = _polling_wait(page)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            text = message.text
            # the browser logs every refused request; the server refusing is what some tests do
            if "Failed to load resource" in text and any(
                    f"status of {s}" in text for s in self.IGNORED_STATUS):
                return
            if any(needle in text for needle in self.allowed):
                return
            self.errors.append(f"console.{message.type}: {text}")

    def allow(self, needle: str) -> None:
        """Expect console errors containing ``needle`` (a test that cuts requests off)."""
        self.allowed.append(needle)

def _polling_wait(page: Any) -> Any:
    """``page.wait_for_function`` that works under the server's Content-Security-Policy: the
    page may not ``eval`` (no 'unsafe-eval'), and Playwright's own polling evaluates its
    predicate with ``eval`` inside the page; here the test polls ``page.evaluate`` instead
    (DevTools evaluation is not bound by the page's CSP), so the client is tested under the
    policy players get. A CSP violation of the client itself is a console error (above)."""
    from playwright.sync_api import Error

    def wait_for_function(expression: str, *, arg: Any = None, timeout: float | None = None,
                          polling: Any = None) -> Any:
        deadline = time.monotonic() + (30_000 if timeout is None else timeout) / 1000
        while True:
            try:
                value = page.evaluate(expression, arg)
            except Error as error:  # a navigation replaced the page's context: try again
                if "context was destroyed" not in str(error):
                    raise
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} ms in vain for: {expression}")
            page.wait_for_timeout(20)

    return wait_for_function


def backoffice_log_in(page: Any, user: str, password: str, code: str) -> None:
    """Fill the back office's log-in form (``/operator``, already open) and send it; the
    caller waits for what should follow (the shell, or the error)."""
    page.fill("[data-testid=login-user]", user)
    page.fill("[data-testid=login-password]", password)
    page.fill("[data-testid=login-otp]", code)
    page.click("[data-testid=login-submit]")
