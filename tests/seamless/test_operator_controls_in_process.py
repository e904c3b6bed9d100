"""The operator's controls in operator mode (ADR 0067), in process: the app of ``starfever serve
--wallet operator`` under a TestClient, on a real SQLite database, against the reference wallet
(a real process). Everything here needs no second worker: what only two workers show (a change
made through one worker holds in the other) is ``test_operator_controls.py``'s, on PostgreSQL;
this module proves the same rules on SQLite, where that module no longer runs."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, text

from starfever.seamless import protocol
from starfever.server import clock
from starfever.server.app import create_app
from starfever.server.db import Database
from starfever.server.reports import as_text, build_report, period_of
from starfever.server.seamless_config import OperatorConfig
from starfever.server.services import auth
from tests.harness import (
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    OperatorWallet,
    create_operator,
    expect,
    operator_log_in,
    settings_like_servers,
)
from tests.seamless.operator_mode import wait_for

API = "http://testserver/api/v1"


@dataclass
class App:
    client: TestClient
    engine: Engine
    secret: str
    url: str
    operator_token: str
    """A back-office operator's bearer token."""

    def signed(self, path: str, **fields: Any) -> Any:
        body = protocol.encode(fields, clock.now())
        return self.client.post(f"{API}{path}", content=body, headers={
            "Content-Type": "application/json",
            protocol.OPERATOR_SIGNATURE: protocol.sign(self.secret, body)})

    def launch(self, player_id: str, **fields: Any) -> Any:
        return self.signed("/launch", **{
            "launch_id": f"launch-{uuid.uuid4().hex}", "player_id": player_id,
            "operator_session": f"opsess-{player_id}", "currency": "EUR", "language": "de",
            "market": "at", "mode": "real", "return_url": "https://operator.example/lobby",
            **fields})

    def session(self, player_id: str, **fields: Any) -> str:
        url = str(expect(self.launch(player_id, **fields), 200).json()["url"])
        launch_token = parse_qs(urlparse(url).query)["launch"][0]
        return str(expect(self.client.post(f"{API}/sessions",
                                           json={"launch_token": launch_token}), 201)
                   .json()["token"])

    def spin(self, token: str, key: str | None = None) -> Any:
        return self.client.post(f"{API}/spins", json={"line_bet": 1}, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": key or uuid.uuid4().hex})

    def debits(self, player_id: str) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(text(
                "SELECT count(*) FROM wallet_calls c JOIN accounts a ON a.id = c.account_id "
                "WHERE a.external_id = :p AND c.kind = 'debit'"), {"p": player_id}).scalar()
                or 0)

    def events(self, kind: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(text(
                "SELECT actor, detail FROM significant_events WHERE kind = :k ORDER BY id"),
                {"k": kind})]


