"""The server's one clock (ADR 0041): the time rules read it, a test moves it, and no
production server can be told what time it is. The rules that need no process of their own
(a raised limit's 72 hours, a session's lifetime, a self-exclusion's end) are checked here on
an app in this process, by moving the clock days on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pyotp
import pytest
from fastapi.testclient import TestClient

from starfever.engine.model import load_model
from starfever.server.app import create_app
from starfever.server.services import pacing
from starfever.server.services.errors import TooManyRequests, utcnow
from starfever.server.settings import Settings, SettingsError, settings_from_env
from tests.harness import (
    ADULT_BIRTH_DATE,
    OPERATOR_PASSWORD,
    PLAYER_PASSWORD,
    SECRET,
    audit_key_file,
    create_operator,
    expect,
    free_port,
    run_cli,
    settings_like_servers,
    unique_name,
)

API = "http://testserver/api/v1"


def test_a_test_moves_and_freezes_the_clock_in_process(clock: ModuleType) -> None:
    before = datetime.now(UTC)
    clock.advance(3600)
    moved = utcnow()
    assert timedelta(hours=1) <= moved - before < timedelta(hours=1, seconds=30)
    instant = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert clock.freeze(instant) == instant
    assert utcnow() == instant == clock.now()
    clock.advance(2.5)
    assert utcnow() == instant + timedelta(seconds=2.5)
    assert pacing.now_ms() == int(instant.timestamp() * 1000) + 2500
    with pytest.raises(ValueError, match="aware datetime"):
        clock.freeze(datetime(2030, 1, 1))
    clock.reset()
    assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=30)


def test_a_test_server_follows_its_clock_file(clock: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "clock"
    clock.follow_file(str(path))
    try:
        assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=30)  # no file: no shift
        clock.write_shift(path, 72 * 3600)
        assert utcnow() - datetime.now(UTC) > timedelta(hours=71, minutes=59)
        clock.write_shift(path, -90)
        assert datetime.now(UTC) - utcnow() > timedelta(seconds=89)
        assert not list(tmp_path.glob("*.tmp"))  # replaced in one step
    finally:
        clock.follow_file(None)
    assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=30)


def test_pacing_reads_the_clock(clock: ModuleType, tmp_path: Path) -> None:
    """The market's minimum round duration measured on the moved clock: a spin 100 ms too
    early is refused, one on time passes (the rule's own tests run on real servers)."""
    from starfever.server.db import Database, migrate
    from starfever.server.models import Account

    db = Database(f"sqlite:///{tmp_path}/pacing.db")
    try:
        migrate(db)
        with db.write() as session:
            account = Account(username="paced", password_hash="x", role="player",
                              created_at=clock.freeze())
            session.add(account)
            session.flush()
            account_id = account.id
        assert pacing.claim(db, account_id, "first", 2_500) is not None
        clock.advance(2.4)
        with pytest.raises(TooManyRequests) as early:
            pacing.claim(db, account_id, "second", 2_500)
        assert early.value.code == pacing.ROUND_TOO_SOON
        clock.advance(0.1)
        assert pacing.claim(db, account_id, "second", 2_500) is not None
    finally:
        db.dispose()


PRODUCTION = {"STARFEVER_ENV": "production", "STARFEVER_SECRET_KEY": SECRET,
              "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
              "STARFEVER_APPROVED_MODELS": load_model("default").sha256}


@pytest.mark.parametrize("env", [{}, {"STARFEVER_TEST_MODE": "0"}, PRODUCTION])
def test_the_clock_file_is_refused_outside_test_mode(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError) as refused:
        settings_from_env({"STARFEVER_TEST_CLOCK_FILE": "/tmp/clock", **env})
    assert str(refused.value) == ("STARFEVER_TEST_CLOCK_FILE is accepted only with "
                                  "STARFEVER_TEST_MODE=1 in development")
    with pytest.raises(SettingsError, match="STARFEVER_TEST_MODE is refused in production"):
        settings_from_env({"STARFEVER_TEST_CLOCK_FILE": "/tmp/clock", **PRODUCTION,
                           "STARFEVER_TEST_MODE": "1"})
    assert settings_from_env({"STARFEVER_TEST_CLOCK_FILE": "/tmp/clock",
                              "STARFEVER_TEST_MODE": "1"}).test_clock_file == "/tmp/clock"


def test_serve_refuses_a_clock_file_without_test_mode_in_one_line(tmp_path: Path) -> None:
    done = run_cli("serve", "--port", str(free_port()), "--database-url",
                   f"sqlite:///{tmp_path}/x.db",
                   env={"STARFEVER_TEST_CLOCK_FILE": str(tmp_path / "clock")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("starfever serve: error: STARFEVER_TEST_CLOCK_FILE is "
                                   "accepted only with STARFEVER_TEST_MODE=1 in development")


class _App:
    """The module's server app in this process, on SQLite: its rules read the clock the test
    moves (a real process's clock is moved through its file: tests/harness.py)."""

    def __init__(self, client: TestClient, url: str) -> None:
        self.client = client
        self.url = url

    def call(self, method: str, path: str, token: str | None = None,
             **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.request(method, f"{API}{path}", headers=headers, **kwargs)

    def player(self) -> tuple[str, str]:
        name = unique_name()
        expect(self.call("POST", "/players", json={
            "username": name, "password": PLAYER_PASSWORD, "birth_date": ADULT_BIRTH_DATE}),
            201)
        return name, self.login(name)

    def login(self, name: str) -> str:
        answer = self.call("POST", "/sessions", json={"username": name,
                                                      "password": PLAYER_PASSWORD})
        return str(expect(answer, 201).json()["token"])

    def operator(self) -> str:
        """A session of a fresh operator account, logged in with the code of the clock's
        present step (an account of its own: the tests move the clock back and forth, and a
        code of a step before one already used is refused)."""
        name = unique_name("op")
        totp = create_operator(self.url, name)
        answer = self.call("POST", "/operator/sessions", json={
            "username": name, "password": OPERATOR_PASSWORD,
            "otp": pyotp.TOTP(totp).at(utcnow())})
        return str(expect(answer, 201).json()["token"])

    def deposit(self, name: str, amount: int, operator: str) -> httpx.Response:
        return self.call("POST", f"/players/{name}/deposits", operator, json={"amount": amount},
                         headers={"Idempotency-Key": uuid.uuid4().hex})


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_App]:
    url = f"sqlite:///{tmp_path_factory.mktemp('clock') / 'clock.db'}"
    create_operator(url)
    made = create_app(replace(settings_like_servers(url), registrations_per_address=1_000_000))
    with TestClient(made) as client:
        yield _App(client, url)


def test_a_raised_limit_takes_effect_72_hours_later(app: _App, clock: ModuleType) -> None:
    clock.freeze()
    name, token = app.player()
    lowered = expect(app.call("PUT", "/limits", token, json={"weekly_deposit_limit": 5_000}),
                     200).json()
    assert lowered["weekly_deposit_limit"] == 5_000 and lowered["pending_limit"] is None
    raised = expect(app.call("PUT", "/limits", token, json={"weekly_deposit_limit": 30_000}),
                    200).json()
    assert raised["pending_limit"] == 30_000
    clock.advance(72 * 3600 - 1)
    operator = app.operator()
    assert app.deposit(name, 5_001, operator).json()["error"]["code"] == \
        "deposit_limit_exceeded"  # a second early: the old limit holds
    clock.advance(1)
    token = app.login(name)  # (the player's session of three days ago has expired)
    assert expect(app.call("GET", "/limits", token), 200).json()["weekly_deposit_limit"] == \
        30_000
    expect(app.deposit(name, 25_000, operator), 201)


def test_a_session_ends_at_its_lifetime(app: _App, clock: ModuleType) -> None:
    clock.freeze()
    _, token = app.player()
    clock.advance(Settings().token_ttl_seconds - 1)
    expect(app.call("GET", "/wallet", token), 200)
    clock.advance(1)
    expired = app.call("GET", "/wallet", token)
    assert expired.status_code == 401 and expired.json()["error"]["code"] == "token_expired"


def test_a_self_exclusion_ends_when_its_days_have_passed(app: _App, clock: ModuleType) -> None:
    clock.freeze()
    name, token = app.player()
    expect(app.call("POST", "/self-exclusion", token, json={"days": 1}), 201)
    operator = app.operator()
    refused = app.deposit(name, 1_000, operator)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "self_excluded"
    clock.advance(24 * 3600 + 1)
    expect(app.deposit(name, 1_000, app.operator()), 201)
    assert expect(app.call("GET", "/self-exclusion", app.login(name)), 200).json()[
        "excluded"] is False
