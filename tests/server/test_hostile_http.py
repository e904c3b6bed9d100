"""A hostile tester's requests that reached the routes: an ``Idempotency-Key`` sent twice, bodies
Python cannot parse, a key twice in one object, JSON sent as text or as a form, and control
characters in a logged path. Each is refused with its code before any route runs, on every
route (the spin's lean door included: the token is known to the process first), and nothing
changes.

On a real ``starfever serve`` (tests/harness.py), on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from tests.harness import ADULT_BIRTH_DATE, PLAYER_PASSWORD, Server, expect, running_server

Headers = list[tuple[str, str]]
JSON = ("Content-Type", "application/json")


def _state(server: Server, token: str) -> tuple[int, ...]:
    """What a refused request must leave as it was: the balance and the rows a request could
    add."""
    with server.engine().connect() as conn:
        counts = tuple(int(conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one())
                       for table in ("rounds", "ledger_entries", "accounts", "deposit_limits",
                                     "cashier_transactions", "sessions"))
    return (server.balance(token), *counts)


@pytest.fixture(scope="module")
def victim(server: Server) -> tuple[str, str]:
    """A player with money whose token the process knows (one spin played): a plain spin of
    this token takes the lean door (ADR 0025)."""
    name, token = server.player(deposit=2_000)
    expect(server.spin(token), 201)
    return name, token


def _routes(server: Server, name: str, token: str) -> list[tuple[str, str, Headers]]:
    """Every route that takes a body, with the headers its request needs but the content
    type."""
    player = [("Authorization", f"Bearer {token}")]
    operator = [("Authorization", f"Bearer {server.operator_token}")]
    return [
        ("POST", "/spins", [*player, ("Idempotency-Key", uuid.uuid4().hex)]),
        ("POST", f"/players/{name}/deposits", [*operator, ("Idempotency-Key", uuid.uuid4().hex)]),
        ("POST", f"/players/{name}/withdrawals",
         [*operator, ("Idempotency-Key", uuid.uuid4().hex)]),
        ("POST", "/players", []),
        ("POST", "/sessions", []),
        ("PUT", "/limits", player),
        ("POST", "/self-exclusion", player),
        ("POST", "/reality-check/acknowledge", player),
        ("POST", f"/operator/players/{name}/exclusion", operator),
        ("POST", "/launch", []),
    ]


def _send(server: Server, method: str, path: str, headers: Headers,
          body: bytes) -> httpx.Response:
    return server.http.request(method, f"{server.base}{path}", headers=headers, content=body)


def _refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["message"], error
    assert "Traceback" not in response.text


@pytest.mark.parametrize(("path", "body"), [
    ("/spins", {"line_bet": 1}),
    ("/players/{name}/deposits", {"amount": 100}),
    ("/players/{name}/withdrawals", {"amount": 100}),
], ids=["spin", "deposit", "withdrawal"])
def test_an_idempotency_key_sent_twice_is_refused(server: Server, victim: tuple[str, str],
                                                  path: str, body: dict[str, Any]) -> None:
    name, token = victim
    bearer = token if path == "/spins" else server.operator_token
    first, second = uuid.uuid4().hex, uuid.uuid4().hex
    before = _state(server, token)
    response = _send(server, "POST", path.format(name=name), [
        ("Authorization", f"Bearer {bearer}"), JSON, ("Idempotency-Key", first),
        ("Idempotency-Key", second)], json.dumps(body).encode())
    _refused(response, 400, "invalid_idempotency_key")
    assert _state(server, token) == before
    if path != "/spins":  # neither key booked anything
        for key in (first, second):
            expect(server.call("GET", f"{path.format(name=name)}/{key}", server.operator_token),
                   404)


UNPARSEABLE = {
    "number_of_5000_digits": b'{"line_bet": ' + b"1" * 5000 + b"}",
    "nested_5000_deep": b'{"line_bet": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "invalid_utf8": b'{"line_bet": 1, "x": "\xff\xfe"}',
    "utf8_bom": b'\xef\xbb\xbf{"line_bet": 1}',
    "nan": b'{"line_bet": NaN}',
    "truncated": b'{"line_bet": 1',
}
DUPLICATE_KEYS = {
    "spin": b'{"line_bet": 1, "line_bet": 2}',
    "nested": b'{"line_bet": 1, "test_draws": null, "x": {"a": 1, "a": 1}}',
    "cashier": b'{"amount": 1, "amount": 2}',
    "limit": b'{"weekly_deposit_limit": 100, "weekly_deposit_limit": 90000}',
    "credentials": b'{"username": "a", "username": "b", "password": "password-1"}',
}


@pytest.mark.parametrize("body", [*UNPARSEABLE.values(), *DUPLICATE_KEYS.values()],
                         ids=[*UNPARSEABLE, *(f"duplicate_key_{k}" for k in DUPLICATE_KEYS)])
def test_a_body_that_is_not_strict_json_is_malformed_json_on_every_route(
        server: Server, victim: tuple[str, str], body: bytes) -> None:
    name, token = victim
    before = _state(server, token)
    for method, path, headers in _routes(server, name, token):
        response = _send(server, method, path, [*headers, JSON], body)
        assert response.status_code == 400, (path, response.text)
        _refused(response, 400, "malformed_json")
    assert _state(server, token) == before


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "application/json; charset=latin-1", "application/jsonp", None,
], ids=["text", "form", "multipart", "latin1", "jsonp", "none"])
def test_a_body_not_sent_as_json_is_415_on_every_route(
        server: Server, victim: tuple[str, str], content_type: str | None) -> None:
    name, token = victim
    before = _state(server, token)
    body = json.dumps({"line_bet": 1}).encode()
    for method, path, headers in _routes(server, name, token):
        sent = [*headers, *([("Content-Type", content_type)] if content_type else [])]
        response = _send(server, method, path, sent, body)
        _refused(response, 415, "unsupported_media_type")
    assert _state(server, token) == before


def test_json_with_a_utf8_charset_or_a_json_suffix_is_taken(
        server: Server, victim: tuple[str, str]) -> None:
    name, token = victim
    for content_type in ("application/json; charset=utf-8", "application/json;charset=UTF-8",
                         "application/vnd.starfever+json"):
        spin = _send(server, "POST", "/spins", [
            ("Authorization", f"Bearer {token}"), ("Content-Type", content_type),
            ("Idempotency-Key", uuid.uuid4().hex)], b'{"line_bet": 1}')
        assert spin.status_code == 201, spin.text
        deposit = _send(server, "POST", f"/players/{name}/deposits", [
            ("Authorization", f"Bearer {server.operator_token}"), ("Content-Type", content_type),
            ("Idempotency-Key", uuid.uuid4().hex)], b'{"amount": 1}')
        assert deposit.status_code == 201, deposit.text
    registered = _send(server, "POST", "/players", [("Content-Type", "application/json")],
                       json.dumps({"username": f"u{uuid.uuid4().hex[:10]}",
                                   "password": PLAYER_PASSWORD,
                                   "birth_date": ADULT_BIRTH_DATE}).encode())
    assert registered.status_code == 201, registered.text
    # a request without a body needs no content type
    assert server.call("DELETE", "/sessions/current", server.login(name)).status_code == 204


def test_control_characters_in_a_path_are_escaped_in_the_text_log(tmp_path: Path) -> None:
    with running_server(tmp_path, args=("--log-format", "text", "--log-level", "info")) \
            as server:
        response = server.http.get(f"{server.base}/x%0aFORGED%20info%20line%00%1b[31mred%0d")
        _refused(response, 404, "not_found")
        server.stop()  # every line written
        log = server.log_path.read_bytes()
    assert b"\x00" not in log and b"\x1b" not in log and b"\r" not in log
    lines = log.decode().splitlines()
    assert not any(line.startswith("FORGED") for line in lines)
    access = [line for line in lines if "/api/v1/x" in line]
    assert access and "/api/v1/x\\nFORGED info line\\x00\\x1b[31mred\\r 404" in access[0], access
