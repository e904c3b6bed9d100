"""The spin's two front doors (ADR 0025): the lean one serves the plain spin, the documented
FastAPI route everything else, and a client cannot tell them apart by their answers.

In process, on a real SQLite database: the FastAPI route's caller dependency is counted, so
each request shows which door served it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Annotated, Any

import httpx
import pytest
from fastapi import Header
from fastapi.testclient import TestClient

from starfever.server.api.deps import ContextDep, current_spinner
from starfever.server.app import create_app
from starfever.server.services.auth import Principal
from tests.harness import (
    ADULT_BIRTH_DATE,
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    PLAYER_PASSWORD,
    create_operator,
    expect,
    operator_log_in,
    settings_like_servers,
    unique_name,
)

API = "http://testserver/api/v1"


class Doors:
    """A server app in this process, one player with money, and a count of the requests the
    FastAPI route's dependencies resolved a caller for."""

    def __init__(self, client: TestClient, token: str) -> None:
        self.client = client
        self.token = token
        self.routed = 0

    def spin(self, body: bytes, key: str | None = None, *, by_route: bool = False,
             headers: dict[str, str] | None = None) -> tuple[httpx.Response, str]:
        """``POST /spins`` with ``body`` as it is (``by_route``: with a query string, which the
        route ignores and the lean door passes on); the answer and which door gave it."""
        sent = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                **(headers or {})}
        if key is not None:
            sent["Idempotency-Key"] = key
        before = self.routed
        response = self.client.post(f"{API}/spins{'?door=route' if by_route else ''}",
                                    content=body, headers=sent)
        return response, "route" if self.routed > before else "lean"


class _App:
    """The module's app in this process (started once: an app's start is most of a test's
    time), its operator's session, and the :class:`Doors` of the test now running."""

    def __init__(self, client: TestClient, operator: str) -> None:
        self.client = client
        self.operator = operator
        self.doors: Doors | None = None


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_App]:
    url = f"sqlite:///{tmp_path_factory.mktemp('doors') / 'doors.db'}"
    totp = create_operator(url)
    # every test registers a player from the one test client address
    made = create_app(replace(settings_like_servers(url), registrations_per_address=1_000_000))
    holder: list[_App] = []

    async def counting_spinner(context: ContextDep,
                               authorization: Annotated[str | None, Header()] = None,
                               ) -> Principal:
        doors = holder[0].doors
        if doors is not None:
            doors.routed += 1
        return await current_spinner(context, authorization)

    made.dependency_overrides[current_spinner] = counting_spinner
    with TestClient(made) as client:
        operator = expect(operator_log_in(client, API, OPERATOR_USERNAME, OPERATOR_PASSWORD,
                                          totp), 201).json()["token"]
        holder.append(_App(client, operator))
        yield holder[0]


@pytest.fixture
def doors(app: _App) -> Doors:
    """A fresh player with money on the module's app, logged in: a token the process has not
    seen yet."""
    client = app.client
    name = unique_name("doors")
    expect(client.post(f"{API}/players", json={
        "username": name, "password": PLAYER_PASSWORD, "birth_date": ADULT_BIRTH_DATE}), 201)
    expect(client.post(f"{API}/players/{name}/deposits", json={"amount": 10_000},
                       headers={"Authorization": f"Bearer {app.operator}",
                                "Idempotency-Key": uuid.uuid4().hex}), 201)
    token = expect(client.post(f"{API}/sessions", json={
        "username": name, "password": PLAYER_PASSWORD}), 201).json()["token"]
    app.doors = Doors(client, token)
    return app.doors


def _same_answer(lean: httpx.Response, routed: httpx.Response) -> None:
    assert lean.status_code == routed.status_code
    assert lean.json() == routed.json()
    for header in ("content-type", "content-security-policy", "x-content-type-options",
                   "www-authenticate", "retry-after"):
        assert lean.headers.get(header) == routed.headers.get(header), header
    assert lean.headers["x-request-id"] and routed.headers["x-request-id"]


