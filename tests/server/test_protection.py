"""Player protection: deposit limits, reality check, self-exclusion."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.harness import DatabaseKind, Databases, Server, start_server


def _limits(server: Server, token: str) -> dict[str, object]:
    response = server.call("GET", "/limits", token)
    assert response.status_code == 200
    return dict(response.json())


def test_default_weekly_deposit_limit_is_400_eur(server: Server) -> None:
    name, token = server.player()
    assert _limits(server, token)["weekly_deposit_limit"] == 40_000
    server.deposit(name, 30_000)
    server.deposit(name, 10_000)
    refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 1})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "deposit_limit_exceeded"
    assert server.balance(token) == 40_000
    assert _limits(server, token)["remaining"] == 0


def test_players_under_26_get_200_eur(server: Server) -> None:
    today = date.today()
    young = today.replace(year=today.year - 20).isoformat()
    name, token = server.player(birth_date=young)
    assert _limits(server, token)["weekly_deposit_limit"] == 20_000
    refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 20_001})
    assert refused.json()["error"]["code"] == "deposit_limit_exceeded"
    old = today.replace(year=today.year - 40).isoformat()
    _, older = server.player(birth_date=old)
    assert _limits(server, older)["weekly_deposit_limit"] == 40_000


def test_limit_decrease_is_immediate_and_increase_waits_72_hours(server: Server) -> None:
    name, token = server.player()
    lowered = server.call("PUT", "/limits", token, json={"weekly_deposit_limit": 5_000}).json()
    assert lowered["weekly_deposit_limit"] == 5_000 and lowered["pending_limit"] is None
    refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 5_001})
    assert refused.json()["error"]["code"] == "deposit_limit_exceeded"
    raised = server.call("PUT", "/limits", token, json={"weekly_deposit_limit": 30_000}).json()
    assert raised["weekly_deposit_limit"] == 5_000 and raised["pending_limit"] == 30_000
    effective = datetime.fromisoformat(raised["pending_effective_at"].replace("Z", "+00:00"))
    assert abs((effective - datetime.now(UTC)) - timedelta(hours=72)) < timedelta(minutes=1)
    still = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                        json={"amount": 5_001})
    assert still.status_code == 403
    # 72 hours later (moved in the database) the increase applies
    with server.engine().begin() as conn:
        conn.execute(text("UPDATE deposit_limits SET pending_effective_at = :t WHERE "
                          "account_id = (SELECT id FROM accounts WHERE username = :u)"),
                     {"t": datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=1),
                      "u": name})
    assert _limits(server, token)["weekly_deposit_limit"] == 30_000
    server.deposit(name, 25_000)


def test_self_exclusion_blocks_bets_and_deposits(server: Server) -> None:
    name, token = server.player(deposit=1_000)
    response = server.call("POST", "/self-exclusion", token, json={"days": 30})
    assert response.status_code == 201 and response.json()["excluded"] is True
    spin = server.spin(token)
    assert spin.status_code == 403 and spin.json()["error"]["code"] == "self_excluded"
    deposit = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 100})
    assert deposit.status_code == 403 and deposit.json()["error"]["code"] == "self_excluded"
    assert server.balance(token) == 1_000
    # cannot be shortened
    until = response.json()["excluded_until"]
    shorter = server.call("POST", "/self-exclusion", token, json={"days": 1}).json()
    assert shorter["excluded_until"] == until
    assert server.call("GET", "/self-exclusion", token).json()["excluded"] is True


@pytest.mark.slow
def test_a_due_reality_check_pauses_play_until_acknowledged(
        db_kind: DatabaseKind, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path, {"STARFEVER_REALITY_CHECK_SECONDS": "2"})
    try:
        _, token = server.player(deposit=1_000)
        first = server.spin(token, key="before-the-check")
        spin = first.json()
        check = spin["reality_check"]
        assert check["due"] is False
        assert check["net_result"] == spin["round"]["total_win"] - spin["round"]["total_bet"]
        time.sleep(2.1)
        wallet = server.call("GET", "/wallet", token).json()
        assert wallet["reality_check"]["due"] is True
        assert wallet["reality_check"]["elapsed_seconds"] >= 2
        refused = server.spin(token)
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "reality_check_due"
        assert server.balance(token) == spin["balance"]  # nothing moved
        retry = server.spin(token, key="before-the-check")  # a settled spin is still answered
        assert retry.status_code == 200 and retry.json()["round"] == spin["round"]
        acknowledged = server.call("POST", "/reality-check/acknowledge", token).json()
        assert acknowledged["due"] is False
        assert server.call("GET", "/reality-check", token).json()["due"] is False
        assert server.spin(token).status_code == 201  # play goes on
        rounds = server.call("GET", "/rounds", token).json()["rounds"]
        assert len(rounds) == 2
    finally:
        server.stop()
