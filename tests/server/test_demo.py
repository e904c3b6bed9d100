"""Demo play (ADR 0066) and the back office's controls in ledger mode (ADR 0067), in process
on a real SQLite database: a demo spin plays the real game and model on a play balance and a
demo €€€ pool, and leaves the books, reports, meters, audit chain and events as they were."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from starfever.markets import load_market, profile_from_dict
from starfever.server import clock
from starfever.server.app import create_app
from starfever.server.db import Database
from starfever.server.services import demo
from starfever.server.services.errors import ServiceError
from starfever.server.settings import Settings
from tests.harness import (
    ADULT_BIRTH_DATE,
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    PLAYER_PASSWORD,
    create_operator,
    expect,
    operator_log_in,
    settings_like_servers,
    unique_name,
)

API = "http://testserver/api/v1"
SESSIONS_PER_ADDRESS = 4
SPINS_PER_ADDRESS = 40
BOOKS = ("rounds", "ledger_entries", "wallet_calls", "significant_events", "cashier_transactions",
         "sessions", "accounts")
"""Every table a real spin, a report, the meters or the audit read."""


class App:
    def __init__(self, client: TestClient, operator: str, url: str, settings: Settings) -> None:
        self.client, self.operator, self.url, self.settings = client, operator, url, settings

    def counts(self) -> dict[str, Any]:
        engine = create_engine(self.url)
        with engine.connect() as conn:
            found: dict[str, Any] = {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                                     for t in BOOKS}
            found["pool"] = conn.execute(text(
                "SELECT amount, contributions, wins, refills, hits FROM jackpot_pool")).all()
            found["head"] = conn.execute(text("SELECT * FROM chain_head")).all()
        engine.dispose()
        return found

    def demo_token(self) -> str:
        made = expect(self.client.post(f"{API}/demo/sessions", json={}), 201).json()
        assert made["balance"] == demo.DEMO_BALANCE and made["token"].startswith("demo-")
        return str(made["token"])

    def demo_spin(self, token: str, key: str | None = None, line_bet: int = 1,
                  draws: list[int] | None = None) -> Any:
        body: dict[str, Any] = {"line_bet": line_bet}
        if draws is not None:
            body["test_draws"] = draws
        return self.client.post(f"{API}/demo/spins", json=body, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": key or uuid.uuid4().hex})

    def player(self, deposit: int = 10_000) -> str:
        name = unique_name("demo")
        expect(self.client.post(f"{API}/players", json={
            "username": name, "password": PLAYER_PASSWORD, "birth_date": ADULT_BIRTH_DATE}), 201)
        expect(self.client.post(f"{API}/players/{name}/deposits", json={"amount": deposit},
                                headers={"Authorization": f"Bearer {self.operator}",
                                         "Idempotency-Key": uuid.uuid4().hex}), 201)
        return name

    def login(self, name: str) -> str:
        return str(expect(self.client.post(f"{API}/sessions", json={
            "username": name, "password": PLAYER_PASSWORD}), 201).json()["token"])

    def spin(self, token: str) -> Any:
        return self.client.post(f"{API}/spins", json={"line_bet": 1}, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex})

    def as_operator(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.client.request(method, f"{API}{path}", headers={
            "Authorization": f"Bearer {self.operator}"}, **kwargs)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.db'}"
    totp = create_operator(url)
    settings = replace(settings_like_servers(url), registrations_per_address=1_000_000,
                       demo_sessions_per_address=SESSIONS_PER_ADDRESS,
                       demo_spins_per_address=SPINS_PER_ADDRESS)
    with TestClient(create_app(settings)) as client:
        operator = expect(operator_log_in(client, API, OPERATOR_USERNAME, OPERATOR_PASSWORD,
                                          totp), 201).json()["token"]
        yield App(client, operator, url, settings)
    clock.reset()


@pytest.fixture(autouse=True)
def fresh_windows() -> Iterator[None]:
    """Every test starts in fresh rate windows (an hour on), on a clock it may move."""
    clock.advance(3601)
    yield


def test_demo_play_leaves_the_books_reports_meters_and_audit_untouched(app: App) -> None:
    name = app.player()
    expect(app.spin(app.login(name)), 201)  # something real in the books first
    before = app.counts()
    report_before = expect(app.as_operator("GET", "/operator/meters"), 200).json()
    token = app.demo_token()
    balance = demo.DEMO_BALANCE
    for _ in range(SPINS_PER_ADDRESS // 2):
        played = expect(app.demo_spin(token, line_bet=5), 201).json()
        assert played["demo"] is True and played["round"]["demo"] is True
        assert played["round"]["balance_before"] == balance
        balance = played["balance"]
    assert app.counts() == before  # no round, entry, call, event, session or account
    assert expect(app.as_operator("GET", "/operator/meters"), 200).json() == report_before
    wallet = expect(app.client.get(f"{API}/demo/wallet", headers={
        "Authorization": f"Bearer {token}"}), 200).json()
    assert wallet == {"balance": balance, "currency": "EUR", "reality_check": None,
                      "demo": True}


def test_the_demo_pool_never_touches_the_real_one(app: App) -> None:
    real_before = expect(app.client.get(f"{API}/jackpot"), 200).json()["pool"]
    demo_before = expect(app.client.get(f"{API}/demo/jackpot"), 200).json()["pool"]
    token = app.demo_token()
    contributed = 0
    for _ in range(10):
        played = expect(app.demo_spin(token, line_bet=100), 201).json()["round"]
        contributed += played["contribution"]
        assert played["progressive_win"] == 0 or played["pool_refill"] >= 0
    assert contributed > 0
    assert expect(app.client.get(f"{API}/jackpot"), 200).json()["pool"] == real_before
    assert expect(app.client.get(f"{API}/demo/jackpot"), 200).json()["pool"] \
        == demo_before + contributed


def test_a_demo_retry_answers_the_same_round_and_moves_nothing(app: App) -> None:
    token = app.demo_token()
    first = expect(app.demo_spin(token, key="demo-retry-1"), 201).json()
    again = app.demo_spin(token, key="demo-retry-1")
    assert again.status_code == 200
    assert again.json() == {**first, "replayed": True}
    other = app.demo_spin(token, key="demo-retry-1", line_bet=2)
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_key_reused"


def test_demo_sessions_and_spins_are_rate_limited_per_address(app: App) -> None:
    tokens = [app.demo_token() for _ in range(SESSIONS_PER_ADDRESS)]
    refused = app.client.post(f"{API}/demo/sessions", json={})
    assert refused.status_code == 429 and refused.json()["error"]["code"] \
        == "too_many_demo_sessions" and int(refused.headers["Retry-After"]) > 0
    for i in range(SPINS_PER_ADDRESS):  # the spins of all of the address's sessions count
        expect(app.demo_spin(tokens[i % len(tokens)]), 201)
    spun_out = app.demo_spin(tokens[0])
    assert spun_out.status_code == 429
    assert spun_out.json()["error"]["code"] == "too_many_demo_spins"
    clock.advance(61)  # the next minute
    expect(app.demo_spin(tokens[0]), 201)


def test_demo_and_real_tokens_do_not_cross(app: App) -> None:
    token = app.demo_token()
    assert app.spin(token).status_code == 401  # a demo token is no session
    real = app.login(app.player())
    wrong = app.demo_spin(real)
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "not_a_demo_token"
    forged = app.demo_spin("demo-" + "x" * 40)
    assert forged.status_code == 401 and forged.json()["error"]["code"] == "invalid_demo_token"


def test_demo_play_is_the_real_model(app: App) -> None:
    """The same draws play the same round in demo as for real (no €€€ share: the pools
    differ by design)."""
    token = app.demo_token()
    real = app.login(app.player())
    draws = expect(app.client.post(f"{API}/spins", json={"line_bet": 1}, headers={
        "Authorization": f"Bearer {real}", "Idempotency-Key": uuid.uuid4().hex}), 201
        ).json()["round"]["draws"]
    real_round = expect(app.client.post(f"{API}/spins", json={
        "line_bet": 1, "test_draws": draws}, headers={"Authorization": f"Bearer {real}",
                                                      "Idempotency-Key": uuid.uuid4().hex}),
        201).json()["round"]
    demo_round = expect(app.demo_spin(token, draws=draws), 201).json()["round"]
    for field in ("total_win", "base_win", "star_wild_win", "hold_and_cash_win", "feature",
                  "draws", "line_bet", "total_bet", "model_name", "model_version"):
        assert demo_round[field] == real_round[field], field


def test_a_market_can_forbid_demo_play_or_ask_for_a_verified_player(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    at = load_market("at").public()
    forbidden = profile_from_dict({**at, "description": "no demo", "demo": "forbidden"}, "x")
    with pytest.raises(ServiceError) as refused:
        demo.check_market(forbidden, verified=True)
    assert refused.value.code == "demo_not_allowed"
    assert load_market("strict").demo == "verified_only"
    with pytest.raises(ServiceError) as refused:
        demo.check_market(load_market("strict"), verified=False)
    assert refused.value.code == "demo_requires_verified_player"
    demo.check_market(load_market("strict"), verified=True)
    with pytest.raises(Exception, match="demo must be one of"):
        profile_from_dict({**at, "description": "x", "demo": "sometimes"}, "x")
    url = f"sqlite:///{tmp_path_factory.mktemp('strict') / 'strict.db'}"
    create_operator(url)
    strict = replace(settings_like_servers(url), market="strict")
    with TestClient(create_app(strict)) as client:
        public = client.post(f"{API}/demo/sessions", json={})
        assert public.status_code == 403
        assert public.json()["error"]["code"] == "demo_requires_verified_player"
        assert client.get(f"{API}/game").json()["market"]["demo"] == "verified_only"
        # a verified demo session (the operator's demo launch) plays, paced by the market
        db = Database(url)
        launch_token, _ = demo.launch(db, strict, f"l-{uuid.uuid4().hex}", "testclient")
        token, _ = demo.exchange(db, strict, launch_token)
        db.dispose()
        spin = {"line_bet": 1}
        first = client.post(f"{API}/demo/spins", json=spin, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": "k1"})
        assert first.status_code == 201
        early = client.post(f"{API}/demo/spins", json=spin, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": "k2"})
        assert early.status_code == 429 and early.json()["error"]["code"] == "round_too_soon"
        clock.advance(2.5)
        assert client.post(f"{API}/demo/spins", json=spin, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": "k2"}).status_code == 201


def test_back_office_maintenance_closes_real_and_demo_play(app: App) -> None:
    token, demo_token = app.login(app.player()), app.demo_token()
    events_before = app.counts()["significant_events"]
    closed = app.as_operator("PUT", "/operator/maintenance", json={
        "maintenance": True, "reason": "new build", "retry_after_seconds": 60})
    assert expect(closed, 200).json()["maintenance"] is True
    try:
        for refused in (app.spin(token), app.demo_spin(demo_token),
                        app.client.post(f"{API}/demo/sessions", json={})):
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "maintenance"
            assert refused.headers["Retry-After"] == "60"
        assert app.client.get(f"{API}/maintenance").json()["maintenance"] is True
    finally:
        opened = app.as_operator("PUT", "/operator/maintenance", json={
            "maintenance": False, "reason": "done"})
    assert expect(opened, 200).json()["maintenance"] is False
    expect(app.spin(token), 201)
    expect(app.demo_spin(demo_token), 201)
    assert app.counts()["significant_events"] == events_before + 2
    kinds = [e["kind"] for e in expect(app.as_operator(
        "GET", "/operator/events?limit=2"), 200).json()["events"]]
    assert kinds == ["maintenance_ended", "maintenance_started"]


def test_back_office_terminates_a_players_sessions(app: App) -> None:
    name = app.player()
    token, other = app.login(name), app.login(name)
    expect(app.spin(token), 201)  # the process knows the token valid
    ended = app.as_operator("POST", f"/operator/players/{name}/terminate",
                            json={"reason": "support request"})
    assert expect(ended, 200).json() == {"terminated": 2}
    for session in (token, other):
        refused = app.spin(session)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "session_terminated"
    new = app.login(name)  # a new log-in plays again
    expect(app.spin(new), 201)
    event = expect(app.as_operator("GET", "/operator/events?kind=session_terminated&limit=1"),
                   200).json()["events"][0]
    assert event["actor"] == OPERATOR_USERNAME and event["detail"]["sessions"] == 2
