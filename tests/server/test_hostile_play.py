"""A hostile tester's ways around the player protections: acknowledging the reality check before
it is due (so that it never stops play), and retrying an older spin under the strict market's
minimum round duration (refused, or taken as a new round start that paced the next real spin).

On a real ``starfever serve`` (tests/harness.py), on SQLite and on PostgreSQL, the pacing also
in operator mode against the reference operator wallet."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from starfever.markets import load_market
from starfever.server.settings import Settings
from tests.harness import (
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    expect,
    operator_mode_args,
    operator_mode_env,
    signed_launch,
    start_server,
)

STRICT_S = load_market("strict").min_round_ms / 1000
INTERVAL_S = Settings().reality_check_seconds
"""The reality check's interval of the module's server (the default: an hour)."""


def test_an_early_acknowledgement_of_the_reality_check_changes_nothing(server: Server) -> None:
    """The module's server, its interval the default hour: the test moves its clock."""
    _, token = server.player(deposit=1_000)
    expect(server.spin(token), 201)
    check = expect(server.call("GET", "/reality-check", token), 200).json()
    assert check["due"] is False
    server.move_clock(INTERVAL_S / 2)
    early = expect(server.call("POST", "/reality-check/acknowledge", token), 200).json()
    assert early["due"] is False
    assert early["next_due_at"] == check["next_due_at"]  # the clock did not move
    assert server.call("GET", "/reality-check", token).json() \
        ["next_due_at"] == check["next_due_at"]
    server.move_clock(INTERVAL_S / 2 + 0.2)
    balance = server.balance(token)
    refused = server.spin(token)  # so play still stops when the check falls due
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "reality_check_due"
    assert server.balance(token) == balance
    seen = expect(server.call("POST", "/reality-check/acknowledge", token), 200).json()
    assert seen["due"] is False and seen["next_due_at"] > check["next_due_at"]
    again = expect(server.call("POST", "/reality-check/acknowledge", token), 200).json()
    assert again["next_due_at"] == seen["next_due_at"]  # twice: still one interval
    expect(server.spin(token), 201)


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield started
    started.stop()


def _strict_player(mode: str, db_kind: DatabaseKind, databases: Databases, tmp_path: Path,
                   request: pytest.FixtureRequest) -> tuple[Server, str]:
    """A one-worker ``--market strict`` server in ``mode`` and a player of it with money."""
    args: tuple[str, ...] = ("--market", "strict")
    env: dict[str, str] = {}
    wallet: OperatorWallet | None = None
    if mode == "operator":
        wallet = request.getfixturevalue("wallet")
        args, env = (*args, *operator_mode_args(wallet)), operator_mode_env(wallet)
    server = start_server(databases, db_kind, tmp_path, env, args=args)
    if wallet is None:
        return server, server.player(deposit=10_000)[1]
    player_id = f"op-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 10_000)
    url = expect(signed_launch(server, wallet.secret, player_id, market="strict"), 200)
    launch_token = parse_qs(urlparse(url.json()["url"]).query)["launch"][0]
    token = expect(server.call("POST", "/sessions", json={"launch_token": launch_token}),
                   201).json()["token"]
    return server, token


@pytest.mark.parametrize("mode", ["ledger", "operator"])
def test_a_replay_of_any_settled_spin_is_not_paced_and_moves_no_pace(
        mode: str, db_kind: DatabaseKind, databases: Databases, tmp_path: Path,
        request: pytest.FixtureRequest) -> None:
    server, token = _strict_player(mode, db_kind, databases, tmp_path, request)
    try:
        first = expect(server.spin(token, key="first"), 201).json()
        server.move_clock(STRICT_S + 0.1)
        second = expect(server.spin(token, key="second"), 201).json()
        server.move_clock(STRICT_S + 0.1)
        # a replay does not start a round: the next new spin is paced from "second" still
        assert expect(server.spin(token, key="first"), 200).json()["round"] == first["round"]
        third = server.spin(token, key="third")
        assert third.status_code == 201, third.text
        balance = server.balance(token)
        # straight after a round: a retry of an older settled spin is answered its round
        again = server.spin(token, key="first")
        assert again.status_code == 200, again.text
        assert again.json()["round"] == first["round"] and again.json()["replayed"] is True
        assert expect(server.spin(token, key="second"), 200).json()["round"] == second["round"]
        early = server.spin(token, key="fourth")  # a new spin is still paced
        assert early.status_code == 429, early.text
        assert early.json()["error"]["code"] == "round_too_soon"
        assert server.balance(token) == balance
        rounds = expect(server.call("GET", "/rounds", token), 200).json()["rounds"]
        assert len(rounds) == 3
    finally:
        server.stop()
