"""The back office's list of terminated sessions (issue 36, ADR 0067): whose session, when, why
and by whom, filtered by player; an unknown filter is 422. Ledger mode, in this process on the
app (no second worker is needed), on SQLite and PostgreSQL; the operator's own filters
(``player_id``, ``operator_session``) and the signed call as the actor are operator mode's
(tests/seamless/test_operator_controls_in_process.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from starfever.server import clock
from starfever.server.app import create_app
from starfever.server.db import sqlalchemy_url
from starfever.server.services.auth import _known
from tests.harness import (
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    Databases,
    create_operator,
    expect,
    operator_log_in,
    settings_like_servers,
)
from tests.server.conftest import skip_unless_available
from tests.server.test_free_rounds import InProcess


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, databases: Databases) -> Iterator[InProcess]:
    """A ledger-mode app in this process on a fresh database of each kind."""
    skip_unless_available(databases, request.param)
    url = databases.new(request.param)
    totp = create_operator(url)
    try:
        with TestClient(create_app(settings_like_servers(url))) as client:
            api = "http://testserver/api/v1"
            operator = expect(operator_log_in(client, api, OPERATOR_USERNAME, OPERATOR_PASSWORD,
                                              totp), 201).json()["token"]
            made = InProcess(client, url, operator)
            yield made
            if made._engine is not None:
                made._engine.dispose()
    finally:
        clock.reset()
        databases.drop(url)


def listed(app: InProcess, **query: str | int) -> list[dict[str, object]]:
    return list(expect(app.call("GET", "/operator/terminated-sessions", app.operator_token,
                                params=query), 200).json()["sessions"])


def test_the_list_shows_whose_session_ended_when_why_and_by_whom(app: InProcess) -> None:
    alice, first = app.player(deposit=1_000)
    second = app.login(alice)
    bob, bobs = app.player(deposit=1_000)
    carol, carols = app.player(deposit=1_000)
    app.move_clock(60)
    asked = app.now()
    expect(app.call("POST", f"/operator/players/{alice}/terminate", app.operator_token,
                    json={"reason": "support request"}), 200)
    answered = app.now()
    app.move_clock(60)
    expect(app.call("POST", f"/operator/players/{bob}/terminate", app.operator_token,
                    json={"reason": "cool-off"}), 200)
    mine = listed(app, player=alice)
    assert len(mine) == 2
    assert {(s["username"], s["reason"], s["terminated_by"], s["player_id"],
             s["operator_session"]) for s in mine} == {
        (alice, "support request", OPERATOR_USERNAME, None, None)}
    [when] = {datetime.fromisoformat(str(s["terminated_at"])) for s in mine}  # one stamp
    assert asked <= when <= answered
    for token in (first, second):  # the listed sessions are the ones refused
        refused = app.spin(token)
        assert refused.json()["error"]["code"] == "session_terminated"
    expect(app.spin(carols), 201)  # a live session is not listed
    assert listed(app, player=carol) == []
    everyone = listed(app)
    assert [s["username"] for s in everyone[:3]] == [bob, alice, alice]  # the latest first
    assert [s["username"] for s in listed(app, limit=1)] == [bob]
    assert listed(app, player="nobody") == []
    assert app.spin(bobs).json()["error"]["code"] == "session_terminated"


def test_a_termination_whose_event_names_no_session_lists_no_actor(app: InProcess) -> None:
    """A session ended before the event named its sessions: listed, its actor unknown."""
    name, token = app.player()
    with create_engine(sqlalchemy_url(app.database_url)).begin() as conn:
        conn.execute(text("UPDATE sessions SET terminated_at = :t, terminated_reason = 'old' "
                          "WHERE account_id = (SELECT id FROM accounts WHERE username = :u)"),
                     {"t": app.now().replace(tzinfo=None), "u": name})
    _known.clear()  # the token was remembered valid in this process
    [old] = listed(app, player=name)
    assert (old["reason"], old["terminated_by"]) == ("old", None)
    assert app.spin(token).json()["error"]["code"] == "session_terminated"


def test_bad_queries_are_refused(app: InProcess) -> None:
    cases = [({"player_name": "x"}, "unknown_query_parameter"),
             ({"limit": 0}, "validation_error"), ({"limit": 201}, "validation_error"),
             ({"player": "a b"}, "validation_error")]
    for query, code in cases:
        refused = app.call("GET", "/operator/terminated-sessions", app.operator_token,
                           params=query)
        assert (refused.status_code, refused.json()["error"]["code"]) == (422, code), query
    _, player = app.player()
    for token in (None, player):
        refused = app.call("GET", "/operator/terminated-sessions", token)
        assert refused.status_code in (401, 403), refused.text