@pytest.fixture(scope="module")
def app(wallet: OperatorWallet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    url = f"sqlite:///{tmp_path_factory.mktemp('controls') / 'controls.db'}"
    totp = create_operator(url)
    config = OperatorConfig(url=wallet.url, secret=wallet.secret, timeout=5, retry=0.2,
                            public_url="http://testserver")
    engine = create_engine(url)
    with TestClient(create_app(settings_like_servers(url), operator_mode=config)) as client:
        token = expect(operator_log_in(client, API, OPERATOR_USERNAME, OPERATOR_PASSWORD, totp),
                       201).json()["token"]
        yield App(client, engine, wallet.secret, url, token)
    engine.dispose()
    clock.reset()


def _player(app: App, wallet: OperatorWallet, **launch: Any) -> tuple[str, str]:
    player_id = f"ctl-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 100_000)
    return player_id, app.session(player_id, **launch)


def test_terminate_ends_the_players_sessions(app: App, wallet: OperatorWallet) -> None:
    player_id, token = _player(app, wallet)
    _, other = _player(app, wallet)
    expect(app.spin(token), 201)  # the process knows the token valid (remembered in memory)
    ended = app.signed("/operator-api/sessions/terminate", player_id=player_id,
                       reason="responsible gaming: cool-off")
    assert expect(ended, 200).json() == {"terminated": 1}
    refused = app.spin(token)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "session_terminated"
    wallet_call = app.client.get(f"{API}/wallet", headers={"Authorization": f"Bearer {token}"})
    assert wallet_call.json()["error"]["code"] == "session_terminated"
    expect(app.spin(other), 201)  # another player plays on
    event = app.events("session_terminated")[-1]
    assert event["actor"] == "operator-api" and player_id in event["detail"]


def test_a_retry_of_a_settled_spin_after_termination_answers_its_round(
        app: App, wallet: OperatorWallet) -> None:
    """ADR 0067: the idempotent replay of a round already settled moves no money, so a
    terminated session still gets its round back; a new spin does not."""
    player_id, token = _player(app, wallet)
    first = expect(app.spin(token, key="settled-before-terminate"), 201).json()
    expect(app.signed("/operator-api/sessions/terminate", player_id=player_id, reason="r"), 200)
    auth._known.clear()  # as a worker that never saw the token valid (it looks it up)
    calls = len(wallet.transactions(player_id))
    replay = app.spin(token, key="settled-before-terminate")
    assert replay.status_code == 200, replay.text
    assert replay.json()["round"]["id"] == first["round"]["id"]
    assert replay.json()["replayed"] is True
    new = app.spin(token)
    assert new.status_code == 401 and new.json()["error"]["code"] == "session_terminated"
    assert len(wallet.transactions(player_id)) == calls  # no wallet call for either


def test_a_spin_under_way_when_terminated_finishes_and_is_credited(
        app: App, wallet: OperatorWallet) -> None:
    player_id, token = _player(app, wallet)
    wallet.fault("debit", "delay", seconds=1.5)  # the debit is on its way for 1.5 s
    answers: list[Any] = []
    spinning = threading.Thread(target=lambda: answers.append(app.spin(token)))
    spinning.start()
    wait_for(lambda: app.debits(player_id))  # the debit is recorded, and sent
    expect(app.signed("/operator-api/sessions/terminate", player_id=player_id,
                      reason="support"), 200)
    spinning.join(30)
    assert answers and answers[0].status_code == 201, answers[0].text if answers else None
    credits = [t for t in wallet.transactions(player_id) if t["method"] == "credit"
               and t["applied"]]
    assert len(credits) == 1  # the round under way was credited
    assert app.spin(token).json()["error"]["code"] == "session_terminated"


def test_terminate_by_operator_session_and_bad_calls(app: App, wallet: OperatorWallet) -> None:
    player_id, token = _player(app, wallet)
    ended = app.signed("/operator-api/sessions/terminate",
                       operator_session=f"opsess-{player_id}", reason="logout at the operator")
    assert expect(ended, 200).json() == {"terminated": 1}
    assert app.spin(token).json()["error"]["code"] == "session_terminated"
    body = protocol.encode({"player_id": player_id, "reason": "r"}, clock.now())
    forged = app.client.post(f"{API}/operator-api/sessions/terminate", content=body, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign("x" * 40, body)})
    assert forged.status_code == 401 and forged.json()["error"]["code"] == "bad_signature"
    both = app.signed("/operator-api/sessions/terminate", player_id=player_id,
                      operator_session="s", reason="r")
    assert both.json()["error"]["code"] == "invalid_terminate"
    unknown = app.signed("/operator-api/sessions/terminate", player_id="nobody-here",
                         reason="r")
    assert unknown.status_code == 404
    stale = protocol.encode({"player_id": player_id, "reason": "r"},
                            clock.now().replace(year=2020))
    refused = app.client.post(f"{API}/operator-api/sessions/terminate", content=stale, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign(app.secret, stale)})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "stale_request"


def test_the_back_office_lists_terminated_sessions_by_the_operators_ids(
        app: App, wallet: OperatorWallet) -> None:
    """``GET /operator/terminated-sessions`` by the operator's ``player_id`` or one launch's
    ``operator_session``: the signed call is who ended them, with its reason and brand."""
    player_id, _ = _player(app, wallet, brand="casino-one", operator_session="opsess-a")
    app.session(player_id, operator_session="opsess-b")
    expect(app.signed("/operator-api/sessions/terminate", operator_session="opsess-a",
                      reason="logged out at the operator"), 200)
    expect(app.signed("/operator-api/sessions/terminate", player_id=player_id,
                      reason="account closed"), 200)

    def listed(**query: str) -> list[tuple[object, ...]]:
        return [(s["player_id"], s["operator_session"], s["brand"], s["reason"],
                 s["terminated_by"]) for s in expect(app.client.get(
                     f"{API}/operator/terminated-sessions", params=query,
                     headers={"Authorization": f"Bearer {app.operator_token}"}),
                     200).json()["sessions"]]

    by_session = ("opsess-a", "casino-one", "logged out at the operator")
    by_player = ("opsess-b", None, "account closed")
    assert listed(player_id=player_id) == [(player_id, *by_player, "operator-api"),
                                           (player_id, *by_session, "operator-api")]
    assert listed(operator_session="opsess-a") == [(player_id, *by_session, "operator-api")]
    assert listed(player_id=player_id, operator_session="opsess-c") == []


