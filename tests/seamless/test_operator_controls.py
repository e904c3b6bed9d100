"""The operator's controls across TWO workers (ADR 0067, OPERATOR-WALLET.md "Calls the operator
makes"): a real ``starfever serve --wallet operator --workers 2`` against the reference wallet.
What one worker is told, the other must hold: the state is in the database, so every request
below is sent several times on new connections (the kernel hands them to both workers).

Only what needs two workers is here, on one database: PostgreSQL, the database of installations
with several workers and machines (SQLite where no PostgreSQL answers). The same rules on SQLite
and everything that one process shows (a spin under way, bad calls, the demo launch) are
``test_operator_controls_in_process.py``'s."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from starfever.seamless import protocol
from tests.harness import (
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    expect,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    signed_launch,
    start_server,
)

pytestmark = pytest.mark.slow

TRIES = 6
"""Requests per check: new connections each, spread over both workers."""


@pytest.fixture(scope="module")
def server(databases: Databases, wallet: OperatorWallet,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    kind: DatabaseKind = "postgresql" if databases.postgres_available else "sqlite"
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"controls-{kind}"),
                           operator_mode_env(wallet), args=operator_mode_args(wallet),
                           workers=2)
    with started:
        yield started
    databases.drop(started.database_url)


def _signed(server: Server, secret: str, path: str, **fields: Any) -> httpx.Response:
    body = protocol.encode(fields, server.now())
    return server.call("POST", f"/operator-api{path}", content=body, headers={
        "Content-Type": "application/json", protocol.OPERATOR_SIGNATURE:
        protocol.sign(secret, body)})


def _player(server: Server, wallet: OperatorWallet) -> tuple[str, str]:
    player_id = f"ctl-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 100_000)
    return player_id, launched_player(server, wallet.secret, player_id)


def _fresh(server: Server) -> httpx.Client:
    """A client of its own: a new connection, so the two workers share the requests."""
    return httpx.Client(base_url=server.base, timeout=30)


def _spin(server: Server, token: str, key: str | None = None) -> httpx.Response:
    with _fresh(server) as http:
        return http.post("/spins", json={"line_bet": 1}, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": key or uuid.uuid4().hex})


def _events(server: Server, kind: str) -> list[dict[str, Any]]:
    with server.engine().connect() as conn:
        return [dict(r._mapping) for r in conn.execute(text(
            "SELECT actor, detail FROM significant_events WHERE kind = :k ORDER BY id"),
            {"k": kind})]


def test_terminate_ends_the_players_sessions_in_every_worker(server: Server,
                                                              wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet)
    _, other = _player(server, wallet)
    for _ in range(TRIES):  # both workers know the token valid (remembered in memory)
        expect(_spin(server, token), 201)
    settled = expect(_spin(server, token, key="settled-before"), 201).json()["round"]["id"]
    ended = _signed(server, wallet.secret, "/sessions/terminate", player_id=player_id,
                    reason="responsible gaming: cool-off")
    assert expect(ended, 200).json() == {"terminated": 1}
    for _ in range(TRIES):
        refused = _spin(server, token)
        assert refused.status_code == 401, refused.text
        assert refused.json()["error"]["code"] == "session_terminated"
        with _fresh(server) as http:
            wallet_call = http.get("/wallet", headers={"Authorization": f"Bearer {token}"})
        assert wallet_call.json()["error"]["code"] == "session_terminated"
        replay = _spin(server, token, key="settled-before")  # moves no money: its round
        assert replay.status_code == 200 and replay.json()["round"]["id"] == settled
    expect(_spin(server, other), 201)  # another player plays on
    event = _events(server, "session_terminated")[-1]
    assert event["actor"] == "operator-api" and player_id in event["detail"]
    assert "responsible gaming" in event["detail"]


def test_maintenance_closes_launches_and_rounds_in_every_worker(server: Server,
                                                                wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet)
    closed = _signed(server, wallet.secret, "/maintenance", maintenance=True,
                     reason="database upgrade", retry_after_seconds=120)
    assert expect(closed, 200).json()["maintenance"] is True
    try:
        debits_before = len(wallet.transactions(player_id))
        for _ in range(TRIES):
            refused = _spin(server, token)
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "maintenance"
            assert refused.headers["Retry-After"] == "120"
        assert len(wallet.transactions(player_id)) == debits_before  # no debit was sent
        launch = signed_launch(server, wallet.secret, player_id)
        assert launch.status_code == 503 and launch.json()["error"]["code"] == "maintenance"
        public = expect(server.call("GET", "/maintenance"), 200).json()
        assert public["maintenance"] is True and public["reason"] is None
        again = _signed(server, wallet.secret, "/maintenance", maintenance=True, reason="x")
        expect(again, 200)
    finally:
        opened = _signed(server, wallet.secret, "/maintenance", maintenance=False,
                         reason="upgrade done")
    assert expect(opened, 200).json()["maintenance"] is False
    for _ in range(TRIES):
        expect(_spin(server, token), 201)
    started, ended = _events(server, "maintenance_started"), _events(server, "maintenance_ended")
    assert len(started) == 1 and len(ended) == 1  # the repeated close changed nothing
    assert "database upgrade" in started[0]["detail"]
