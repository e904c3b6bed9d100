"""Hostile input, by hand: oversized and deeply nested bodies, unicode look-alike usernames,
SQL/HTML injection strings, integer overflow amounts, replayed and forged tokens, and brute-force
log-ins (429 with Retry-After, counted in the database so it holds across worker processes).
Each runs against a real server on SQLite and on PostgreSQL; none may answer 5xx or change
anything it should not."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from tests.harness import DatabaseKind, Databases, Server, start_server, unique_name

INJECTIONS = ["x' OR '1'='1", "'; DROP TABLE accounts; --", "<script>alert(1)</script>",
              "\" onmouseover=\"alert(1)", "${jndi:ldap://x/a}", "../../etc/passwd", "%00",
              "admin'--", "1; SELECT pg_sleep(5)"]
UNICODE_NAMES = ["älice", "ａｄｍｉｎ", "admin\u0000", "adm\u202ein", "bo\u0301ss", "😀player",
                 "ıstanbul", "Alice", "boss\u200b", "x" * 33]
HUGE = [2**31, 2**53 + 1, 2**63, 2**64, -(2**63), 10**9 + 1, 10**100]


def errors_only(response: httpx.Response, *statuses: int) -> dict[str, str]:
    assert response.status_code in statuses, (response.status_code, response.text[:300])
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"])
    return dict(body["error"])


def count(server: Server, table: str) -> int:
    with server.engine().connect() as conn:
        return int(conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one())


def test_oversized_and_deeply_nested_bodies_are_refused(server: Server) -> None:
    _, token = server.player(deposit=1_000)
    big = b'{"line_bet": 1, "pad": "' + b"x" * 100_000 + b'"}'
    headers = {"Idempotency-Key": secrets.token_hex(8), "content-type": "application/json"}
    assert errors_only(server.call("POST", "/spins", token, content=big, headers=headers),
                       413)["code"] == "body_too_large"

    def chunks() -> object:  # no Content-Length: counted while streaming
        yield b'{"line_bet": 1, "pad": "'
        for _ in range(40):
            yield b"y" * 1024
        yield b'"}'

    streamed = server.call("POST", "/spins", token, content=chunks(), headers=headers)
    assert errors_only(streamed, 413)["code"] == "body_too_large"
    for depth in (1_000, 8_000):
        nested = "[" * depth + "]" * depth
        body = f'{{"line_bet": {nested}}}'.encode()
        errors_only(server.call("POST", "/spins", token, content=body, headers=headers),
                    400, 422)
        levels = min(depth, 2_700)  # 6 bytes a level: stay under the body limit
        obj = '{"a":' * levels + "1" + "}" * levels
        errors_only(server.call("POST", "/players", content=obj.encode(),
                                headers={"content-type": "application/json"}), 400, 422)
    assert server.balance(token) == 1_000


def test_unicode_and_injection_usernames_are_refused(server: Server) -> None:
    accounts = count(server, "accounts")
    for name in UNICODE_NAMES + INJECTIONS:
        response = server.call("POST", "/players", json={"username": name,
                                                         "password": "password-1",
                                                         "birth_date": "1990-01-01"})
        assert errors_only(response, 422)["code"] == "validation_error"
        login = server.call("POST", "/sessions", json={"username": name,
                                                       "password": "password-1"})
        errors_only(login, 401, 422)
    assert count(server, "accounts") == accounts
    # injection strings where they are allowed (passwords) are just data
    name = unique_name()
    registered = server.call("POST", "/players", json={"username": name,
                                                       "password": INJECTIONS[1],
                                                       "birth_date": "1990-01-01"})
    assert registered.status_code == 201, registered.text
    assert server.login(name, INJECTIONS[1])
    errors_only(server.call("POST", "/sessions", json={"username": name,
                                                       "password": INJECTIONS[0]}), 401)
    # injection in paths and query strings
    op = server.operator_token
    for bad in INJECTIONS:
        response = server.call("POST", f"/players/{bad}/deposits", op, json={"amount": 1},
                               headers={"Idempotency-Key": secrets.token_hex(8)})
        errors_only(response, 404, 405, 422)
        page = server.call("GET", "/rounds", op, params={"before": bad})
        errors_only(page, 403, 422)
    assert count(server, "accounts") == accounts + 1


def test_overflowing_and_odd_amounts_are_refused(server: Server) -> None:
    name, token = server.player(deposit=1_000)
    op = server.operator_token
    for amount in [*HUGE, 0, -1, 1.5, "100", True, None, [1], {"v": 1}]:
        deposit = server.call("POST", f"/players/{name}/deposits", op, json={"amount": amount})
        errors_only(deposit, 422)
        spin = server.call("POST", "/spins", token, json={"line_bet": amount},
                           headers={"Idempotency-Key": secrets.token_hex(8)})
        errors_only(spin, 422)
        limit = server.call("PUT", "/limits", token, json={"weekly_deposit_limit": amount})
        errors_only(limit, 422)
    for literal in (b"NaN", b"Infinity", b"-Infinity", b"1e309", b"9" * 4000):
        raw = server.call("POST", f"/players/{name}/deposits", op,
                          content=b'{"amount": ' + literal + b"}",
                          headers={"content-type": "application/json"})
        errors_only(raw, 400, 422)
    assert server.balance(token) == 1_000


def test_replayed_and_forged_tokens_are_refused(server: Server) -> None:
    name, token = server.player(deposit=1_000)
    assert server.call("GET", "/wallet", token).status_code == 200
    forged = [secrets.token_urlsafe(32), token[:-1], token + "A", token.upper(), "x" * 300,
              "eyJhbGciOiJub25lIn0.eyJzdWIiOiJib3NzIn0.", "null", token + "\u00e9"]
    for bad in forged:
        try:
            response = server.call("GET", "/wallet", bad)
        except UnicodeEncodeError:
            continue  # the client cannot even send it
        assert errors_only(response, 401)["code"] in ("invalid_token", "missing_token")
    for header in ("Basic dXNlcjpwYXNz", "Bearer", "bearer x y", token):
        response = server.http.get(f"{server.base}/wallet", headers={"Authorization": header})
        errors_only(response, 401)
    assert server.call("DELETE", "/sessions/current", token).status_code == 204
    for _ in range(2):  # the logged-out token, replayed
        replay = server.call("POST", "/spins", token, json={"line_bet": 1},
                             headers={"Idempotency-Key": secrets.token_hex(8)})
        assert errors_only(replay, 401)["code"] == "invalid_token"
    # a token of this server under another secret (as if stolen from another installation)
    assert errors_only(server.call("GET", "/wallet", "A" * 43), 401)["code"] == "invalid_token"
    assert server.balance(server.login(name, "password-1")) == 1_000


@pytest.mark.slow
def test_brute_force_login_is_rate_limited_across_workers(
        db_kind: DatabaseKind, databases: Databases, tmp_path: Path) -> None:
    # two workers: consecutive connections land on either process; the window is the default
    # (300 s), which the test passes by moving the servers' clock, not by sleeping
    srv = start_server(databases, db_kind, tmp_path,
                       {"STARFEVER_LOGIN_MAX_FAILURES_PER_ADDRESS": "8",
                        "STARFEVER_FORWARDED_ALLOW_IPS": "127.0.0.1"},
                       workers=2, start_timeout=90.0)
    try:
        name, _ = srv.player()
        other, _ = srv.player()

        def attempt(user: str, password: str, address: str | None = None) -> httpx.Response:
            # a new connection each time; uvicorn takes the client's address from
            # X-Forwarded-For as the peer is a configured proxy (STARFEVER_FORWARDED_ALLOW_IPS)
            headers = {"X-Forwarded-For": address} if address else {}
            with httpx.Client(timeout=30) as fresh:
                return fresh.post(f"{srv.base}/sessions", headers=headers,
                                  json={"username": user, "password": password})

        for _ in range(5):
            assert errors_only(attempt(name, "wrong-password"), 401)["code"] == \
                "invalid_credentials"
        for password in ("wrong-password", "password-1"):  # locked, even the right one
            locked = attempt(name, password)
            assert errors_only(locked, 429)["code"] == "too_many_attempts"
            assert 1 <= int(locked.headers["Retry-After"]) <= 300
        assert attempt(other, "password-1").status_code == 201  # others are not affected
        # the lock-out holds only where the failures came from: the player is not locked out
        assert attempt(name, "password-1", "203.0.113.7").status_code == 201
        # one address failing across usernames: 8 failures in the window, then 429 for every
        # username that has not logged in from there before (a newcomer behind it must wait;
        # the players who did log in from it keep doing so: a shared address, issue 13)
        newcomer = unique_name("new")
        srv.register(newcomer)
        for user in (other, "nobody-1", "nobody-2"):
            assert errors_only(attempt(user, "wrong-password"), 401)["code"] == \
                "invalid_credentials"
        sprayed = attempt(newcomer, "password-1")
        assert errors_only(sprayed, 429)["code"] == "too_many_attempts"
        assert attempt(other, "password-1").status_code == 201  # known from this address
        assert attempt(newcomer, "password-1", "203.0.113.7").status_code == 201
        srv.move_clock(int(locked.headers["Retry-After"]) + 0.5)
        assert attempt(name, "password-1").status_code == 201
    finally:
        srv.stop()


