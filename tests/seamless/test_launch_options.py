"""The launch's optional fields end to end (OPERATOR-WALLET.md, "Launching the game"): a real
``starfever serve --wallet operator`` against the reference wallet as a real process, on SQLite
and on PostgreSQL. Time rules move the server's clock (ADR 0041), never sleep; the moves of a
module add up to less than the reference wallet's 5-minute window for a call's timestamp."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from sqlalchemy import select, text

from starfever.server.models import SessionToken
from tests.harness import (
    DATABASE_KINDS,
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

pytestmark = pytest.mark.slow

LIMIT_S = 60
"""The shortest reality-check interval and session time limit a launch may set."""


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"options-{kind}"),
                           operator_mode_env(wallet), args=operator_mode_args(wallet))
    with started:
        yield started
    databases.drop(started.database_url)


def _new_player(wallet: OperatorWallet, balance: int = 10_000) -> str:
    player_id = f"opt-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, balance)
    return player_id


def _session(server: Server, wallet: OperatorWallet, player_id: str, **options: Any) -> str:
    """Launch ``player_id`` with ``options`` and open its session: the bearer token."""
    url = str(expect(signed_launch(server, wallet.secret, player_id, **options), 200)
              .json()["url"])
    launch_token = parse_qs(urlparse(url).query)["launch"][0]
    opened = server.call("POST", "/sessions", json={"launch_token": launch_token})
    return str(expect(opened, 201).json()["token"])


def _row(server: Server, sql: str, **params: Any) -> dict[str, Any] | None:
    with server.engine().connect() as conn:
        found = conn.execute(text(sql), params).first()
    return None if found is None else dict(found._mapping)


def _applied(wallet: OperatorWallet, player_id: str, method: str) -> int:
    return sum(1 for t in wallet.transactions(player_id) if t["method"] == method
               and t["applied"])


def _years_ago(years: int, days: int = 0) -> str:
    """The date ``years`` back from the server's UTC today (29 February: the 28th), moved
    ``days`` on."""
    today = datetime.now(UTC).date()
    try:
        then = today.replace(year=today.year - years)
    except ValueError:
        then = today.replace(year=today.year - years, day=28)
    return (then + timedelta(days=days)).isoformat()


def test_a_launchs_options_are_stored_with_its_session_and_player(
        server: Server, wallet: OperatorWallet) -> None:
    player_id = _new_player(wallet)
    token = _session(server, wallet, player_id, brand="casino-nord",
                     reality_check_seconds=900, session_time_limit_seconds=1800,
                     birth_date="1990-05-17")
    answer = expect(server.call("GET", "/wallet", token), 200).json()
    assert answer["reality_check"]["interval_seconds"] == 900
    assert 1790 <= answer["session_time_left_seconds"] <= 1800
    account = _row(server, "SELECT id, reality_check_seconds, birth_date FROM accounts "
                           "WHERE external_id = :p", p=player_id)
    assert account is not None and account["reality_check_seconds"] == 900
    assert str(account["birth_date"]) == "1990-05-17"
    with server.engine().connect() as conn:  # the model's columns read instants alike
        brand, opened, ends = conn.execute(
            select(SessionToken.brand, SessionToken.created_at, SessionToken.play_ends_at)
            .where(SessionToken.account_id == account["id"])).one()
    assert brand == "casino-nord"
    assert ends is not None and ends - opened == timedelta(seconds=1800)
    # the brand is found again from the round, for support, in the back office's recall
    played = expect(server.spin(token), 201).json()
    assert played["session_time_left_seconds"] is not None
    recalled = expect(server.call("GET", f"/operator/rounds/{played['round']['id']}",
                                  server.operator_token), 200).json()
    assert recalled["brand"] == "casino-nord"
    # a later launch without the options: the server's interval, no time limit, no brand;
    # the birth date on record stays
    again = _session(server, wallet, player_id)
    plain = expect(server.call("GET", "/wallet", again), 200).json()
    assert plain["reality_check"]["interval_seconds"] == 3600
    assert plain["session_time_left_seconds"] is None
    account = _row(server, "SELECT reality_check_seconds, birth_date FROM accounts "
                           "WHERE external_id = :p", p=player_id)
    assert account == {"reality_check_seconds": None, "birth_date": account["birth_date"]}
    assert str(account["birth_date"]) == "1990-05-17"


def test_the_launchs_reality_check_interval_pauses_play_when_due(
        server: Server, wallet: OperatorWallet) -> None:
    player_id = _new_player(wallet)
    token = _session(server, wallet, player_id, reality_check_seconds=LIMIT_S)
    first = expect(server.spin(token), 201).json()["reality_check"]
    assert (first["due"], first["interval_seconds"]) == (False, LIMIT_S)
    server.move_clock(LIMIT_S + 1)
    due = server.spin(token)
    assert (due.status_code, due.json()["error"]["code"]) == (409, "reality_check_due")
    assert _applied(wallet, player_id, "debit") == 1  # the refused spin sent no debit
    seen = expect(server.call("POST", "/reality-check/acknowledge", token), 200).json()
    assert (seen["due"], seen["interval_seconds"]) == (False, LIMIT_S)
    expect(server.spin(token), 201)


def test_a_session_past_its_time_limit_takes_no_new_spin_and_says_why(
        server: Server, wallet: OperatorWallet) -> None:
    player_id = _new_player(wallet)
    token = _session(server, wallet, player_id, session_time_limit_seconds=LIMIT_S)
    key = uuid.uuid4().hex
    played = expect(server.spin(token, key=key), 201).json()
    assert 0 < played["session_time_left_seconds"] <= LIMIT_S
    server.move_clock(LIMIT_S + 1)
    refused = server.spin(token)
    assert (refused.status_code, refused.json()["error"]["code"]) == \
        (403, "session_time_limit_reached")
    assert expect(server.call("GET", "/wallet", token), 200).json()[
        "session_time_left_seconds"] == 0
    # the spin taken before the limit is still answered (a retry moves nothing)
    retry = expect(server.spin(token, key=key), 200).json()
    assert retry["round"]["id"] == played["round"]["id"]
    assert (_applied(wallet, player_id, "debit"), _applied(wallet, player_id, "credit")) \
        == (1, 1)
    # a new launch opens a new session with its own limit
    expect(server.spin(_session(server, wallet, player_id,
                                session_time_limit_seconds=LIMIT_S)), 201)


def test_a_spin_under_way_when_the_time_limit_runs_out_finishes_and_is_credited(
        server: Server, wallet: OperatorWallet) -> None:
    player_id = _new_player(wallet)
    token = _session(server, wallet, player_id, session_time_limit_seconds=LIMIT_S)
    account = _row(server, "SELECT id FROM accounts WHERE external_id = :p", p=player_id)
    assert account is not None
    wallet.fault("debit", "delay", seconds=2.0)  # the debit is on its way when time runs out
    answers: dict[str, httpx.Response] = {}
    spinning = threading.Thread(target=lambda: answers.update(spin=server.spin(token)))
    spinning.start()
    deadline = time.monotonic() + 15
    while _row(server, "SELECT id FROM wallet_calls WHERE account_id = :a AND kind = 'debit'",
               a=account["id"]) is None:
        assert time.monotonic() < deadline, "the spin's debit was never recorded"
        time.sleep(0.05)
    server.move_clock(LIMIT_S + 1)
    spinning.join()
    assert answers["spin"].status_code == 201, answers["spin"].text
    assert answers["spin"].json()["session_time_left_seconds"] == 0
    deadline = time.monotonic() + 15
    while _applied(wallet, player_id, "credit") != 1:
        assert time.monotonic() < deadline, "the round was never credited"
        time.sleep(0.05)
    assert _applied(wallet, player_id, "rollback") == 0
    refused = server.spin(token)
    assert refused.json()["error"]["code"] == "session_time_limit_reached"


@pytest.mark.parametrize(("options", "status", "code"), [
    ({"reality_check_seconds": LIMIT_S - 1}, 422, "reality_check_out_of_range"),
    ({"reality_check_seconds": 12 * 3600 + 1}, 422, "reality_check_out_of_range"),
    ({"session_time_limit_seconds": 24 * 3600 + 1}, 422, "session_time_limit_out_of_range"),
    ({"birth_date": "17.05.1990"}, 422, "invalid_launch"),
    ({"brand": "<script>"}, 422, "invalid_launch"),
    ({"birth_date": _years_ago(18, days=1)}, 403, "under_age")])
def test_a_bad_or_under_age_launch_is_refused_with_its_code_and_stores_nothing(
        server: Server, wallet: OperatorWallet, options: dict[str, Any], status: int,
        code: str) -> None:
    player_id = _new_player(wallet)
    launch_id = f"launch-{uuid.uuid4().hex}"
    answer = signed_launch(server, wallet.secret, player_id, launch_id=launch_id, **options)
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), answer.text
    assert _row(server, "SELECT id FROM launch_tokens WHERE launch_id = :l", l=launch_id) is None
    assert _row(server, "SELECT id FROM accounts WHERE external_id = :p", p=player_id) is None


def test_a_player_who_turned_18_today_is_launched(server: Server,
                                                  wallet: OperatorWallet) -> None:
    player_id = _new_player(wallet)
    expect(server.spin(_session(server, wallet, player_id, birth_date=_years_ago(18))), 201)
