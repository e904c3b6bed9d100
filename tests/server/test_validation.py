"""Fail closed: every bad input gets the right 4xx with a code, and nothing changes."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from starfever.server.services.auth import token_hash
from starfever.server.settings import Settings
from tests.harness import ADULT_BIRTH_DATE, DATABASE_KINDS, SECRET, Server


@dataclass
class Case:
    name: str
    method: str
    path: str
    status: int
    code: str
    body: Any = None
    raw: bytes | None = None
    token: str = "player"  # player | operator | none | forged | a literal header value
    key: str | None = "fresh"


SPIN = "/spins"
CASES = [
    Case("unknown bet class", "POST", SPIN, 422, "invalid_bet", {"line_bet": 7}),
    Case("zero bet", "POST", SPIN, 422, "validation_error", {"line_bet": 0}),
    Case("negative bet", "POST", SPIN, 422, "validation_error", {"line_bet": -5}),
    Case("huge bet", "POST", SPIN, 422, "validation_error", {"line_bet": 10**30}),
    Case("bet as string", "POST", SPIN, 422, "validation_error", {"line_bet": "5"}),
    Case("bet as float", "POST", SPIN, 422, "validation_error", {"line_bet": 5.0}),
    Case("bet as bool", "POST", SPIN, 422, "validation_error", {"line_bet": True}),
    Case("bet as null", "POST", SPIN, 422, "validation_error", {"line_bet": None}),
    Case("missing bet", "POST", SPIN, 422, "validation_error", {}),
    Case("unknown field", "POST", SPIN, 422, "validation_error", {"line_bet": 5, "win": 1}),
    Case("client-sent outcome", "POST", SPIN, 422, "validation_error",
         {"line_bet": 5, "total_win": 100000}),
    Case("array body", "POST", SPIN, 422, "validation_error", [5]),
    Case("malformed json", "POST", SPIN, 400, "malformed_json", raw=b'{"line_bet": 5'),
    Case("body too large", "POST", SPIN, 413, "body_too_large",
         raw=b'{"line_bet": 5, "x": "' + b"a" * 20_000 + b'"}'),
    Case("no idempotency key", "POST", SPIN, 400, "idempotency_key_required",
         {"line_bet": 5}, key=None),
    Case("bad idempotency key", "POST", SPIN, 400, "invalid_idempotency_key",
         {"line_bet": 5}, key="has space"),
    Case("no token", "POST", SPIN, 401, "missing_token", {"line_bet": 5}, token="none"),
    Case("forged token", "POST", SPIN, 401, "invalid_token", {"line_bet": 5}, token="forged"),
    Case("basic auth", "POST", SPIN, 401, "invalid_token", {"line_bet": 5},
         token="Basic Ym9zczpwdw=="),
    Case("operator cannot play", "POST", SPIN, 403, "player_only", {"line_bet": 5},
         token="operator"),
    Case("draws out of range", "POST", SPIN, 422, "invalid_test_draws",
         {"line_bet": 5, "test_draws": [999, 0, 0, 0, 0]}),
    Case("too few draws", "POST", SPIN, 422, "invalid_test_draws",
         {"line_bet": 5, "test_draws": [1, 2]}),
    Case("draws wrong type", "POST", SPIN, 422, "validation_error",
         {"line_bet": 5, "test_draws": ["a"]}),
    Case("negative draw", "POST", SPIN, 422, "validation_error",
         {"line_bet": 5, "test_draws": [-1]}),
    Case("round id not a number", "GET", "/rounds/abc", 422, "validation_error"),
    Case("round id zero", "GET", "/rounds/0", 422, "validation_error"),
    Case("page limit zero", "GET", "/rounds?limit=0", 422, "validation_error"),
    Case("page limit huge", "GET", "/rounds?limit=100000", 422, "validation_error"),
    Case("unknown round", "GET", "/rounds/999999999", 404, "round_not_found"),
    Case("unknown path", "GET", "/nothing-here", 404, "not_found"),
    Case("wrong method", "PUT", "/jackpot", 405, "method_not_allowed", {}),
    Case("player deposits", "POST", "/players/{me}/deposits", 403, "operator_only",
         {"amount": 100}),
    Case("zero deposit", "POST", "/players/{me}/deposits", 422, "validation_error",
         {"amount": 0}, token="operator"),
    Case("negative deposit", "POST", "/players/{me}/deposits", 422, "validation_error",
         {"amount": -100}, token="operator"),
    Case("huge deposit", "POST", "/players/{me}/deposits", 422, "validation_error",
         {"amount": 10**9 + 1}, token="operator"),
    Case("deposit as string", "POST", "/players/{me}/deposits", 422, "validation_error",
         {"amount": "100"}, token="operator"),
    Case("deposit to nobody", "POST", "/players/nobody-here/deposits", 404,
         "player_not_found", {"amount": 100}, token="operator"),
    Case("deposit over limit", "POST", "/players/{me}/deposits", 403, "deposit_limit_exceeded",
         {"amount": 40_001}, token="operator"),
    Case("withdraw too much", "POST", "/players/{me}/withdrawals", 409, "insufficient_funds",
         {"amount": 10**9}, token="operator"),
    Case("limit zero", "PUT", "/limits", 422, "validation_error", {"weekly_deposit_limit": 0}),
    Case("exclusion zero days", "POST", "/self-exclusion", 422, "validation_error",
         {"days": 0}),
    Case("exclusion as string", "POST", "/self-exclusion", 422, "validation_error",
         {"days": "7"}),
    Case("operator view as player", "GET", "/operator/players", 403, "operator_only"),
]


def _token(server: Server, case: Case, player: str) -> dict[str, str]:
    if case.token == "player":
        return {"Authorization": f"Bearer {player}"}
    if case.token == "operator":
        return {"Authorization": f"Bearer {server.operator_token}"}
    if case.token == "forged":
        return {"Authorization": f"Bearer {uuid.uuid4().hex}{uuid.uuid4().hex}"}
    if case.token == "none":
        return {}
    return {"Authorization": case.token}


def _state(server: Server, token: str) -> tuple[Any, ...]:
    with server.engine().connect() as conn:
        counts = tuple(conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()
                       for table in ("rounds", "ledger_entries", "accounts", "deposit_limits"))
    return (server.balance(token), server.call("GET", "/jackpot").json()["pool"], *counts)


@pytest.fixture(scope="module")
def victim(server: Server) -> tuple[str, str]:
    """One player with money, shared by the bad-input cases (each checks its own state)."""
    return server.player(deposit=1_000)


DATA_CODES = frozenset({"invalid_token", "player_only", "operator_only", "round_not_found",
                        "player_not_found", "deposit_limit_exceeded", "insufficient_funds"})
"""Refusals decided by what the database holds (a token, a role, a round, a player, a limit, a
balance): each is checked on every database kind. The other cases are decided by the request
alone (its shape, headers, path, the model's bet classes), the same whichever database serves
the server, and are checked once, on SQLite."""

CASE_PARAMS = [pytest.param(kind, case, id=f"{kind}-{case.name}") for kind in DATABASE_KINDS
               for case in CASES if kind == "sqlite" or case.code in DATA_CODES]


@pytest.mark.parametrize(("server", "case"), CASE_PARAMS, indirect=["server"], scope="module")
def test_fail_closed_bad_input_changes_nothing(server: Server, victim: tuple[str, str],
                                               case: Case) -> None:
    name, token = victim
    before = _state(server, token)
    headers = _token(server, case, token)
    if case.key == "fresh":
        headers["Idempotency-Key"] = uuid.uuid4().hex
    elif case.key is not None:
        headers["Idempotency-Key"] = case.key
    kwargs: dict[str, Any] = {"headers": headers}
    if case.raw is not None:
        kwargs["content"] = case.raw
        headers["Content-Type"] = "application/json"
    elif case.body is not None:
        kwargs["json"] = case.body
    response = server.call(case.method, case.path.replace("{me}", name), **kwargs)
    assert response.status_code == case.status, response.text
    error = response.json()["error"]
    assert error["code"] == case.code, error
    assert error["message"]
    assert _state(server, token) == before


def test_another_players_round_is_not_found(server: Server) -> None:
    _, alice = server.player(deposit=1_000)
    _, bob = server.player(deposit=1_000)
    round_id = server.spin(alice).json()["round"]["id"]
    response = server.call("GET", f"/rounds/{round_id}", bob)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "round_not_found"
    assert all(r["id"] != round_id
               for r in server.call("GET", "/rounds", bob).json()["rounds"])


def test_expired_token_is_refused(server: Server) -> None:
    _, token = server.player(deposit=100)
    digest = token_hash(Settings(secret_key=SECRET), token)
    with server.engine().begin() as conn:
        conn.execute(text("UPDATE sessions SET expires_at = :t WHERE token_hash = :h"),
                     {"t": datetime.now(UTC).replace(tzinfo=None) - timedelta(minutes=1),
                      "h": digest})
    response = server.spin(token)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "token_expired"


def test_logged_out_token_is_refused(server: Server) -> None:
    _, token = server.player()
    assert server.call("DELETE", "/sessions/current", token).status_code == 204
    response = server.call("GET", "/wallet", token)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_token"


B = ADULT_BIRTH_DATE
MINOR = (date.today() - timedelta(days=17 * 366)).isoformat()


REGISTRATIONS: list[tuple[dict[str, Any], int, str]] = [
    ({"username": "ab", "password": "password-1", "birth_date": B}, 422, "validation_error"),
    ({"username": "Alice", "password": "password-1", "birth_date": B}, 422, "validation_error"),
    ({"username": "a" * 33, "password": "password-1", "birth_date": B}, 422, "validation_error"),
    ({"username": "bad name", "password": "password-1", "birth_date": B}, 422, "validation_error"),
    ({"username": "goodname", "password": "short", "birth_date": B}, 422, "validation_error"),
    ({"username": "goodname", "password": "p" * 129, "birth_date": B}, 422, "validation_error"),
    ({"username": "goodname", "password": 12345678, "birth_date": B}, 422, "validation_error"),
    ({"username": "goodname", "password": "password-1", "role": "operator",
      "birth_date": B}, 422,
     "validation_error"),
    ({"username": "goodname", "password": "password-1", "birth_date": "2999-01-01"}, 422,
     "validation_error"),
    ({"username": "goodname", "password": "password-1", "birth_date": "01.01.2000"}, 422,
     "validation_error"),
    ({"username": "boss", "password": "password-1", "birth_date": B}, 409, "username_taken"),
    ({"username": "goodname", "password": "password-1"}, 422, "validation_error"),  # no birth
    ({"username": "goodname", "password": "password-1", "birth_date": MINOR}, 403, "under_age"),
]
"""Bad registrations: only a taken name is decided by the database (checked on every kind);
the others by the request alone (checked on SQLite)."""


@pytest.mark.parametrize(("server", "body", "status", "code"), [
    pytest.param(kind, body, status, code, id=f"{kind}-{code}-{n}") for kind in DATABASE_KINDS
    for n, (body, status, code) in enumerate(REGISTRATIONS)
    if kind == "sqlite" or code == "username_taken"],
    indirect=["server"], scope="module")
def test_registration_is_validated(server: Server, body: dict[str, Any], status: int,
                                   code: str) -> None:
    response = server.call("POST", "/players", json=body)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def test_wrong_password_and_unknown_user_look_alike(server: Server) -> None:
    name, _ = server.player()
    for username in (name, "nobody-at-all"):
        response = server.call("POST", "/sessions", json={"username": username,
                                                          "password": "wrong-password"})
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "invalid_credentials"