def test_maintenance_closes_launches_and_rounds(app: App, wallet: OperatorWallet) -> None:
    player_id, token = _player(app, wallet)
    started_before = len(app.events("maintenance_started"))
    closed = app.signed("/operator-api/maintenance", maintenance=True,
                        reason="database upgrade", retry_after_seconds=120)
    assert expect(closed, 200).json()["maintenance"] is True
    try:
        calls_before = len(wallet.transactions(player_id))
        refused = app.spin(token)
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "maintenance"
        assert refused.headers["Retry-After"] == "120"
        assert len(wallet.transactions(player_id)) == calls_before  # no debit was sent
        launch = app.launch(player_id)
        assert launch.status_code == 503 and launch.json()["error"]["code"] == "maintenance"
        public = expect(app.client.get(f"{API}/maintenance"), 200).json()
        assert public["maintenance"] is True and public["reason"] is None
        expect(app.signed("/operator-api/maintenance", maintenance=True, reason="x"), 200)
    finally:
        opened = app.signed("/operator-api/maintenance", maintenance=False,
                            reason="upgrade done")
    assert expect(opened, 200).json()["maintenance"] is False
    expect(app.spin(token), 201)
    assert len(app.events("maintenance_started")) == started_before + 1  # the repeat: nothing


def test_a_spin_under_way_when_maintenance_starts_finishes(app: App,
                                                           wallet: OperatorWallet) -> None:
    player_id, token = _player(app, wallet)
    wallet.fault("debit", "delay", seconds=1.5)
    answers: list[Any] = []
    spinning = threading.Thread(target=lambda: answers.append(app.spin(token)))
    spinning.start()
    wait_for(lambda: app.debits(player_id))
    expect(app.signed("/operator-api/maintenance", maintenance=True, reason="now"), 200)
    try:
        spinning.join(30)
        assert answers and answers[0].status_code == 201, answers[0].text if answers else None
        assert app.spin(token).status_code == 503
    finally:
        expect(app.signed("/operator-api/maintenance", maintenance=False, reason="ok"), 200)


def test_a_demo_launch_plays_with_no_wallet_call_and_nothing_in_the_books(
        app: App, wallet: OperatorWallet) -> None:
    """ADR 0066: the operator's ``mode: "demo"`` launch opens demo play (once); its spins call
    no wallet method and store no round."""
    player_id = f"ctl-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 1_000)
    url = str(expect(app.launch(player_id, mode="demo"), 200).json()["url"])
    assert "demo_launch=" in url and "player=" not in url
    launch_token = url.split("demo_launch=")[1].split("&")[0]
    opened = expect(app.client.post(f"{API}/demo/sessions",
                                    json={"launch_token": launch_token}), 201).json()
    again = app.client.post(f"{API}/demo/sessions", json={"launch_token": launch_token})
    assert again.status_code == 401 and again.json()["error"]["code"] == "invalid_launch_token"
    tables = ("rounds", "wallet_calls", "ledger_entries")
    with app.engine.connect() as conn:
        before = [conn.execute(text(f"SELECT count(*) FROM {t}")).scalar() for t in tables]
    for _ in range(3):
        expect(app.client.post(f"{API}/demo/spins", json={"line_bet": 1}, headers={
            "Authorization": f"Bearer {opened['token']}",
            "Idempotency-Key": uuid.uuid4().hex}), 201)
    with app.engine.connect() as conn:
        assert before == [conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                          for t in tables]
    assert wallet.transactions(player_id) == []



def test_the_report_breaks_the_rounds_down_by_the_launchs_brand(
        app: App, wallet: OperatorWallet) -> None:
    """Issue 36 item 3: the daily report in operator mode has a line per brand the launches
    named (and one for none); the lines add up to the total."""
    day = clock.now().date().isoformat()
    db = Database(app.url)
    try:
        before = {b: line.rounds for b, line in build_report(db, period_of("daily", day))
                  .by_brand}
        for brand, spins in (("casino-nord", 2), ("casino-sued", 1), (None, 1)):
            _, token = _player(app, wallet, **({"brand": brand} if brand else {}))
            for _ in range(spins):
                expect(app.spin(token), 201)
        report = build_report(db, period_of("daily", day))
    finally:
        db.dispose()
    rounds = {b: line.rounds - before.get(b, 0) for b, line in report.by_brand}
    assert rounds["casino-nord"] == 2 and rounds["casino-sued"] == 1 and rounds[None] >= 1
    for name in ("rounds", "bets", "wins", "ggr"):
        assert sum(getattr(line, name) for _, line in report.by_brand) \
            == getattr(report.total, name), name
    assert any(row["brand"] == "casino-sued" and row["rounds"] >= 1
               for row in report.as_dict()["by_brand"])  # and in the JSON form
    assert "brand casino-nord:" in as_text(report)
