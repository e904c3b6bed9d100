"""The operator's controls through its signed API (ADR 0067, OPERATOR-WALLET.md "Calls the
operator makes"): a real ``starfever serve --wallet operator`` with TWO workers against the
reference wallet, on SQLite and PostgreSQL. What one worker is told, the other must hold: the
state is in the database, so every request below is sent several times (the kernel hands
connections to both workers)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from starfever.seamless import protocol
from tests.harness import (
    DATABASE_KINDS,
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
from tests.seamless.operator_mode import wait_for

pytestmark = pytest.mark.slow

TRIES = 6
"""Requests per check: new connections each, spread over both workers."""


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
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
    expect(_spin(server, other), 201)  # another player plays on
    event = _events(server, "session_terminated")[-1]
    assert event["actor"] == "operator-api" and player_id in event["detail"]
    assert "responsible gaming" in event["detail"]


def test_a_spin_under_way_when_terminated_finishes_and_is_credited(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet)
    wallet.fault("debit", "delay", seconds=1.5)  # the debit is on its way for 1.5 s
    answers: list[httpx.Response] = []
    spinning = threading.Thread(target=lambda: answers.append(_spin(server, token)))
    spinning.start()
    with server.engine().connect() as conn:  # the debit is recorded, and sent
        wait_for(lambda: conn.execute(text(
            "SELECT count(*) FROM wallet_calls c JOIN accounts a ON a.id = c.account_id "
            "WHERE a.external_id = :p AND c.kind = 'debit'"), {"p": player_id}).scalar())
    expect(_signed(server, wallet.secret, "/sessions/terminate", player_id=player_id,
                   reason="support"), 200)
    spinning.join(30)
    assert answers and answers[0].status_code == 201, answers[0].text if answers else None
    credits = [t for t in wallet.transactions(player_id) if t["method"] == "credit"
               and t["applied"]]
    assert len(credits) == 1  # the round under way was credited
    assert _spin(server, token).json()["error"]["code"] == "session_terminated"


def test_terminate_by_operator_session_and_bad_calls(server: Server,
                                                     wallet: OperatorWallet) -> None:
    player_id = f"ctl-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 10_000)
    token = launched_player(server, wallet.secret, player_id)
    ended = _signed(server, wallet.secret, "/sessions/terminate",
                    operator_session=f"opsess-{player_id}", reason="logout at the operator")
    assert expect(ended, 200).json() == {"terminated": 1}
    assert _spin(server, token).json()["error"]["code"] == "session_terminated"
    forged = _signed(server, "x" * 40, "/sessions/terminate", player_id=player_id, reason="r")
    assert forged.status_code == 401 and forged.json()["error"]["code"] == "bad_signature"
    both = _signed(server, wallet.secret, "/sessions/terminate", player_id=player_id,
                   operator_session="s", reason="r")
    assert both.json()["error"]["code"] == "invalid_terminate"
    unknown = _signed(server, wallet.secret, "/sessions/terminate", player_id="nobody-here",
                      reason="r")
    assert unknown.status_code == 404
    body = protocol.encode({"player_id": player_id, "reason": "r"},
                           server.now().replace(year=2020))
    stale = server.call("POST", "/operator-api/sessions/terminate", content=body, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "stale_request"


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


def test_a_spin_under_way_when_maintenance_starts_finishes(server: Server,
                                                           wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet)
    wallet.fault("debit", "delay", seconds=1.5)
    answers: list[httpx.Response] = []
    spinning = threading.Thread(target=lambda: answers.append(_spin(server, token)))
    spinning.start()
    with server.engine().connect() as conn:
        wait_for(lambda: conn.execute(text(
            "SELECT count(*) FROM wallet_calls c JOIN accounts a ON a.id = c.account_id "
            "WHERE a.external_id = :p AND c.kind = 'debit'"), {"p": player_id}).scalar())
    expect(_signed(server, wallet.secret, "/maintenance", maintenance=True, reason="now"), 200)
    try:
        spinning.join(30)
        assert answers and answers[0].status_code == 201, answers[0].text if answers else None
        assert _spin(server, token).status_code == 503
    finally:
        expect(_signed(server, wallet.secret, "/maintenance", maintenance=False, reason="ok"),
               200)


def test_a_demo_launch_plays_with_no_wallet_call_and_nothing_in_the_books(
        server: Server, wallet: OperatorWallet) -> None:
    """ADR 0066: the operator's ``mode: "demo"`` launch opens demo play (once); its spins call
    no wallet method and store no round."""
    player_id = f"ctl-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 1_000)
    url = str(expect(signed_launch(server, wallet.secret, player_id, mode="demo"), 200)
              .json()["url"])
    assert "demo_launch=" in url and "player=" not in url
    launch_token = url.split("demo_launch=")[1].split("&")[0]
    opened = expect(server.call("POST", "/demo/sessions", json={"launch_token": launch_token}),
                    201).json()
    again = server.call("POST", "/demo/sessions", json={"launch_token": launch_token})
    assert again.status_code == 401 and again.json()["error"]["code"] == "invalid_launch_token"
    with server.engine().connect() as conn:
        before = [conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                  for t in ("rounds", "wallet_calls", "ledger_entries")]
    for _ in range(3):
        with _fresh(server) as http:
            expect(http.post("/demo/spins", json={"line_bet": 1}, headers={
                "Authorization": f"Bearer {opened['token']}",
                "Idempotency-Key": uuid.uuid4().hex}), 201)
    with server.engine().connect() as conn:
        assert before == [conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                          for t in ("rounds", "wallet_calls", "ledger_entries")]
    assert wallet.transactions(player_id) == []
