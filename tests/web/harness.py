"""A real ``starfever serve`` on a free port with a temporary SQLite database in test mode, an
operator to deposit with, and a headless Chromium page that fails on console errors. Used by the
browser tests and by ``make_screenshots.py``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = Path("/usr/bin/chromium")
OPERATOR = "cashier"
OPERATOR_PASSWORD = "cashier-password-1"
PASSWORD = "player-password-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    """A running server and an operator token for the cashier API."""

    url: str
    database_url: str
    process: subprocess.Popen[str]
    operator_token: str = ""
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.url + "/api/v1", timeout=15)

    def token(self, username: str, password: str = PASSWORD) -> str:
        r = self.client.post("/sessions", json={"username": username, "password": password})
        r.raise_for_status()
        token: str = r.json()["token"]
        return token

    def deposit(self, username: str, cents: int) -> dict[str, Any]:
        r = self.client.post(f"/players/{username}/deposits", json={"amount": cents},
                             headers={"Authorization": f"Bearer {self.operator_token}"})
        r.raise_for_status()
        body: dict[str, Any] = r.json()
        return body

    def register(self, username: str, password: str = PASSWORD) -> None:
        r = self.client.post("/players", json={"username": username, "password": password})
        r.raise_for_status()

    def balance(self, username: str) -> int:
        r = self.client.get("/wallet",
                            headers={"Authorization": f"Bearer {self.token(username)}"})
        r.raise_for_status()
        balance: int = r.json()["balance"]
        return balance


def _cli(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "starfever.cli", *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=120, check=True)


@contextmanager
def running_server(tmp: Path, **settings: str) -> Iterator[Server]:
    """``starfever serve`` in test mode; extra ``STARFEVER_*`` settings as keyword arguments."""
    port = free_port()
    database_url = f"sqlite:///{tmp / 'web.db'}"
    env = {**os.environ, "STARFEVER_TEST_MODE": "1",
           **{f"STARFEVER_{k.upper()}": v for k, v in settings.items()}}
    _cli("operator", "create", OPERATOR, "--database-url", database_url, env=env,
         stdin=OPERATOR_PASSWORD + "\n")
    log = (tmp / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "starfever.cli", "serve", "--port", str(port),
         "--database-url", database_url, "--log-level", "warning"],
        env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    server = Server(f"http://127.0.0.1:{port}", database_url, process)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError((tmp / "server.log").read_text())
            try:
                if server.client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start: " + (tmp / "server.log").read_text())
            time.sleep(0.1)
        server.operator_token = server.token(OPERATOR, OPERATOR_PASSWORD)
        yield server
    finally:
        server.client.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


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
