"""The ``uk`` market (ADR 0077) enforced by the server across two workers: two real ``starfever
serve --market uk`` processes on one PostgreSQL database and one settable clock (ADR 0041: the
clock is moved, never slept), a request on one and the next on the other. The 2.5 s game cycle,
the stake cap of 500 minor units a spin, the young adults' cap of 200 from the birth date in
ledger mode and from the launch's ``birth_date`` in operator mode (against the real reference
operator wallet), which a uk launch must carry, and demo play only for a verified player.
Amounts are minor units, whatever the currency served (EUR before the currencies, GBP after)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from starfever.engine.model import load_model
from starfever.markets import UnknownMarket, check_model, load_market, profile_from_dict
from tests.harness import (
    Databases,
    OperatorWallet,
    Server,
    create_operator,
    expect,
    operator_mode_args,
    operator_mode_env,
    signed_launch,
    unique_name,
)

pytestmark = pytest.mark.slow  # four server processes and a wallet: not in --quick


def test_the_uk_profile_states_the_british_rules() -> None:
    uk = load_market("uk")
    assert (uk.min_round_ms, uk.max_stake_cents, uk.currency) == (2_500, 500, "GBP")
    assert not (uk.turbo or uk.slam_stop or uk.autoplay or uk.celebrate_win_equal_to_stake)
    assert uk.show_net_position and uk.show_session_clock and uk.demo == "verified_only"
    assert uk.young_adult_stake_cap is not None
    assert uk.young_adult_stake_cap.public() == {"below_age": 25, "max_stake_cents": 200}
    assert uk.line_bets() == (1, 2, 3, 4, 5, 10, 25)
    assert [uk.stake_cap_for(age) for age in (18, 24, 25, 60, None)] == [200, 200, 500, 500,
                                                                        200]
    assert uk.public()["young_adult_stake_cap"] == {"below_age": 25, "max_stake_cents": 200}
    check_model(uk, load_model("default"))  # the €€€ pool may run in the UK
    at = load_market("at")
    assert at.young_adult_stake_cap is None and at.stake_cap_for(19) == 2_000
    assert at.currency == "EUR"  # a profile without the field: the conditions' currency


@pytest.mark.parametrize(("change", "says"), [
    ({"young_adult_stake_cap": {"below_age": 25}}, "exactly below_age and max_stake_cents"),
    ({"young_adult_stake_cap": {"below_age": 25, "max_stake_cents": 200, "x": 1}},
     "exactly below_age"),
    ({"young_adult_stake_cap": {"below_age": "25", "max_stake_cents": 200}}, "whole numbers"),
    ({"young_adult_stake_cap": {"below_age": 18, "max_stake_cents": 200}}, "19..100"),
    ({"young_adult_stake_cap": {"below_age": 25, "max_stake_cents": 10}}, "smallest bet"),
    ({"young_adult_stake_cap": {"below_age": 25, "max_stake_cents": 500}}, "lie below"),
    ({"young_adult_stake_cap": [25, 200]}, "young_adult_stake_cap must be a dict"),
    ({"currency": "gbp"}, "ISO 4217"),
    ({"currency": 826}, "currency must be a str"),
])
def test_a_malformed_age_band_or_currency_is_refused(change: dict[str, Any], says: str) -> None:
    data = {**json.loads(json.dumps(load_market("uk").public())), "description": "x", **change}
    with pytest.raises(UnknownMarket, match=re.escape(says)):
        profile_from_dict(data, "test.json")


def test_the_age_band_is_stated_in_every_profile_and_the_currency_may_be_left_out() -> None:
    data = {**load_market("at").public(), "description": "x"}
    assert "currency" not in data and profile_from_dict(data, "t.json").currency == "EUR"
    del data["young_adult_stake_cap"]  # a protection is never left out by omission
    with pytest.raises(UnknownMarket, match=r"missing \['young_adult_stake_cap'\]"):
        profile_from_dict(data, "test.json")


def _birth(today: date, years: int, *, days: int = 0) -> str:
    """The birth date of a player who is ``years`` old ``today`` (``days`` later: younger)."""
    day = today.replace(year=today.year - years, day=min(today.day, 28))
    if today.day > 28:  # the 29th-31st: the player had the birthday this month already
        day = day.replace(day=28)
    return (day + timedelta(days=days)).isoformat()


class _Pair:
    """Two server processes on one database that read one clock: a request may go to either,
    as to the workers of one installation."""

    def __init__(self, one: Server, two: Server) -> None:
        self.one, self.two = one, two

    def move_clock(self, seconds: float) -> None:
        self.one.move_clock(seconds)
        self.two.clock_shift = self.one.clock_shift

    def today(self) -> date:
        return self.one.now().date()


def _pair(databases: Databases, folder: Path, env: dict[str, str] | None = None,
          args: tuple[str, ...] = ()) -> Iterator[_Pair]:
    url = databases.new("postgresql")
    totp = create_operator(url)
    servers = [Server(url, folder / f"{name}.log", env, args=("--market", "uk", *args))
               for name in ("one", "two")]
    one, two = servers
    two.clock_file = one.clock_file  # one clock for both (ADR 0041)
    two.env["STARFEVER_TEST_CLOCK_FILE"] = str(one.clock_file)
    for server in servers:
        server.operator_totp = totp
    with one.start(), two.start():
        yield _Pair(one, two)
    databases.drop(url)


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    with Databases(tmp_path_factory.mktemp("uk-db")) as made:
        if not made.postgres_available:
            pytest.skip(f"no PostgreSQL at {made.shown_admin_url}")
        yield made


@pytest.fixture(scope="module")
def ledger(databases: Databases, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Pair]:
    """``starfever serve --market uk`` twice (ledger mode), one database, one clock."""
    yield from _pair(databases, tmp_path_factory.mktemp("uk-ledger"))


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    made = OperatorWallet(tmp_path_factory.mktemp("uk-wallet"))
    yield made
    made.stop()


@pytest.fixture(scope="module")
def operator(databases: Databases, wallet: OperatorWallet,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Pair]:
    """``starfever serve --market uk --wallet operator`` twice against the reference wallet."""
    yield from _pair(databases, tmp_path_factory.mktemp("uk-operator"),
                     operator_mode_env(wallet), operator_mode_args(wallet))


def _player(pair: _Pair, birth_date: str, deposit: int = 10_000) -> str:
    """A player registered and paid in on worker one, logged in on worker two: the token."""
    name = unique_name()
    pair.one.register(name, birth_date=birth_date)
    pair.one.deposit(name, deposit)
    return pair.two.login(name)


def _cap(server: Server, token: str) -> int:
    return int(expect(server.call("GET", "/wallet", token), 200).json()["max_stake_cents"])


def _refused(server: Server, token: str, line_bet: int, code: str) -> None:
    balance = server.balance(token)
    refused = server.spin(token, line_bet=line_bet)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == code
    assert server.balance(token) == balance  # nothing debited


def test_game_serves_the_uk_market_and_a_ladder_up_to_its_cap(ledger: _Pair) -> None:
    game = expect(ledger.one.call("GET", "/game"), 200).json()
    assert game["market"] == load_market("uk").public()
    assert game["market"]["young_adult_stake_cap"]["max_stake_cents"] == 200
    assert game["bet_classes"] == [1, 2, 3, 4, 5, 10, 25]  # up to 500 minor units a spin


def test_a_young_adults_stake_above_200_is_refused_on_either_worker(ledger: _Pair) -> None:
    token = _player(ledger, _birth(ledger.today(), 20))
    assert _cap(ledger.one, token) == _cap(ledger.two, token) == 200
    _refused(ledger.one, token, 25, "stake_above_age_limit")  # 500 a spin
    _refused(ledger.two, token, 25, "stake_above_age_limit")
    expect(ledger.two.spin(token, line_bet=10), 201)  # 200 a spin is allowed
    rounds = expect(ledger.one.call("GET", "/rounds", token), 200).json()["rounds"]
    assert [r["total_bet"] for r in rounds] == [200]


def test_an_adult_of_25_stakes_up_to_500_and_no_more(ledger: _Pair) -> None:
    token = _player(ledger, _birth(ledger.today(), 25))
    assert _cap(ledger.two, token) == 500
    _refused(ledger.one, token, 50, "stake_above_market_limit")  # 1,000 a spin
    expect(ledger.one.spin(token, line_bet=25), 201)


def test_the_game_cycle_of_2_5_s_holds_across_workers(ledger: _Pair) -> None:
    token = _player(ledger, _birth(ledger.today(), 40))
    expect(ledger.one.spin(token, line_bet=1), 201)
    balance = ledger.two.balance(token)
    early = ledger.two.spin(token, line_bet=1)  # the other worker, at once
    assert early.status_code == 429, early.text
    assert early.json()["error"]["code"] == "round_too_soon"
    assert ledger.two.balance(token) == balance  # nothing debited
    ledger.move_clock(2.6)
    expect(ledger.two.spin(token, line_bet=1), 201)


def test_the_cap_rises_on_the_25th_birthday(ledger: _Pair) -> None:
    name = unique_name()
    ledger.one.register(name, birth_date=_birth(ledger.today(), 25, days=1))  # 25 tomorrow
    ledger.one.deposit(name, 10_000)
    token = ledger.two.login(name)
    _refused(ledger.two, token, 25, "stake_above_age_limit")
    ledger.move_clock(24 * 3600)
    token = ledger.one.login(name)  # a new day, a new session
    assert _cap(ledger.two, token) == 500
    expect(ledger.two.spin(token, line_bet=25), 201)


def test_demo_play_is_only_for_a_verified_player(ledger: _Pair) -> None:
    refused = ledger.one.call("POST", "/demo/sessions", json={})
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "demo_requires_verified_player"


def _launch(pair: _Pair, wallet: OperatorWallet, player_id: str, **fields: Any) -> str:
    """Launch on worker one (market uk), open the session on worker two: the token."""
    url = str(expect(signed_launch(pair.one, wallet.secret, player_id, market="uk",
                                   currency="GBP", **fields), 200).json()["url"])
    launch_token = parse_qs(urlparse(url).query)["launch"][0]
    opened = pair.two.call("POST", "/sessions", json={"launch_token": launch_token})
    return str(expect(opened, 201).json()["token"])


def test_a_uk_launch_without_a_birth_date_is_refused(operator: _Pair,
                                                     wallet: OperatorWallet) -> None:
    player_id = f"uk-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 10_000)
    refused = signed_launch(operator.two, wallet.secret, player_id, market="uk",
                            currency="GBP")
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "birth_date_required"
    demo = signed_launch(operator.one, wallet.secret, player_id, market="uk", mode="demo",
                         currency="GBP")
    expect(demo, 200)  # a demo launch stakes nothing: no birth date needed
    assert _debits(wallet, player_id) == []


def _debits(wallet: OperatorWallet, player_id: str) -> list[int]:
    return [int(t["amount"]) for t in wallet.transactions(player_id) if t["method"] == "debit"]


def test_in_operator_mode_the_launchs_birth_date_caps_the_stake(
        operator: _Pair, wallet: OperatorWallet) -> None:
    young, adult = (f"uk-{uuid.uuid4().hex[:10]}" for _ in range(2))
    for player_id in (young, adult):
        wallet.player(player_id, 10_000)
    token = _launch(operator, wallet, young, birth_date=_birth(operator.today(), 19))
    assert _cap(operator.one, token) == 200
    _refused(operator.one, token, 25, "stake_above_age_limit")
    _refused(operator.two, token, 25, "stake_above_age_limit")
    assert _debits(wallet, young) == [] and wallet.balance(young) == 10_000
    expect(operator.two.spin(token, line_bet=10), 201)
    assert _debits(wallet, young) == [200]
    operator.move_clock(2.6)
    token = _launch(operator, wallet, adult, birth_date=_birth(operator.today(), 30))
    assert _cap(operator.two, token) == 500
    _refused(operator.two, token, 50, "stake_above_market_limit")
    expect(operator.one.spin(token, line_bet=25), 201)
