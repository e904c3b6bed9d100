"""The ``de`` market profile (ADR 0073): its data, a loader that refuses a field it does not
know, a start that refuses a model the market does not allow (ADR 0072: no progressive), and
what the server already enforces for it: the stake cap of EUR 1.00 and the 5 s minimum round,
on an app in this process whose clock the test moves (ADR 0041)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pyotp
import pytest
from fastapi.testclient import TestClient

from starfever.engine.model import load_model
from starfever.markets import (
    MarketModelMismatch,
    UnknownMarket,
    check_model,
    load_market,
    profile_from_dict,
)
from starfever.server.app import create_app
from starfever.server.services.errors import utcnow
from starfever.server.settings import SettingsError
from tests.harness import (
    ADULT_BIRTH_DATE,
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    PLAYER_PASSWORD,
    create_operator,
    expect,
    free_port,
    run_cli,
    settings_like_servers,
    unique_name,
)

API = "http://testserver/api/v1"


def test_the_de_profile_states_the_german_rules() -> None:
    de = load_market("de")
    assert (de.min_round_ms, de.max_stake_cents) == (5_000, 100)
    assert not (de.turbo or de.slam_stop or de.autoplay or de.progressive)
    assert de.panic_button and de.one_session_per_player
    assert de.monthly_deposit_limit_cents == 100_000
    assert de.line_bets() == (1, 2, 3, 4, 5)
    public = de.public()
    assert public["progressive"] is False and public["monthly_deposit_limit_cents"] == 100_000
    at = load_market("at")
    assert at.progressive and at.monthly_deposit_limit_cents is None and not at.panic_button


@pytest.mark.parametrize(("change", "says"), [
    ({"deposit_limit": 100_000}, "unknown ['deposit_limit']"),  # a misspelt field: refused
    ({"monthly_deposit_limit_cents": 0}, "null (no limit) or positive"),
    ({"monthly_deposit_limit_cents": "1000"}, "must be a int"),
    ({"panic_button": "yes"}, "panic_button must be a bool"),
    ({"progressive": None}, "progressive must be a bool"),
])
def test_a_profile_with_an_unknown_or_malformed_field_is_refused(change: dict[str, Any],
                                                                 says: str) -> None:
    data = {**json.loads(json.dumps(load_market("de").public())), "description": "x", **change}
    with pytest.raises(UnknownMarket, match=re.escape(says)):
        profile_from_dict(data, "test.json")


def test_a_profile_without_a_field_is_refused() -> None:
    data = {**load_market("de").public(), "description": "x"}
    del data["one_session_per_player"]
    with pytest.raises(UnknownMarket, match=r"missing \['one_session_per_player'\]"):
        profile_from_dict(data, "test.json")


def test_a_market_takes_only_a_model_it_allows() -> None:
    de, at = load_market("de"), load_market("at")
    check_model(de, load_model("de"))
    check_model(at, load_model("default"))
    with pytest.raises(MarketModelMismatch, match="allows no progressive"):
        check_model(de, load_model("default"))
    with pytest.raises(MarketModelMismatch, match="lets line bets 10, 25, 50, 75, 100 cents"):
        check_model(at, load_model("de"))  # the de model states no figures for those


def test_serve_market_de_with_a_pool_model_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run_cli("serve", "--market", "de", "--port", str(free_port()), "--database-url",
                   f"sqlite:///{tmp_path}/x.db")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "starfever serve: error: market 'de' cannot serve model default 3.0: the market allows "
        "no progressive and the model has the €€€ pool (serve a model without one, e.g. "
        "--model de)"]


class _App:
    def __init__(self, client: TestClient, url: str, operator: str) -> None:
        self.client, self.url, self.operator = client, url, operator

    def call(self, method: str, path: str, token: str | None = None,
             **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.request(method, f"{API}{path}", headers=headers, **kwargs)

    def player(self, deposit: int) -> str:
        name = unique_name()
        expect(self.call("POST", "/players", json={
            "username": name, "password": PLAYER_PASSWORD, "birth_date": ADULT_BIRTH_DATE}),
            201)
        expect(self.call("POST", f"/players/{name}/deposits", self.operator,
                         json={"amount": deposit},
                         headers={"Idempotency-Key": uuid.uuid4().hex}), 201)
        return str(expect(self.call("POST", "/sessions", json={
            "username": name, "password": PLAYER_PASSWORD}), 201).json()["token"])

    def spin(self, token: str, line_bet: int) -> httpx.Response:
        return self.call("POST", "/spins", token, json={"line_bet": line_bet},
                         headers={"Idempotency-Key": uuid.uuid4().hex})

    def balance(self, token: str) -> int:
        return int(expect(self.call("GET", "/wallet", token), 200).json()["balance"])


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_App]:
    """``--market de --model de`` in this process, on SQLite."""
    url = f"sqlite:///{tmp_path_factory.mktemp('de') / 'de.db'}"
    totp = create_operator(url)
    settings = replace(settings_like_servers(url), market="de", model="de",
                       registrations_per_address=1_000)
    with pytest.raises(SettingsError, match="allows no progressive"):
        create_app(replace(settings, model="default"))  # every worker refuses it too
    with TestClient(create_app(settings)) as client:
        operator = expect(client.post(f"{API}/operator/sessions", json={
            "username": OPERATOR_USERNAME, "password": OPERATOR_PASSWORD,
            "otp": pyotp.TOTP(totp).at(utcnow())}), 201).json()["token"]
        yield _App(client, url, operator)


def test_game_serves_the_de_market_and_a_model_without_progressive(app: _App) -> None:
    game = expect(app.call("GET", "/game"), 200).json()
    assert game["market"] == load_market("de").public()
    assert game["model"]["name"] == "de"
    assert game["rtp"]["progressive"] == 0 and round(game["rtp"]["total"], 4) == 0.955


def test_market_de_refuses_a_stake_above_eur_1_and_a_round_within_5_s(
        app: _App, clock: ModuleType) -> None:
    clock.freeze()
    token = app.player(deposit=5_000)
    too_big = app.spin(token, line_bet=10)  # EUR 2.00 a game
    assert too_big.status_code == 422, too_big.text
    assert too_big.json()["error"]["code"] == "stake_above_market_limit"
    assert app.balance(token) == 5_000  # nothing debited
    expect(app.spin(token, line_bet=5), 201)  # EUR 1.00 is allowed
    after_first = app.balance(token)
    clock.advance(4.9)
    early = app.spin(token, line_bet=1)
    assert early.status_code == 429 and early.json()["error"]["code"] == "round_too_soon"
    assert app.balance(token) == after_first
    clock.advance(0.1)
    expect(app.spin(token, line_bet=1), 201)
