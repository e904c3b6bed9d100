"""What the browser tests and ``make_screenshots.py`` share besides the server (which is
tests/harness.py): Debian's Chromium, and a watch that fails a page on console errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
"""The browser the tests drive: Debian's package, never a downloaded one."""


class ConsoleWatch:
    """Collects console errors, page errors and failed requests of a page."""

    IGNORED_STATUS = (401, 403, 404, 409, 422)  # refusals the tests provoke on purpose

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

    def _console(self, message: Any) -> None:
        if message.type == "error":
            text = message.text
            # the browser logs every refused request; the server refusing is what some tests do
            if "Failed to load resource" in text and any(
                    f"status of {s}" in text for s in self.IGNORED_STATUS):
                return
            self.errors.append(f"console.{message.type}: {text}")
