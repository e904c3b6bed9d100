"""Free rounds in ledger mode (issue 36, ADR 0064): a grant made in the back office plays the
whole game at its bet without debiting the player; each bad spin its own code with nothing
booked; the cap; idempotent creation; cancel; recall; the meters and events; concurrent spins
across two worker processes on SQLite and PostgreSQL never play more rounds than granted; the
audit and the report.

Only the race needs processes (one two-worker server per database kind); the rest runs in
this process on the app (:class:`InProcess`, the same calls as the harness's server), on
SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, text

from starfever.server import clock
from starfever.server.app import create_app
from starfever.server.audit import run_audit
from starfever.server.db import Database, sqlalchemy_url
from starfever.server.reports import Period, build_report
from tests.harness import (
    ADULT_BIRTH_DATE,
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    PLAYER_PASSWORD,
    Databases,
    Server,
    create_operator,
    expect,
    operator_log_in,
    settings_like_servers,
    start_server,
    unique_name,
)
from tests.server.conftest import skip_unless_available
from tests.server.helpers import jackpot_draws

BET = 10
API = "http://testserver/api/v1"


class InProcess:
    """The server's app in this process on a database of its own, with the calls of the
    harness's :class:`Server` that these tests use; its clock is this process's."""

    def __init__(self, client: TestClient, database_url: str, operator_token: str) -> None:
        self.client = client
        self.http = client
        self.url = "http://testserver"
        self.database_url = database_url
        self.operator_token = operator_token
        self._engine: Engine | None = None

    def call(self, method: str, path: str, token: str | None = None,
             **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.request(method, f"{API}{path}", headers=headers, **kwargs)

    def login(self, username: str) -> str:
        return str(expect(self.call("POST", "/sessions", json={
            "username": username, "password": PLAYER_PASSWORD}), 201).json()["token"])

    def player(self, deposit: int = 0) -> tuple[str, str]:
        name = unique_name("fr")
        expect(self.call("POST", "/players", json={"username": name, "password": PLAYER_PASSWORD,
                                                   "birth_date": ADULT_BIRTH_DATE}), 201)
        if deposit:
            expect(self.call("POST", f"/players/{name}/deposits", self.operator_token,
                             json={"amount": deposit},
                             headers={"Idempotency-Key": uuid.uuid4().hex}), 201)
        return name, self.login(name)

    def spin(self, token: str, line_bet: int = 1) -> httpx.Response:
        return self.call("POST", "/spins", token, json={"line_bet": line_bet},
                         headers={"Idempotency-Key": uuid.uuid4().hex})

    def balance(self, token: str) -> int:
        return int(expect(self.call("GET", "/wallet", token), 200).json()["balance"])

    def now(self) -> datetime:
        return clock.now()

    def move_clock(self, seconds: float) -> None:
        clock.advance(seconds)

    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = create_engine(sqlalchemy_url(self.database_url))
        return self._engine


AnyServer = Server | InProcess


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, databases: Databases) -> Iterator[InProcess]:
    """A ledger-mode app in this process on a fresh database of each kind."""
    skip_unless_available(databases, request.param)
    url = databases.new(request.param)
    totp = create_operator(url)
    try:
        with TestClient(create_app(settings_like_servers(url))) as client:
            operator = expect(operator_log_in(client, API, OPERATOR_USERNAME, OPERATOR_PASSWORD,
                                              totp), 201).json()["token"]
            made = InProcess(client, url, operator)
            yield made
            if made._engine is not None:
                made._engine.dispose()
    finally:
        clock.reset()
        databases.drop(url)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def two_workers(request: pytest.FixtureRequest, databases: Databases,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ledger-mode server of two worker processes on a fresh database (the race only)."""
    skip_unless_available(databases, request.param)
    started = start_server(databases, request.param, tmp_path_factory.mktemp("free"),
                           workers=2)
    with started:
        yield started
    databases.drop(started.database_url)


def grant(server: AnyServer, username: str, rounds: int = 3, line_bet: int = BET,
          **terms: Any) -> dict[str, Any]:
    body = {"grant_id": f"g-{uuid.uuid4().hex[:12]}", "player_id": username, "rounds": rounds,
            "line_bet": line_bet, **terms}
    return dict(expect(server.call("POST", "/operator/free-rounds/grants",
                                   server.operator_token, json=body), 201).json())


def free_spin(server: AnyServer, token: str, grant_id: int, line_bet: int = BET,
              draws: list[int] | None = None, key: str | None = None) -> Any:
    body: dict[str, Any] = {"line_bet": line_bet, "grant_id": grant_id}
    if draws is not None:
        body["test_draws"] = draws
    return server.call("POST", "/spins", token, json=body,
                       headers={"Idempotency-Key": key or uuid.uuid4().hex})


