"""Free rounds in ledger mode (issue 36, ADR 0064): a grant made in the back office plays the
whole game at its bet without debiting the player; each bad spin its own code with nothing
booked; the cap; idempotent creation; cancel; concurrent spins across two worker processes on
SQLite and PostgreSQL never play more rounds than granted; the audit and the report."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from starfever.server.audit import run_audit
from starfever.server.db import Database
from starfever.server.reports import Period, build_report
from tests.harness import Databases, Server, expect, settings_like_servers, start_server
from tests.server.conftest import skip_unless_available
from tests.server.helpers import jackpot_draws

BET = 10


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def two_workers(request: pytest.FixtureRequest, databases: Databases,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ledger-mode server of two worker processes on a fresh database."""
    skip_unless_available(databases, request.param)
    started = start_server(databases, request.param, tmp_path_factory.mktemp("free"),
                           workers=2)
    with started:
        yield started
    databases.drop(started.database_url)


def grant(server: Server, username: str, rounds: int = 3, line_bet: int = BET,
          **terms: Any) -> dict[str, Any]:
    body = {"grant_id": f"g-{uuid.uuid4().hex[:12]}", "player_id": username, "rounds": rounds,
            "line_bet": line_bet, **terms}
    return dict(expect(server.call("POST", "/operator/free-rounds/grants",
                                   server.operator_token, json=body), 201).json())


def free_spin(server: Server, token: str, grant_id: int, line_bet: int = BET,
              draws: list[int] | None = None, key: str | None = None) -> Any:
    body: dict[str, Any] = {"line_bet": line_bet, "grant_id": grant_id}
    if draws is not None:
        body["test_draws"] = draws
    return server.call("POST", "/spins", token, json=body,
                       headers={"Idempotency-Key": key or uuid.uuid4().hex})


def entries(server: Server) -> int:
    with server.engine().connect() as conn:
        return int(conn.execute(text("SELECT COUNT(*) FROM ledger_entries")).scalar_one())


def audit_ok(server: Server) -> None:
    db = Database(server.database_url)
    try:
        report = run_audit(db, settings_like_servers(server.database_url))
    finally:
        db.dispose()
    assert report.ok, report.problems
    assert report.grants_checked >= 1


def test_a_free_round_plays_at_the_grants_bet_without_debiting_the_player(
        two_workers: Server) -> None:
    server = two_workers
    name, token = server.player(deposit=0)
    made = grant(server, name, rounds=3)
    listed = expect(server.call("GET", "/free-rounds", token), 200).json()["grants"]
    assert [(g["id"], g["rounds_left"], g["winnings"]) for g in listed] == [(made["id"], 3, 0)]
    played = expect(free_spin(server, token, made["id"]), 201).json()
    r = played["round"]
    assert r["line_bet"] == BET and r["balance_before"] == 0
    assert played["balance"] == played["free_round"]["paid_win"] == r["total_win"]
    assert played["free_round"]["rounds_left"] == 2
    key = uuid.uuid4().hex  # a retry answers the same round and plays no second one
    first = expect(free_spin(server, token, made["id"], key=key), 201).json()
    again = expect(free_spin(server, token, made["id"], key=key), 200).json()
    assert again["round"]["id"] == first["round"]["id"]
    assert again["free_round"]["rounds_left"] == first["free_round"]["rounds_left"] == 1
    audit_ok(server)


def test_bad_free_spins_each_get_their_own_code_and_book_nothing(two_workers: Server) -> None:
    server = two_workers
    name, token = server.player(deposit=1_000)
    _, other_token = server.player(deposit=1_000)
    used_up = grant(server, name, rounds=1)
    expect(free_spin(server, token, used_up["id"]), 201)
    cancelled = grant(server, name, rounds=2)
    expect(server.call("POST", f"/operator/free-rounds/grants/{cancelled['id']}/cancel",
                       server.operator_token), 200)
    expiring = grant(server, name, rounds=2, expires_at=(
        server.now() + timedelta(minutes=2)).isoformat().replace("+00:00", "Z"))
    mine = grant(server, name, rounds=2)
    before, balance = entries(server), server.balance(token)
    cases = [(other_token, mine["id"], BET, 403, "grant_of_another_player"),
             (token, mine["id"], BET * 2, 422, "grant_bet_mismatch"),
             (token, cancelled["id"], BET, 409, "grant_cancelled"),
             (token, used_up["id"], BET, 409, "grant_used_up"),
             (token, 999_999, BET, 404, "grant_not_found")]
    for who, grant_id, bet, status, code in cases:
        refused = free_spin(server, who, grant_id, line_bet=bet)
        assert (refused.status_code, refused.json()["error"]["code"]) == (status, code)
    server.move_clock(180)
    refused = free_spin(server, token, expiring["id"])
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "grant_expired")
    assert (entries(server), server.balance(token)) == (before, balance)
    listed = expect(server.call("GET", "/free-rounds", token), 200).json()["grants"]
    assert [g["id"] for g in listed] == [mine["id"]]  # only what can be played


