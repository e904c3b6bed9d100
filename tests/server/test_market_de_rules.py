"""The ``de`` market's player protections enforced by the server (ADR 0075): one session at a
time per player, the panic button, the monthly deposit limit. Each rule is about state every
worker shares, so each is shown with two apps in this process on one PostgreSQL database (two
workers: each app has its own connections and its own memory of tokens, only the database is
common), the clock moved, never slept (ADR 0041)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import httpx
import pyotp
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from starfever.server.app import create_app
from starfever.server.db import Database
from starfever.server.models import Account, SignificantEvent
from starfever.server.services import auth, launch, market_rules
from starfever.server.services.errors import Forbidden, NotFound, Unauthorized, utcnow
from starfever.server.services.principal import Principal
from tests.harness import (
    ADULT_BIRTH_DATE,
    OPERATOR_PASSWORD,
    PLAYER_PASSWORD,
    Databases,
    create_operator,
    expect,
    settings_like_servers,
    unique_name,
)

API = "http://testserver/api/v1"


class _Worker:
    """One app (a worker) of the pair, with an operator of its own (``totp``: its second
    factor's secret)."""

    def __init__(self, client: TestClient, operator: str, totp: str) -> None:
        self.client, self.operator_name, self.totp = client, operator, totp
        self._operator: tuple[str, datetime] | None = None

    def call(self, method: str, path: str, token: str | None = None,
             **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.request(method, f"{API}{path}", headers=headers, **kwargs)

    def operator(self) -> str:
        """The operator's session token, logged in again only once the clock has passed its
        expiry (a code of the second factor is taken once)."""
        if self._operator is None or self._operator[1] <= utcnow():
            made = expect(self.call("POST", "/operator/sessions", json={
                "username": self.operator_name, "password": OPERATOR_PASSWORD,
                "otp": pyotp.TOTP(self.totp).at(utcnow())}), 201).json()
            self._operator = (made["token"], datetime.fromisoformat(made["expires_at"]))
        return self._operator[0]

    def register(self) -> str:
        name = unique_name()
        expect(self.call("POST", "/players", json={
            "username": name, "password": PLAYER_PASSWORD, "birth_date": ADULT_BIRTH_DATE}),
            201)
        return name

    def deposit(self, operator: str, name: str, amount: int) -> httpx.Response:
        return self.call("POST", f"/players/{name}/deposits", operator,
                         json={"amount": amount}, headers={"Idempotency-Key": uuid.uuid4().hex})

    def log_in(self, name: str) -> str:
        return str(expect(self.call("POST", "/sessions", json={
            "username": name, "password": PLAYER_PASSWORD}), 201).json()["token"])

    def spin(self, token: str, line_bet: int = 1) -> httpx.Response:
        return self.call("POST", "/spins", token, json={"line_bet": line_bet},
                         headers={"Idempotency-Key": uuid.uuid4().hex})

    def balance(self, token: str) -> int:
        return int(expect(self.call("GET", "/wallet", token), 200).json()["balance"])


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[_Worker, _Worker, str]]:
    """Two ``--market de --model de`` apps on one PostgreSQL database, the weekly deposit
    limit set above the month's (so the monthly one is the limit a deposit meets); and the
    database's URL."""
    with Databases(tmp_path_factory.mktemp("de-rules")) as databases:
        if not databases.postgres_available:
            pytest.skip(f"no PostgreSQL at {databases.shown_admin_url}")
        url = databases.new("postgresql")
        totps = [create_operator(url, name) for name in ("boss-one", "boss-two")]
        settings = replace(settings_like_servers(url), market="de", model="de",
                           registrations_per_address=1_000, weekly_deposit_limit=1_000_000)
        with TestClient(create_app(settings)) as one, TestClient(create_app(settings)) as two:
            yield (_Worker(one, "boss-one", totps[0]), _Worker(two, "boss-two", totps[1]),
                   url)


def _player(worker: _Worker, deposit: int) -> str:
    name = worker.register()
    expect(worker.deposit(worker.operator(), name, deposit), 201)
    return name


def test_a_log_in_on_another_worker_ends_the_first_session(
        workers: tuple[_Worker, _Worker, str], clock: ModuleType) -> None:
    one, two, _ = workers
    clock.freeze()
    name = _player(one, 5_000)
    first = one.log_in(name)
    expect(one.spin(first), 201)  # worker one now knows the first token from memory
    after = one.balance(first)
    second = two.log_in(name)  # the second session ends the first
    clock.advance(5)
    refused = one.spin(first)
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"]["code"] == "session_replaced"
    assert two.call("GET", "/wallet", first).json()["error"]["code"] == "session_replaced"
    assert two.balance(second) == after  # nothing debited
    expect(one.spin(second), 201)  # the second plays on, on either worker


def test_two_log_ins_racing_on_two_workers_leave_one_live_session(
        workers: tuple[_Worker, _Worker, str]) -> None:
    one, two, _ = workers
    name = _player(one, 1_000)
    tokens: list[str] = []
    start = threading.Barrier(2)

    def log_in(worker: _Worker) -> None:
        start.wait()
        tokens.append(worker.log_in(name))

    threads = [threading.Thread(target=log_in, args=(w,)) for w in (one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(one.call("GET", "/wallet", token).status_code for token in tokens)
    assert statuses == [200, 401]


def test_the_panic_button_excludes_for_24_hours_on_every_worker(
        workers: tuple[_Worker, _Worker, str], clock: ModuleType) -> None:
    one, two, url = workers
    clock.freeze()
    name = _player(one, 5_000)
    token = one.log_in(name)
    expect(one.spin(token), 201)
    balance = one.balance(token)
    unconfirmed = two.call("POST", "/panic-button", token, json={"confirmed": False})
    assert unconfirmed.status_code == 422
    assert unconfirmed.json()["error"]["code"] == "panic_not_confirmed"
    assert not two.call("GET", "/self-exclusion", token).json()["excluded"]
    malformed = two.call("POST", "/panic-button", token, json={"confirmed": "yes"})
    assert malformed.status_code == 422 and "error" in malformed.json()
    pressed = expect(two.call("POST", "/panic-button", token, json={"confirmed": True}),
                     201).json()
    until = datetime.fromisoformat(pressed["excluded_until"])
    assert until == utcnow() + timedelta(hours=24)
    clock.advance(5)
    refused = one.spin(token)  # the other worker refuses the next bet
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "self_excluded"
    assert one.balance(token) == balance  # nothing debited
    deposit = one.deposit(one.operator(), name, 100)
    assert deposit.status_code == 403 and deposit.json()["error"]["code"] == "self_excluded"
    assert one.balance(token) == balance  # nothing booked
    # a second press within the 24 hours runs 24 hours from itself (never shorter)
    again = expect(one.call("POST", "/panic-button", token, json={"confirmed": True}), 201)
    assert datetime.fromisoformat(again.json()["excluded_until"]) == until + timedelta(seconds=5)
    db = Database(url)
    try:
        with db.read() as session:
            logged = session.scalars(select(SignificantEvent).where(
                SignificantEvent.kind == "self_exclusion")).all()
    finally:
        db.dispose()
    assert any(f'"{name}"' in row.detail and '"panic_button":true' in row.detail.replace(" ", "")
               for row in logged)
    clock.advance(24 * 3600)
    token = two.log_in(name)
    expect(two.spin(token), 201)  # after 24 hours play goes on


def test_deposits_past_the_monthly_limit_are_refused_across_workers(
        workers: tuple[_Worker, _Worker, str], clock: ModuleType) -> None:
    one, two, _ = workers
    clock.freeze(datetime(2026, 12, 31, 22, 0, tzinfo=UTC))
    name = one.register()
    operator_one, operator_two = one.operator(), two.operator()
    expect(one.deposit(operator_one, name, 60_000), 201)
    expect(two.deposit(operator_two, name, 40_000), 201)  # EUR 1,000 this month: allowed
    token = one.log_in(name)
    over = one.deposit(operator_one, name, 1)
    assert over.status_code == 422, over.text
    assert over.json()["error"]["code"] == "monthly_deposit_limit_exceeded"
    assert one.balance(token) == 100_000  # nothing booked
    clock.advance(2 * 3600)  # 1 January: a new calendar month
    expect(two.deposit(two.operator(), name, 1), 201)


def test_two_deposits_racing_on_two_workers_cannot_pass_the_monthly_limit_together(
        workers: tuple[_Worker, _Worker, str]) -> None:
    one, two, _ = workers
    name = one.register()
    operators = {id(one): one.operator(), id(two): two.operator()}
    statuses: list[int] = []
    start = threading.Barrier(2)

    def deposit(worker: _Worker) -> None:
        start.wait()
        statuses.append(worker.deposit(operators[id(worker)], name, 60_000).status_code)

    threads = [threading.Thread(target=deposit, args=(w,)) for w in (one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201, 422]
    assert one.balance(one.log_in(name)) == 60_000


def test_in_operator_mode_the_panic_button_ends_the_session_and_refuses_a_launch(
        workers: tuple[_Worker, _Worker, str], clock: ModuleType) -> None:
    """Operator mode at the service level (the route passes ``operator_mode`` from the wallet
    port): the operator keeps the account, so the server logs a ``panic_button`` event for it,
    ends the session and refuses the player's launches for 24 hours."""
    _, _, url = workers
    clock.freeze()
    settings = replace(settings_like_servers(url), market="de", model="de")
    db = Database(url)
    try:
        player_id = f"op-player-{uuid.uuid4().hex[:8]}"
        request = launch.Launch(
            player_id=player_id, operator_session="opsess", language="de", market="de",
            return_url="https://operator.example/lobby", launch_id=uuid.uuid4().hex,
            options=launch.Options(brand=None, reality_check_seconds=None,
                                   session_time_limit_seconds=None, birth_date=None))
        token, _ = launch.exchange(db, settings, launch.launch(db, settings, request)[0])
        principal = auth.authenticate(db, settings, token)
        until = market_rules.press_panic_button(db, settings, principal, operator_mode=True)
        assert until == utcnow() + timedelta(hours=24)
        with pytest.raises(Unauthorized) as ended:
            auth.authenticate(db, settings, token)
        assert ended.value.code == "panic_button_pressed"
        with db.read() as session:
            event = session.scalars(select(SignificantEvent).where(
                SignificantEvent.kind == "panic_button")).all()[-1]
        assert player_id in event.detail
        again = replace(request, launch_id=uuid.uuid4().hex)
        with pytest.raises(Forbidden) as refused:
            launch.exchange(db, settings, launch.launch(db, settings, again)[0])
        assert refused.value.code == "self_excluded"
        clock.advance(24 * 3600)
        later = replace(request, launch_id=uuid.uuid4().hex)
        launch.exchange(db, settings, launch.launch(db, settings, later)[0])
    finally:
        db.dispose()


def test_a_market_without_a_panic_button_refuses_it(
        workers: tuple[_Worker, _Worker, str]) -> None:
    _, _, url = workers
    settings = replace(settings_like_servers(url), market="at")
    db = Database(url)
    try:
        with db.read() as session:
            account = session.scalars(select(Account).where(Account.role == "player")).first()
            assert account is not None
            principal = Principal(account_id=account.id, username=account.username,
                                  role="player", session_id=0)
        with pytest.raises(NotFound) as refused:
            market_rules.press_panic_button(db, settings, principal, operator_mode=False)
        assert refused.value.code == "panic_button_not_offered"
        assert market_rules.month_start(datetime(2026, 2, 28, 23, 59, tzinfo=UTC)) == datetime(
            2026, 2, 1, tzinfo=UTC)
    finally:
        db.dispose()


def test_game_serves_the_market_the_model_its_classes_and_prize_names(
        workers: tuple[_Worker, _Worker, str]) -> None:
    one, _, _ = workers
    game = expect(one.call("GET", "/game"), 200).json()
    assert game["market"]["name"] == "de" and game["model"]["name"] == "de"
    assert game["model"]["progressive"] is False and game["jackpot"]["progressive"] is False
    assert game["hold_and_cash"]["prize_names"] == "multiplier"
    assert game["bet_classes"] == [1, 2, 3, 4, 5]  # EUR 0.20 to 1.00 a game