def entries(server: AnyServer) -> int:
    with server.engine().connect() as conn:
        return int(conn.execute(text("SELECT COUNT(*) FROM ledger_entries")).scalar_one())


def audit_ok(server: AnyServer) -> None:
    db = Database(server.database_url)
    try:
        report = run_audit(db, settings_like_servers(server.database_url))
    finally:
        db.dispose()
    assert report.ok, report.problems
    assert report.grants_checked >= 1


def test_a_free_round_plays_at_the_grants_bet_without_debiting_the_player(
        app: InProcess) -> None:
    server = app
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


def test_bad_free_spins_each_get_their_own_code_and_book_nothing(app: InProcess) -> None:
    server = app
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
        app: InProcess) -> None:
    server = app
    name, token = server.player(deposit=0)
    capped = grant(server, name, rounds=2, line_bet=50, max_win=100)
    played = expect(free_spin(server, token, capped["id"], line_bet=50,
                              draws=list(jackpot_draws())), 201).json()
    won = played["round"]["total_win"]
    assert won > 100
    assert played["free_round"]["paid_win"] == 100
    assert played["free_round"]["withheld"] == won - 100
    assert played["balance"] == 100 == server.balance(token)
    shown = {"id": capped["id"], "grant_id": capped["grant_id"], "campaign_id": None,
             "paid_win": 100, "withheld": won - 100}
    assert played["round"]["free_round"] == shown
    round_id = played["round"]["id"]  # the player's history, recall, back office, details page
    [line] = expect(server.call("GET", "/rounds", token), 200).json()["rounds"]
    assert line["free_round"] == shown
    assert expect(server.call("GET", f"/rounds/{round_id}", token), 200).json()[
        "free_round"] == shown
    recalled = expect(server.call("GET", f"/operator/rounds/{round_id}", server.operator_token),
                      200).json()
    assert recalled["round"]["free_round"] == shown
    [found] = expect(server.call("GET", "/operator/rounds", server.operator_token,
                                 params={"round_id": round_id}), 200).json()["rounds"]
    assert found["grant_id"] == capped["id"]
    for lang, words in (("de", ["Freispiel", "kein Einsatz", "1,00 €"]),
                        ("en", ["Free round", "no stake", "€1.00"])):
        page = expect(server.http.get(server.url + line["details_url"],
                                      params={"lang": lang}), 200).text
        assert all(w in page for w in [*words, capped["grant_id"]]), (lang, page)
    audit_ok(server)


def test_a_grant_id_twice_answers_the_first_and_other_terms_are_refused(
        app: InProcess) -> None:
    server = app
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
        app: InProcess) -> None:
    server = app
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
    logged = expect(server.call("GET", "/operator/events", server.operator_token, params={
        "kind": ["free_round_campaign_created", "free_round_campaign_cancelled"]}),
        200).json()["events"]
    assert [e["kind"] for e in logged if e["detail"]["campaign_id"] == campaign_id] == [
        "free_round_campaign_cancelled", "free_round_campaign_created"]


def test_the_meters_keep_free_rounds_apart_and_grants_are_significant_events(
        app: InProcess) -> None:
    """The RTP meters per bet class are of paid rounds, free rounds in rows of their own; the
    daily bets and GGR are of stakes taken; a grant's creation and cancel are logged."""
    server = app
    name, token = server.player(deposit=1_000)
    made = grant(server, name, rounds=2)
    expect(server.spin(token, line_bet=BET), 201)
    expect(free_spin(server, token, made["id"]), 201)
    expect(server.call("POST", f"/operator/free-rounds/grants/{made['id']}/cancel",
                       server.operator_token), 200)
    with server.engine().connect() as conn:
        counts = dict(conn.execute(text(
            "SELECT grant_id IS NULL, COUNT(*) FROM rounds WHERE NOT test GROUP BY 1")).all())
        stakes = conn.execute(text("SELECT COALESCE(SUM(total_bet), 0) FROM rounds "
                                   "WHERE NOT test AND grant_id IS NULL")).scalar_one()
    rtp = expect(server.call("GET", "/operator/rtp", server.operator_token), 200).json()
    assert sum(r["rounds"] for r in rtp["by_bet_class"]) == counts[True]
    assert sum(r["rounds"] for r in rtp["free_by_bet_class"]) == counts[False]
    assert "paid rounds only" in rtp["note"]
    meters = expect(server.call("GET", "/operator/meters", server.operator_token), 200).json()
    assert sum(r["rounds"] for r in meters["free_by_bet_class"]) == counts[False]
    assert sum(d["bets"] for d in meters["daily"] if d["line_bet"] is None) == stakes
    logged = expect(server.call("GET", "/operator/events", server.operator_token, params={
        "kind": ["free_round_grant_created", "free_round_grant_cancelled"]}),
        200).json()["events"]
    mine = [(e["kind"], e["actor"], e["detail"].get("rounds_lapsed")) for e in logged
            if e["detail"]["grant_id"] == made["grant_id"]]
    assert mine == [("free_round_grant_cancelled", f"backoffice:{OPERATOR_USERNAME}", 1),
                    ("free_round_grant_created", f"backoffice:{OPERATOR_USERNAME}", None)]