def test_winnings_above_the_cap_are_not_paid_and_the_player_is_told(
        two_workers: Server) -> None:
    server = two_workers
    name, token = server.player(deposit=0)
    capped = grant(server, name, rounds=2, line_bet=50, max_win=100)
    played = expect(free_spin(server, token, capped["id"], line_bet=50,
                              draws=list(jackpot_draws())), 201).json()
    won = played["round"]["total_win"]
    assert won > 100
    assert played["free_round"]["paid_win"] == 100
    assert played["free_round"]["withheld"] == won - 100
    assert played["balance"] == 100 == server.balance(token)
    audit_ok(server)


def test_a_grant_id_twice_answers_the_first_and_other_terms_are_refused(
        two_workers: Server) -> None:
    server = two_workers
    name, _ = server.player()
    body = {"grant_id": f"g-{uuid.uuid4().hex[:12]}", "player_id": name, "rounds": 5,
            "line_bet": BET}
    first = expect(server.call("POST", "/operator/free-rounds/grants", server.operator_token,
                               json=body), 201).json()
    again = expect(server.call("POST", "/operator/free-rounds/grants", server.operator_token,
                               json=body), 200).json()
    assert again == first
    other = server.call("POST", "/operator/free-rounds/grants", server.operator_token,
                        json={**body, "rounds": 6})
    assert (other.status_code, other.json()["error"]["code"]) == (409, "grant_id_reused")
    too_long = server.call("POST", "/operator/free-rounds/grants", server.operator_token, json={
        **body, "grant_id": "g-long", "expires_at": (server.now() + timedelta(days=91))
        .isoformat().replace("+00:00", "Z")})
    assert (too_long.status_code, too_long.json()["error"]["code"]) == (422, "invalid_grant")
    odd_bet = server.call("POST", "/operator/free-rounds/grants", server.operator_token,
                          json={**body, "grant_id": "g-odd", "line_bet": 7})
    assert (odd_bet.status_code, odd_bet.json()["error"]["code"]) == (422, "invalid_grant")


def test_concurrent_spins_on_one_grant_never_play_more_rounds_than_granted(
        two_workers: Server) -> None:
    """Forty spins at once on a grant of five, over two worker processes (the requests are
    spread over both), and the player's second tab playing too: five rounds, never six."""
    server = two_workers
    name, token = server.player(deposit=0)
    second_tab = server.login(name)
    made = grant(server, name, rounds=5)
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda i: free_spin(server, (token, second_tab)[i % 2],
                                                    made["id"]), range(40)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] * 5 + [409] * 35, statuses
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == \
        {"grant_used_up"}
    with server.engine().connect() as conn:
        played = conn.execute(text("SELECT COUNT(*), COALESCE(SUM(paid_win), 0) FROM rounds "
                                   "WHERE grant_id = :g"), {"g": made["id"]}).one()
        stored = conn.execute(text("SELECT rounds_played, winnings FROM free_round_grants "
                                   "WHERE id = :g"), {"g": made["id"]}).one()
    assert tuple(played) == tuple(stored) and played[0] == 5
    assert server.balance(token) == played[1]
    audit_ok(server)


def test_the_report_keeps_free_rounds_out_of_ggr_and_states_their_cost(
        two_workers: Server) -> None:
    server = two_workers
    name, token = server.player(deposit=1_000)
    campaign_id = f"c-{uuid.uuid4().hex[:10]}"
    now = server.now()
    expect(server.call("POST", "/operator/free-rounds/campaigns", server.operator_token, json={
        "campaign_id": campaign_id, "players": [name], "rounds": 2, "line_bet": BET,
        "starts_at": (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
        "ends_at": (now + timedelta(days=1)).isoformat().replace("+00:00", "Z")}), 201)
    [given] = expect(server.call("GET", "/free-rounds", token), 200).json()["grants"]
    assert given["campaign_id"] == campaign_id
    paid = expect(server.spin(token, line_bet=1), 201).json()["round"]
    free = [expect(free_spin(server, token, given["id"]), 201).json()["round"]
            for _ in range(2)]
    db = Database(server.database_url)
    try:
        day = now.astimezone(UTC).date()
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        report = build_report(db, Period("daily", day.isoformat(), start - timedelta(days=1),
                                         start + timedelta(days=3)))
    finally:
        db.dispose()
    assert report.total.bets >= paid["total_bet"]
    assert report.total.free_rounds >= 2
    cost = {c.campaign: c for c in report.free_round_costs}[campaign_id]
    assert cost.rounds_played == 2
    assert cost.winnings == sum(r["total_win"] for r in free)
    assert cost.jackpot_funding == sum(r["contribution"] for r in free)
    listed = expect(server.call("GET", "/operator/free-rounds", server.operator_token),
                    200).json()
    shown = {c["campaign_id"]: c for c in listed["campaigns"]}[campaign_id]
    assert shown["cost"]["rounds_played"] == 2
    cancelled = expect(server.call("POST", f"/operator/free-rounds/campaigns/{campaign_id}/"
                                   "cancel", server.operator_token), 200).json()
    assert cancelled["state"] == "cancelled"
    assert expect(server.call("GET", "/free-rounds", token), 200).json()["grants"] == []