def test_a_plain_spin_takes_the_lean_door_once_its_token_is_known(doors: Doors) -> None:
    first, door = doors.spin(b'{"line_bet": 1}', uuid.uuid4().hex)
    assert (first.status_code, door) == (201, "route")  # a token not yet seen by the process
    key = uuid.uuid4().hex
    lean, door = doors.spin(b'{"line_bet": 2}', key)
    assert (lean.status_code, door) == (201, "lean")
    assert lean.json()["balance"] == first.json()["balance"] - 40 + lean.json()["round"][
        "total_win"]
    # the same key again, through the route: the same round, replayed
    routed, door = doors.spin(b'{"line_bet": 2}', key, by_route=True)
    assert (routed.status_code, door) == (200, "route")
    replayed, door = doors.spin(b'{"line_bet": 2}', key)
    assert (replayed.status_code, door) == (200, "lean")
    _same_answer(replayed, routed)
    assert {**lean.json(), "replayed": True} == replayed.json()


@pytest.mark.parametrize("body", [b'{"line_bet": 6}', b'{"line_bet": 5000}',
                                  b'{"line_bet": 1, "test_draws": [0, 0, 0, 0, 0]}'],
                         ids=["not_a_bet_class", "more_than_the_balance", "test_draws"])
def test_a_refusal_is_the_same_through_either_door(doors: Doors, body: bytes) -> None:
    doors.spin(b'{"line_bet": 1}', uuid.uuid4().hex)  # the token is known from here on
    balance = doors.client.get(f"{API}/wallet",
                               headers={"Authorization": f"Bearer {doors.token}"}).json()
    lean, door = doors.spin(body, uuid.uuid4().hex)
    assert door == "lean"
    routed, door = doors.spin(body, uuid.uuid4().hex, by_route=True)
    assert door == "route"
    if lean.status_code >= 400:
        _same_answer(lean, routed)
        assert doors.client.get(f"{API}/wallet", headers={
            "Authorization": f"Bearer {doors.token}"}).json() == balance  # nothing moved
    else:  # test mode plays forced draws: both doors play the same round
        assert (lean.status_code, routed.status_code) == (201, 201)
        for field in ("events", "total_win", "draws"):
            assert lean.json()["round"][field] == routed.json()["round"][field]


@pytest.mark.parametrize(("body", "key", "extra"), [
    (b'{"line_bet": "1"}', "k-strict", {}),
    (b'{"line_bet": 1, "more": 1}', "k-extra", {}),
    (b'{"line_bet": 1', "k-json", {}),
    (b'', "k-empty", {}),
    (b'{"line_bet": 1}', None, {}),
    (b'{"line_bet": 1}', "not a key!", {}),
    (b'{"line_bet": 1}', "k-bearer", {"Authorization": "Basic abc"}),
    (b'{"line_bet": 1}', "k-token", {"Authorization": "Bearer not-a-token"}),
    (json.dumps({"line_bet": 1, "pad": "x" * 20_000}).encode(), "k-big", {}),
], ids=["strict", "extra_field", "bad_json", "empty", "no_key", "bad_key", "not_bearer",
        "unknown_token", "too_big"])
def test_anything_but_a_plain_spin_is_answered_by_the_route(
        doors: Doors, body: bytes, key: str | None, extra: dict[str, Any]) -> None:
    """(A body the route cannot read is refused before its dependencies run, so the count
    cannot show the door there: the answers must simply be the route's.)"""
    doors.spin(b'{"line_bet": 1}', uuid.uuid4().hex)  # the token is known from here on
    wallet = {"Authorization": f"Bearer {doors.token}"}
    balance = doors.client.get(f"{API}/wallet", headers=wallet).json()["balance"]
    answer, _ = doors.spin(body, key, headers=extra)
    assert 400 <= answer.status_code < 500
    assert set(answer.json()["error"]) >= {"code", "message"}
    again, _ = doors.spin(body, key, by_route=True, headers=extra)
    _same_answer(answer, again)
    assert doors.client.get(f"{API}/wallet", headers=wallet).json()["balance"] == balance
