"""A real reference operator wallet process (``starfever operator-wallet-demo``) on a free port
with its own SQLite file, and a client for its admin routes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

SECRET = "operator-shared-secret-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class OperatorWallet:
    """The running reference wallet: its URL and its admin routes."""

    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = folder / "operator-wallet.db"
        self.log = folder / "operator-wallet.log"
        env = {**os.environ, "STARFEVER_OPERATOR_SECRET": SECRET}
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "starfever.cli", "operator-wallet-demo", "--port",
                 str(self.port), "--db", str(self.db)], stdout=log, stderr=subprocess.STDOUT,
                env=env)
        self.admin = httpx.Client(base_url=self.url, timeout=10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(self.log.read_text())
            try:
                self.admin.get("/_admin/transactions")
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the reference wallet did not start")

    def player(self, player_id: str, balance: int = 0, *, blocked: bool = False) -> None:
        self.admin.post("/_admin/players", json={"player_id": player_id, "balance": balance,
                                                 "blocked": blocked}).raise_for_status()

    def balance(self, player_id: str) -> int:
        response = self.admin.get(f"/_admin/players/{player_id}")
        response.raise_for_status()
        return int(response.json()["balance"])

    def transactions(self, player_id: str | None = None) -> list[dict[str, Any]]:
        params = {"player_id": player_id} if player_id else {}
        return list(self.admin.get("/_admin/transactions", params=params).json())

    def fault(self, method: str, fault: str, *, times: int = 1, seconds: float = 0) -> None:
        self.admin.post("/_admin/faults", json={"method": method, "fault": fault,
                                                "times": times, "seconds": seconds}
                        ).raise_for_status()

    def stop(self) -> None:
        self.admin.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def operator_wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    """A reference wallet for the module."""
    wallet = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield wallet
    wallet.stop()
