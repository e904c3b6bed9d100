"""The significant-events log (services/events.py): every kind wired today is written by the
real server or command, in the transaction of what it records, and never carries a secret."""

from __future__ import annotations

import time
from pathlib import Path

import pyotp
import pytest
from sqlalchemy import text

from starfever.server.db import Database, migrate
from starfever.server.services import events
from starfever.server.services.events import Event
from tests.harness import (
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    DatabaseKind,
    Databases,
    Server,
    expect,
    run_cli_in_process,
    start_server,
)
from tests.server.helpers import jackpot_draws, model


def _events(url: str, *kinds: str) -> list[Event]:
    db = Database(url)
    try:
        return events.query(db, kinds=kinds, limit=500)
    finally:
        db.dispose()


def test_record_refuses_unknown_kinds_and_secrets(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'e.db'}")
    migrate(db)
    try:
        with pytest.raises(ValueError, match="unknown event kind"), db.write() as session:
            events.record(session, "operator_logon", actor="boss", detail={})
        with pytest.raises(ValueError, match="secret"), db.write() as session:
            events.record(session, "operator_login", actor="boss",
                          detail={"nested": [{"Password": "hunter2"}]})
        with pytest.raises(RuntimeError), db.write() as session:  # rolled back: no event
            events.record(session, "limit_changed", actor="alice", detail={"to": 1})
            raise RuntimeError("the change failed")
        assert events.query(db) == []
        with db.write() as session:
            events.record(session, "limit_changed", actor="alice", detail={"to": 1},
                          client="10.0.0.1")
        [only] = events.query(db)
        assert (only.kind, only.actor, only.client, only.detail) == (
            "limit_changed", "alice", "10.0.0.1", {"to": 1})
    finally:
        db.dispose()


def test_operator_log_ins_and_failures_are_logged_without_secrets(server: Server) -> None:
    wrong = server.call("POST", "/operator/sessions", json={
        "username": OPERATOR_USERNAME, "password": "not-the-password-1",
        "otp": "123456"})
    assert wrong.status_code == 401
    assert server.operator_token
    failed = _events(server.database_url, "operator_login_failed")
    assert failed[0].actor == OPERATOR_USERNAME and failed[0].client == "127.0.0.1"
    assert failed[0].detail == {"reason": "invalid_credentials"}
    logged = _events(server.database_url, "operator_login")
    assert [e.actor for e in logged] == [OPERATOR_USERNAME]
    with server.engine().connect() as conn:
        stored = " ".join(conn.execute(text("SELECT detail FROM significant_events")).scalars())
    assert "not-the-password-1" not in stored and OPERATOR_PASSWORD not in stored
    assert server.operator_token not in stored


def test_limit_changes_exclusions_and_refills_are_logged(server: Server) -> None:
    name, token = server.player(deposit=10_000)
    expect(server.call("PUT", "/limits", token, json={"weekly_deposit_limit": 30_000}), 200)
    [change] = [e for e in _events(server.database_url, "limit_changed") if e.actor == name]
    assert change.detail["player"] == name and change.detail["previous"] == 40_000
    assert change.detail["requested"] == change.detail["in_force"] == 30_000
    played = expect(server.spin(token, line_bet=100, draws=list(jackpot_draws())), 201).json()
    refill = played["round"]["pool_refill"]
    assert refill > 0
    [logged] = [e for e in _events(server.database_url, "pool_refill")
                if e.detail["round_id"] == played["round"]["id"]]
    assert logged.detail == {"round_id": played["round"]["id"], "amount": refill,
                             "pool_after": model().seed_cents}
    assert logged.actor is None
    expect(server.call("POST", "/self-exclusion", token, json={"days": 7}), 201)
    [excluded] = [e for e in _events(server.database_url, "self_exclusion") if e.actor == name]
    assert excluded.detail["days"] == 7 and excluded.detail["extended"] is True


