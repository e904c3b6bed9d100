"""Spins, recall and the guarantees "one round, one record" and "at most once"."""

from __future__ import annotations

import uuid

from sqlalchemy import text

from starfever.engine import replay_round
from tests.harness import Server
from tests.server.helpers import feature_draws, jackpot_draws, model


def test_one_round_one_record(server: Server) -> None:
    """A spin debits the bet, pays the win, and stores exactly one round with its entries."""
    _, token = server.player(deposit=10_000)
    response = server.spin(token, line_bet=5)
    assert response.status_code == 201, response.text
    body = response.json()
    played = body["round"]
    assert played["total_bet"] == 100
    assert body["balance"] == 10_000 - 100 + played["total_win"]
    assert played["balance_before"] == 10_000 and played["balance_after"] == body["balance"]
    assert played["model_name"] == "default" and played["test"] is False
    assert body["reality_check"]["due"] in (False, True)
    assert server.balance(token) == body["balance"]
    with server.engine().connect() as conn:
        rows = conn.execute(text("SELECT COUNT(*) FROM rounds WHERE id = :id"),
                            {"id": played["id"]}).scalar_one()
        wallet_sum = conn.execute(text(
            "SELECT SUM(amount) FROM ledger_entries WHERE round_id = :id AND book = 'wallet'"),
            {"id": played["id"]}).scalar_one()
        all_sum = conn.execute(text(
            "SELECT SUM(amount) FROM ledger_entries WHERE round_id = :id"),
            {"id": played["id"]}).scalar_one()
    assert rows == 1
    assert wallet_sum == played["total_win"] - 100
    assert all_sum == 0
    replayed = replay_round(model(), 5, played["draws"], pool=played["pool_before"])
    assert replayed.total_win == played["total_win"]
    assert list(replayed.events) == played["events"]


def test_at_most_once_idempotent_retry(server: Server) -> None:
    """The same Idempotency-Key returns the same round and moves no money."""
    _, token = server.player(deposit=5_000)
    key = uuid.uuid4().hex
    first = server.spin(token, line_bet=10, key=key)
    assert first.status_code == 201
    balance = server.balance(token)
    for _ in range(3):
        again = server.spin(token, line_bet=10, key=key)
        assert again.status_code == 200
        assert again.json()["replayed"] is True
        assert again.json()["round"] == first.json()["round"]
    assert server.balance(token) == balance
    rounds = server.call("GET", "/rounds", token).json()["rounds"]
    assert len(rounds) == 1


def test_same_key_different_body_is_refused(server: Server) -> None:
    _, token = server.player(deposit=5_000)
    key = uuid.uuid4().hex
    assert server.spin(token, line_bet=1, key=key).status_code == 201
    balance = server.balance(token)
    conflict = server.spin(token, line_bet=2, key=key)
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "idempotency_key_reused"
    assert server.balance(token) == balance


def test_keys_are_per_player(server: Server) -> None:
    _, alice = server.player(deposit=1_000)
    _, bob = server.player(deposit=1_000)
    key = uuid.uuid4().hex
    a = server.spin(alice, key=key).json()["round"]["id"]
    b = server.spin(bob, key=key).json()["round"]["id"]
    assert a != b


def test_recall_pages_own_rounds(server: Server) -> None:
    _, token = server.player(deposit=10_000)
    _, other = server.player(deposit=1_000)
    ids = [server.spin(token).json()["round"]["id"] for _ in range(5)]
    server.spin(other)
    page = server.call("GET", "/rounds", token, params={"limit": 3}).json()
    assert [r["id"] for r in page["rounds"]] == ids[::-1][:3]
    rest = server.call("GET", "/rounds", token,
                       params={"limit": 3, "before": page["next_before"]}).json()
    assert [r["id"] for r in rest["rounds"]] == ids[::-1][3:]
    assert rest["next_before"] is None
    detail = server.call("GET", f"/rounds/{ids[0]}", token).json()
    for field in ("draws", "events", "balance_before", "balance_after", "model_version",
                  "created_at", "hash", "prev_hash", "pool_before"):
        assert field in detail


def test_features_play_through_test_draws(server: Server) -> None:
    _, token = server.player(deposit=10_000)
    for feature in ("star_wild", "hold_and_cash"):
        response = server.spin(token, line_bet=1, draws=list(feature_draws(feature)))
        assert response.status_code == 201, response.text
        played = response.json()["round"]
        assert played["feature"] == feature and played["test"] is True
        assert any(e["type"] == feature or e.get("feature") == feature
                   for e in played["events"])


def test_jackpot_win_is_paid_from_the_pool_and_refilled(server: Server) -> None:
    _, token = server.player(deposit=10_000)
    before = server.call("GET", "/jackpot").json()["pool"]
    played = server.spin(token, line_bet=25, draws=list(jackpot_draws())).json()["round"]
    assert played["pool_before"] == before + played["contribution"]
    expected = replay_round(model(), 25, jackpot_draws(), pool=played["pool_before"])
    assert played["progressive_win"] == expected.progressive_win == played["pool_before"] // 4
    assert played["pool_after"] == max(model().seed_cents,
                                       played["pool_before"] - played["progressive_win"])
    assert server.call("GET", "/jackpot").json()["pool"] == played["pool_after"]


def test_insufficient_funds_moves_nothing(server: Server) -> None:
    _, token = server.player(deposit=19)
    response = server.spin(token, line_bet=1)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "insufficient_funds"
    assert server.balance(token) == 19


def test_openapi_and_health_are_served(server: Server) -> None:
    spec = server.http.get(server.base.replace("/api/v1", "/openapi.json")).json()
    for path in ("/api/v1/spins", "/api/v1/rounds/{round_id}", "/api/v1/jackpot",
                 "/api/v1/players/{username}/deposits", "/api/v1/limits",
                 "/api/v1/self-exclusion", "/api/v1/reality-check", "/api/v1/operator/rtp"):
        assert path in spec["paths"], path
    health = server.call("GET", "/health").json()
    assert health["status"] == "ok" and health["test_mode"] is True
