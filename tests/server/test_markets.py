"""Market profiles (ADR 0018): the profile files, ``starfever serve --market``, the profile and
the running model's exact RTP in ``GET /game``, and the server's own enforcement of the
strict market's minimum round duration and largest stake, with two workers on SQLite and on
PostgreSQL (the pacing lives in the database, not in a process)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from starfever.engine.model import load_model
from starfever.markets import UnknownMarket, load_market, market_names, profile_from_dict
from starfever.math.figures import cached
from starfever.server.settings import SettingsError, settings_from_env
from tests.harness import DatabaseKind, Databases, Server, expect, run_cli, start_server
from tests.server.conftest import skip_unless_available

pytestmark = pytest.mark.slow  # servers with two workers: not in ./scripts/test --quick

STRICT_MS = 2500


def test_the_shipped_profiles() -> None:
    assert market_names() == ["at", "de", "strict", "uk"]
    at, strict = load_market("at"), load_market("strict")
    assert (at.turbo, at.slam_stop, at.min_round_ms, at.autoplay) == (True, True, 0, False)
    assert (strict.turbo, strict.slam_stop, strict.min_round_ms) == (False, False, STRICT_MS)
    assert strict.show_net_position and strict.show_session_clock and not strict.autoplay
    assert not strict.celebrate_win_equal_to_stake and at.celebrate_win_equal_to_stake
    assert set(strict.public()) >= {"name", "turbo", "slam_stop", "min_round_ms",
                                    "show_net_position", "show_session_clock"}


@pytest.mark.parametrize(("change", "says"), [
    ({"autoplay": True}, "autoplay is offered in no market"),
    ({"turbo": 1}, "turbo must be a bool"),
    ({"min_round_ms": True}, "min_round_ms must be a int"),
    ({"min_round_ms": -1}, "min_round_ms must be 0..60000"),
    ({"max_stake_cents": 10}, "smallest bet"),
    ({"big_win_x": [30, 10, 100]}, "three ascending"),
    ({"colour": "red"}, "unknown ['colour']"),
])
def test_a_broken_profile_is_refused_in_one_line(change: dict[str, Any], says: str) -> None:
    data = {**json.loads(json.dumps(load_market("strict").public())),
            "description": "x", **change}
    with pytest.raises(UnknownMarket, match=says.replace("[", r"\[").replace("]", r"\]")):
        profile_from_dict(data, "test.json")


def test_an_unknown_market_is_one_line_and_exit_2() -> None:
    with pytest.raises(UnknownMarket, match="unknown market 'xx'; markets: at, de, strict, uk"):
        load_market("xx")
    with pytest.raises(SettingsError, match="STARFEVER_MARKET"):
        settings_from_env({"STARFEVER_MARKET": "xx"})
    done = run_cli("serve", "--market", "xx", "--port", "0")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "starfever serve: error: unknown market 'xx'; markets: at, de, strict, uk"]


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    with Databases(tmp_path_factory.mktemp("db")) as made:
        yield made


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def strict(request: pytest.FixtureRequest, databases: Databases,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``starfever serve --market strict --model rtp94`` with two workers."""
    kind: DatabaseKind = request.param
    skip_unless_available(databases, kind)
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"strict-{kind}"),
                           workers=2, args=("--market", "strict", "--model", "rtp94"))
    with started:
        yield started
    databases.drop(started.database_url)


def test_game_serves_the_market_and_the_running_models_exact_rtp(strict: Server) -> None:
    game = expect(strict.call("GET", "/game"), 200).json()
    assert game["market"] == load_market("strict").public()
    figures = cached(load_model("rtp94"))
    assert figures is not None
    total, progressive = figures.exact.total, figures.exact.progressive
    assert game["rtp"] == {"total": float(total), "game": float(total - progressive),
                           "progressive": float(progressive)}
    assert round(game["rtp"]["total"], 4) == 0.94  # rtp94, not the default's 95.5 %
    assert game["model"]["name"] == "rtp94"
    assert game["jackpot"]["seed_cents"] == 100_000
    assert game["jackpot"]["contribution_rate"] == 0.01
    assert "advertised_rtp" not in game


def _rounds(server: Server, token: str) -> int:
    return len(expect(server.call("GET", "/rounds", token), 200).json()["rounds"])


def test_a_spin_before_the_minimum_round_duration_is_refused_and_debits_nothing(
        strict: Server) -> None:
    _, token = strict.player(deposit=10_000)
    first_key = uuid.uuid4().hex
    first = expect(strict.spin(token, key=first_key), 201).json()
    balance = strict.balance(token)
    early = strict.spin(token)
    assert early.status_code == 429, early.text
    assert early.json()["error"]["code"] == "round_too_soon"
    assert int(early.headers["retry-after"]) >= 1
    assert strict.balance(token) == balance and _rounds(strict, token) == 1
    # a retry of the spin just played is not paced: it replays its round, no money moves
    again = expect(strict.spin(token, key=first_key), 200).json()
    assert again["round"]["id"] == first["round"]["id"] and strict.balance(token) == balance
    strict.move_clock(STRICT_MS / 1000 + 0.1)
    expect(strict.spin(token), 201)
    assert _rounds(strict, token) == 2


def test_spins_racing_on_two_workers_play_one_round(strict: Server) -> None:
    _, token = strict.player(deposit=10_000)
    statuses: list[int] = []
    start = threading.Barrier(6)

    def send() -> None:
        with httpx.Client(timeout=30) as http:
            start.wait()
            statuses.append(http.post(f"{strict.base}/spins", json={"line_bet": 1}, headers={
                "Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex,
            }).status_code)

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] + [429] * 5
    assert _rounds(strict, token) == 1
    assert strict.balance(token) == 10_000 - 20 + expect(
        strict.call("GET", "/rounds", token), 200).json()["rounds"][0]["total_win"]


def test_a_refused_spin_uses_no_pace_and_the_stake_is_capped(strict: Server) -> None:
    name, token = strict.player(deposit=0)
    broke = strict.spin(token)
    assert broke.status_code == 409 and broke.json()["error"]["code"] == "insufficient_funds"
    strict.deposit(name, 5_000)
    expect(strict.spin(token), 201)  # the refusal held no pace: this one may start at once
    strict.move_clock(STRICT_MS / 1000 + 0.1)
    too_big = strict.spin(token, line_bet=75)  # EUR 15.00 > the strict market's EUR 10.00
    assert too_big.status_code == 422
    assert too_big.json()["error"]["code"] == "stake_above_market_limit"
    expect(strict.spin(token, line_bet=50), 201)  # EUR 10.00 is allowed
