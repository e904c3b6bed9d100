"""Log-in throttling that an attacker cannot turn against players (issue 13): forwarded
headers are believed only from configured proxies, and each account has a backoff that holds
whatever address the guesses come from."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from tests.harness import Databases, Server, start_server, unique_name

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def _attempt(server: Server, user: str, password: str,
             address: str | None = None) -> httpx.Response:
    headers = {"X-Forwarded-For": address} if address else {}
    with httpx.Client(timeout=30) as fresh:
        return fresh.post(f"{server.base}/sessions", headers=headers,
                          json={"username": user, "password": password})


def test_forwarded_headers_are_believed_only_from_configured_proxies(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)  # no proxy configured: the default
    try:
        name, _ = server.player()
        codes = [_attempt(server, name, "wrong-password", f"198.51.100.{i}").status_code
                 for i in range(7)]
        assert codes == [401] * 5 + [429] * 2  # a rotating header is no new address
        with server.engine().connect() as conn:
            clients = set(conn.execute(text("SELECT DISTINCT client FROM login_failures"))
                          .scalars())
        assert clients == {"127.0.0.1"}
    finally:
        server.stop()


def test_an_account_backs_off_whatever_address_the_guesses_come_from(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path, {
        "STARFEVER_FORWARDED_ALLOW_IPS": "127.0.0.1",  # the test plays the proxy
        "STARFEVER_LOGIN_ACCOUNT_FREE_FAILURES": "6",
        "STARFEVER_LOGIN_MAX_FAILURES_PER_ADDRESS": "20"})
    try:
        name, _ = server.player()
        other, _ = server.player()
        for i in range(6):  # one guess from each of six addresses: under every per-address limit
            assert _attempt(server, name, "wrong-password", f"198.51.100.{i}").status_code == 401
        backed_off = _attempt(server, name, "password-1", "203.0.113.9")  # a fresh address
        assert backed_off.status_code == 429, backed_off.text
        assert backed_off.json()["error"]["code"] == "too_many_attempts"
        assert 1 <= int(backed_off.headers["Retry-After"]) <= 2
        assert _attempt(server, other, "password-1", "198.51.100.1").status_code == 201
        server.move_clock(2.1)  # a backoff, not a lock-out: the owner gets in after it
        assert _attempt(server, name, "password-1", "203.0.113.9").status_code == 201
        # many players behind one address (NAT): 30 failures there under random names, over
        # the per-address limit of 20, do not lock out a player who logged in from it before;
        # a newcomer from that address waits for the window
        assert _attempt(server, other, "password-1", "192.0.2.50").status_code == 201
        newcomer = unique_name("new")
        server.register(newcomer)
        codes = [_attempt(server, f"nobody-{i}", "wrong-password", "192.0.2.50").status_code
                 for i in range(30)]
        assert codes.count(401) == 20 and codes.count(429) == 10
        assert _attempt(server, other, "password-1", "192.0.2.50").status_code == 201
        assert _attempt(server, newcomer, "password-1", "192.0.2.50").status_code == 429
        assert _attempt(server, newcomer, "password-1", "198.51.100.77").status_code == 201
    finally:
        server.stop()