def test_a_refused_change_leaves_no_event(server: Server) -> None:
    name, token = server.player()
    refused = server.call("PUT", "/limits", token, json={"weekly_deposit_limit": -5})
    assert refused.status_code == 422
    assert not [e for e in _events(server.database_url, "limit_changed") if e.actor == name]


def test_the_audit_logs_its_result(server: Server) -> None:
    done = run_cli_in_process("audit", "--database-url", server.database_url)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = _events(server.database_url, "audit_passed", "audit_failed")[0]
    assert passed.kind == "audit_passed" and passed.detail["problems"] == 0
    assert passed.detail["checked"]["rounds"] >= 1


@pytest.mark.slow
def test_server_start_logs_model_and_settings_when_they_change(
        db_kind: DatabaseKind, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    try:
        [first_model] = _events(server.database_url, "model_changed")
        assert first_model.detail["model"] == {"name": "default", "version": model().version,
                                               "sha256": model().sha256}
        assert first_model.detail["previous"] is None
        [first] = _events(server.database_url, "settings_changed")
        assert first.detail["changed"] is None
        recorded = first.detail["settings"]
        assert recorded["wallet"] == "ledger" and recorded["reality_check_seconds"] == 3600
        assert "secret_key" not in recorded and "database_url" not in recorded
        server.stop()
        server.start()  # the same settings: nothing new
        assert len(_events(server.database_url, "model_changed", "settings_changed")) == 2
        server.stop()
        server.env["STARFEVER_REALITY_CHECK_SECONDS"] = "1800"
        server.start()
        latest = _events(server.database_url, "settings_changed")[0]
        assert latest.detail["changed"] == {"reality_check_seconds": {"from": 3600,
                                                                      "to": 1800}}
        assert len(_events(server.database_url, "model_changed")) == 1
        with server.engine().connect() as conn:
            stored = " ".join(conn.execute(text("SELECT detail FROM significant_events"))
                              .scalars())
        assert server.env["STARFEVER_SECRET_KEY"] not in stored
    finally:
        server.stop()
        databases.drop(server.database_url)


def test_throttled_operator_log_ins_are_logged(server: Server) -> None:
    """The third wrong code locks the operator out for the window: each refusal, the lock-out
    included, is a failure in the log (the module's operator logged in before)."""
    name = "boss2"
    from tests.harness import create_operator

    secret = create_operator(server.database_url, name)
    wrong = str((int(pyotp.TOTP(secret).now()) + 1) % 1_000_000).zfill(6)
    codes = []
    for _ in range(4):
        answer = server.call("POST", "/operator/sessions", json={
            "username": name, "password": OPERATOR_PASSWORD, "otp": wrong})
        codes.append(answer.status_code)
        time.sleep(0.05)
    assert codes[-1] == 429
    reasons = [e.detail["reason"] for e in _events(server.database_url, "operator_login_failed")
               if e.actor == name]
    assert reasons[0] == "too_many_attempts" and len(reasons) == 4


@pytest.mark.slow
def test_a_failed_audit_is_logged_with_its_first_problems(databases: Databases,
                                                          tmp_path: Path) -> None:
    server = start_server(databases, "sqlite", tmp_path)
    try:
        _name, token = server.player(deposit=1_000)
        played = expect(server.spin(token, line_bet=1), 201).json()["round"]
        with server.engine().begin() as conn:  # an insider pays themselves more
            conn.execute(text("UPDATE rounds SET total_win = total_win + 500 WHERE id = :id"),
                         {"id": played["id"]})
        done = run_cli_in_process("audit", "--database-url", server.database_url)
        assert done.returncode == 1, done.stdout + done.stderr
        [failed] = _events(server.database_url, "audit_failed")
        assert failed.detail["problems"] >= 1
        assert any(f"round {played['id']}" in p for p in failed.detail["first_problems"])
    finally:
        server.stop()
        databases.drop(server.database_url)