def test_a_free_rounds_books_are_free_round_winnings_and_operator_funding(
        app: InProcess) -> None:
    """Issue 36 item 1, ledger mode: a free round stakes nothing; its winnings are booked to the
    player's wallet as free-round winnings and its €€€ contribution as the house's funding."""
    server = app
    name, token = server.player(deposit=0)
    made = grant(server, name, rounds=24)
    played = [expect(free_spin(server, token, made["id"]), 201).json()["round"]
              for _ in range(24)]
    assert any(r["total_win"] for r in played)  # (24 rounds: one wins, else the test says so)
    with server.engine().connect() as conn:
        for r in played:
            rows = conn.execute(text(
                "SELECT book, kind, amount FROM ledger_entries WHERE round_id = :r"),
                {"r": r["id"]}).all()
            player = [(kind, amount) for book, kind, amount in rows if book == "wallet"]
            assert {kind for kind, _ in player} <= {"free_round_win", "free_round_jackpot_win"}
            assert sum(amount for _, amount in player) == r["total_win"]  # no cap: all paid
            assert "bet" not in {kind for _, kind, _ in rows}
            funding = [amount for book, kind, amount in rows if kind == "free_round_funding"]
            assert funding == [-r["contribution"]] and all(
                book.startswith("house") for book, kind, _ in rows
                if kind == "free_round_funding")
    audit_ok(server)


def test_a_cancel_lapses_only_the_unplayed_rounds_and_the_winnings_stay_paid(
        app: InProcess) -> None:
    """Issue 36: cancelling a grant, or a campaign, takes back nothing already credited: the
    balance, the books and the grant's winnings stay; only the rounds not yet played lapse
    (the next free spin is ``409 grant_cancelled``); the campaign's cost still counts them."""
    server = app
    name, token = server.player(deposit=0)
    alone = grant(server, name, rounds=3)
    now = server.now()
    campaign_id = f"c-{uuid.uuid4().hex[:10]}"
    expect(server.call("POST", "/operator/free-rounds/campaigns", server.operator_token, json={
        "campaign_id": campaign_id, "players": [name], "rounds": 2, "line_bet": BET,
        "starts_at": (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
        "ends_at": (now + timedelta(days=1)).isoformat().replace("+00:00", "Z")}), 201)
    [given] = [g for g in expect(server.call("GET", "/free-rounds", token), 200).json()[
        "grants"] if g["campaign_id"] == campaign_id]
    won = [expect(free_spin(server, token, g, draws=list(jackpot_draws())), 201).json()[
        "free_round"]["paid_win"] for g in (alone["id"], given["id"])]
    assert all(w > 0 for w in won)
    paid = server.balance(token)
    assert paid == sum(won)
    books_before = entries(server)
    cancelled = expect(server.call("POST", f"/operator/free-rounds/grants/{alone['id']}/cancel",
                                   server.operator_token), 200).json()
    campaign = expect(server.call("POST", f"/operator/free-rounds/campaigns/{campaign_id}/"
                                  "cancel", server.operator_token), 200).json()
    assert (server.balance(token), entries(server)) == (paid, books_before)
    assert (cancelled["state"], cancelled["rounds_played"], cancelled["winnings"]) == (
        "cancelled", 1, won[0])
    assert (campaign["state"], campaign["cost"]["rounds_played"],
            campaign["cost"]["winnings"]) == ("cancelled", 1, won[1])
    for grant_id in (alone["id"], given["id"]):
        refused = free_spin(server, token, grant_id)
        assert (refused.status_code, refused.json()["error"]["code"]) == (
            409, "grant_cancelled")
    assert (server.balance(token), entries(server)) == (paid, books_before)
    with server.engine().connect() as conn:
        stored = conn.execute(text(
            "SELECT id, rounds_played, winnings, cancelled_at IS NOT NULL FROM "
            "free_round_grants WHERE id IN (:a, :b) ORDER BY id"),
            {"a": alone["id"], "b": given["id"]}).all()
    assert [tuple(r) for r in stored] == sorted([(alone["id"], 1, won[0], True),
                                                 (given["id"], 1, won[1], True)])
    logged = expect(server.call("GET", "/operator/events", server.operator_token, params={
        "kind": "free_round_grant_cancelled"}), 200).json()["events"]
    [event] = [e for e in logged if e["detail"]["grant_id"] == alone["grant_id"]]
    assert (event["detail"]["rounds_lapsed"], event["detail"]["winnings"]) == (2, won[0])
    audit_ok(server)
