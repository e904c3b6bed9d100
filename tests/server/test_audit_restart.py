"""The audit re-derives every round and catches tampering; a restart loses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from tests.harness import DatabaseKind, Databases, Server, run_cli_in_process, start_server
from tests.server.helpers import feature_draws, jackpot_draws

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def _audit(url: str) -> tuple[int, str]:
    done = run_cli_in_process("audit", "--database-url", url)
    return done.returncode, done.stdout + done.stderr


def test_audit_passes_on_the_live_database(server: Server) -> None:
    _, token = server.player(deposit=5_000)
    for draws in (None, list(jackpot_draws()), list(feature_draws("star_wild")),
                  list(feature_draws("hold_and_cash"))):
        assert server.spin(token, line_bet=1, draws=draws).status_code == 201
    code, output = _audit(server.database_url)
    assert code == 0, output
    assert "audit OK" in output and "0 mismatches" in output


@pytest.mark.parametrize(("statement", "problem"), [
    ("UPDATE rounds SET total_win = total_win + 1 WHERE id = :id", "total_win"),
    ("UPDATE rounds SET draws = '[0,0,0,0,0]' WHERE id = :id", "hash"),
    ("UPDATE wallets SET balance = balance + 1 WHERE account_id = "
     "(SELECT account_id FROM rounds WHERE id = :id)", "ledger sum"),
])
def test_audit_detects_a_tampered_round(server: Server, statement: str, problem: str) -> None:
    _, token = server.player(deposit=1_000)
    round_id = server.spin(token).json()["round"]["id"]
    engine = server.engine()
    with engine.begin() as conn:
        saved = conn.execute(text("SELECT total_win, draws FROM rounds WHERE id = :id"),
                             {"id": round_id}).one()
        conn.execute(text(statement), {"id": round_id})
    try:
        code, output = _audit(server.database_url)
        assert code == 1, output
        assert "MISMATCH" in output and problem in output
    finally:
        with engine.begin() as conn:
            conn.execute(text("UPDATE rounds SET total_win = :w, draws = :d WHERE id = :id"),
                         {"w": saved.total_win, "d": saved.draws, "id": round_id})
            if "wallets" in statement:
                conn.execute(text(statement.replace("+ 1", "- 1")), {"id": round_id})
    assert _audit(server.database_url)[0] == 0


@pytest.mark.slow
def test_restart_loses_nothing_and_test_draws_need_test_mode(
        databases: Databases, db_kind: DatabaseKind, tmp_path: Path) -> None:
    first = start_server(databases, db_kind, tmp_path)
    try:
        _, token = first.player(deposit=3_000)
        played = [first.spin(token, line_bet=2).json()["round"] for _ in range(5)]
        played.append(first.spin(token, line_bet=1, draws=list(jackpot_draws())).json()["round"])
        balance = first.balance(token)
        pool = first.call("GET", "/jackpot").json()["pool"]
    finally:
        first.stop()
    second = Server(first.database_url, tmp_path / "server2.log", test_mode=False).start()
    try:
        assert second.balance(token) == balance  # sessions survive the restart too
        assert second.call("GET", "/jackpot").json()["pool"] == pool
        recalled = second.call("GET", "/rounds", token).json()["rounds"]
        assert [r["id"] for r in recalled] == [r["id"] for r in played][::-1]
        refused = second.spin(token, line_bet=1, draws=list(jackpot_draws()))
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "test_draws_not_allowed"
        assert second.balance(token) == balance
        assert second.spin(token, line_bet=1).status_code == 201
        assert second.call("GET", "/health").json()["test_mode"] is False
    finally:
        second.stop()
    code, output = _audit(first.database_url)
    assert code == 0, output
    assert "7 rounds" in output
