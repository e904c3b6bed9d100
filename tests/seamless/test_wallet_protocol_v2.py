"""Wallet protocol version 2 end to end (OPERATOR-WALLET.md, ADR 0054 and 0055): a real
``starfever serve --wallet operator`` with two workers, on SQLite and on PostgreSQL, talking to
the reference wallet through a real man in the middle (``mitm``) that records the operator's
signed replies and plays them back; and the launch that cannot be replayed."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from sqlalchemy import text

from starfever.seamless import protocol
from tests.harness import (
    DATABASE_KINDS,
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    expect,
    operator_mode_env,
    run_cli,
    run_cli_in_process,
    signed_launch,
    start_server,
)
from tests.seamless.mitm import ManInTheMiddle, mitm

pytestmark = pytest.mark.slow

PUBLIC_URL = "https://game.example.test"
"""The server's ``--public-url``: every launch address must be on it."""
START = 100_000


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def proxy(wallet: OperatorWallet) -> Iterator[ManInTheMiddle]:
    with mitm(wallet.url) as started:
        yield started


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    with Databases(tmp_path_factory.mktemp("db")) as made:
        yield made


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
           proxy: ManInTheMiddle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Two workers in operator mode whose wallet URL is the man in the middle's."""
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"v2-{kind}"),
                           operator_mode_env(wallet, timeout=1.0, retry=0.2), workers=2,
                           args=("--wallet", "operator", "--wallet-url", proxy.url,
                                 "--public-url", PUBLIC_URL))
    with started:
        yield started
    proxy.honest()
    databases.drop(started.database_url)


def _launch_token(response: httpx.Response) -> str:
    return parse_qs(urlparse(expect(response, 200).json()["url"]).query)["launch"][0]


def _player(server: Server, wallet: OperatorWallet, balance: int = START) -> tuple[str, str]:
    player_id = f"v2-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, balance)
    launch_token = _launch_token(signed_launch(server, wallet.secret, player_id))
    token = expect(server.call("POST", "/sessions", json={"launch_token": launch_token}), 201)
    return player_id, str(token.json()["token"])


def _calls(server: Server, where: str) -> list[dict[str, Any]]:
    with server.engine().connect() as conn:
        return [dict(row._mapping) for row in conn.execute(text(
            f"SELECT * FROM wallet_calls WHERE {where} ORDER BY id"))]


def _wait_for(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("the condition did not come true in time")


def _account(server: Server, player_id: str) -> int:
    with server.engine().connect() as conn:
        return int(conn.execute(text("SELECT id FROM accounts WHERE external_id = :p"),
                                {"p": player_id}).scalar_one())


def _applied(wallet: OperatorWallet, player_id: str, method: str) -> set[str]:
    return {str(t["transaction_id"]) for t in wallet.transactions(player_id)
            if t["method"] == method and t["applied"]}


def _acknowledged(server: Server, account: int, kind: str) -> set[str]:
    return {str(c["transaction_id"]) for c in _calls(
        server, f"account_id = {account} AND kind = '{kind}' AND status = 'acknowledged'")}


def _rounds(server: Server, token: str) -> list[dict[str, Any]]:
    return list(expect(server.call("GET", "/rounds", token, params={"limit": 100}), 200)
                .json()["rounds"])


def test_a_man_in_the_middle_replaying_signed_replies_gets_nothing_accepted(
        server: Server, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    """Issue 34, finding 4: a recorded signed credit reply played back had 40 credits taken as
    acknowledged that the operator never applied, and recorded debit replies had rounds
    played on bets the operator never took. Now every replayed reply is a failed call: the
    credits stay pending (reconcile lists them in doubt), the debits are rolled back with
    nothing played, and once the link is honest again both books agree."""
    player_id, token = _player(server, wallet)
    account = _account(server, player_id)
    for _ in range(3):  # honest rounds: the man in the middle records their signed replies
        expect(server.spin(token), 201)
    _wait_for(lambda: len(_acknowledged(server, account, "credit")) == 3)

    proxy.replay("credit")
    before = proxy.replayed["credit"]
    played = [expect(server.spin(token), 201).json()["round"]["id"] for _ in range(5)]
    _wait_for(lambda: proxy.replayed["credit"] >= before + 15)  # the retriers resent them
    pending = _calls(server, f"account_id = {account} AND kind = 'credit' AND round_id IN "
                             f"({', '.join(str(int(r)) for r in played)})")
    assert [c["status"] for c in pending] == ["pending"] * 5
    assert all(int(c["attempts"]) >= 1 for c in pending)
    assert len(_applied(wallet, player_id, "credit")) == 3  # none of the 5 reached it
    # Star Fever's books name as acknowledged exactly what the operator applied
    assert _acknowledged(server, account, "credit") == _applied(wallet, player_id, "credit")
    in_doubt = run_cli("reconcile", "--database-url", server.database_url)
    assert in_doubt.returncode == 1 and "IN DOUBT" in in_doubt.stdout, in_doubt.stdout
    assert in_doubt.stdout.count("pending_credit") >= 5

    proxy.replay("credit", "debit")
    refused = [server.spin(token) for _ in range(10)]
    assert [(r.status_code, r.json()["error"]["code"]) for r in refused] == \
        [(503, "wallet_unavailable")] * 10
    assert proxy.replayed["debit"] >= 10
    assert len(_rounds(server, token)) == 8  # no round on a bet the operator never took
    assert len(_applied(wallet, player_id, "debit")) == 8
    assert _acknowledged(server, account, "debit") == _applied(wallet, player_id, "debit")

    proxy.honest()
    _wait_for(lambda: run_cli_in_process("reconcile", "--database-url",
                                         server.database_url).returncode == 0, seconds=60)
    rounds = _rounds(server, token)
    assert len(rounds) == 8
    assert wallet.balance(player_id) == START + sum(
        int(r["total_win"]) - int(r["total_bet"]) for r in rounds)
    assert _acknowledged(server, account, "credit") == _applied(wallet, player_id, "credit")
    assert len(_applied(wallet, player_id, "credit")) == 8
    audit = run_cli_in_process("audit", "--database-url", server.database_url)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_every_wallet_call_carries_a_fresh_request_id_and_the_launchs_operator_session(
        server: Server, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    player_id, token = _player(server, wallet)
    seen = len(proxy.requests)
    expect(server.spin(token), 201)
    assert server.balance(token) == wallet.balance(player_id)
    _wait_for(lambda: {m for m, _ in proxy.requests[seen:]} >= {"debit", "credit", "balance"})
    mine = [(m, b) for m, b in proxy.requests[seen:] if b.get("player_id") == player_id]
    assert {b["operator_session"] for _, b in mine} == {f"opsess-{player_id}"}
    every = [b["request_id"] for _, b in proxy.requests]
    assert len(set(every)) == len(every)  # never one twice, across both workers


def test_a_launch_is_taken_once_in_every_worker_and_after_a_restart(
        server: Server, wallet: OperatorWallet) -> None:
    """Issue 34, finding 5: the same signed launch sent 5 times opened 5 sessions. Sent 6
    times at once to two workers, it is taken once (``409 launch_replayed`` the rest); and
    after a restart still once."""
    player_id = f"v2-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 1_000)
    body = protocol.encode({"launch_id": f"launch-{uuid.uuid4().hex}", "player_id": player_id,
                            "operator_session": "s-1", "currency": "EUR", "language": "de",
                            "market": "at", "mode": "real",
                            "return_url": "https://operator.example/lobby"}, server.now())
    headers = {"Content-Type": "application/json",
               protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)}

    def send(_: int) -> httpx.Response:
        with httpx.Client(timeout=30) as client:  # a connection each: both workers take some
            return client.post(f"{server.base}/launch", content=body, headers=headers)

    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(send, range(6)))
    assert sorted(a.status_code for a in answers) == [200] + [409] * 5
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == \
        {"launch_replayed"}
    server.stop()
    server.start()
    again = send(0)
    assert (again.status_code, again.json()["error"]["code"]) == (409, "launch_replayed")


@pytest.mark.parametrize(("seconds", "status"), [(-61, 409), (-55, 200), (25, 200),
                                                 (31, 409), (290, 409)])
def test_a_launch_is_taken_only_within_60_s_back_and_30_s_ahead(
        server: Server, wallet: OperatorWallet, seconds: int, status: int) -> None:
    """Issue 34: a timestamp 4 min 50 s ahead was accepted (a launch signed now could be
    replayed for ten minutes)."""
    player_id = f"v2-{uuid.uuid4().hex[:10]}"
    body = protocol.encode({"launch_id": f"launch-{uuid.uuid4().hex}", "player_id": player_id,
                            "operator_session": "s-1", "currency": "EUR", "language": "de",
                            "market": "at", "mode": "real",
                            "return_url": "https://operator.example/lobby"},
                           server.now() + timedelta(seconds=seconds))
    answer = server.call("POST", "/launch", content=body, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)})
    assert answer.status_code == status, answer.text
    if status == 409:
        assert answer.json()["error"]["code"] == "stale_launch"


def test_the_launch_address_is_on_the_public_origin_never_the_host_header(
        server: Server, wallet: OperatorWallet) -> None:
    """Issue 34: the launch URL took its host from the request (``http://evil.example/?...``)."""
    player_id = f"v2-{uuid.uuid4().hex[:10]}"
    body = protocol.encode({"launch_id": f"launch-{uuid.uuid4().hex}", "player_id": player_id,
                            "operator_session": "s-1", "currency": "EUR", "language": "de",
                            "market": "at", "mode": "real",
                            "return_url": "https://operator.example/lobby"}, server.now())
    answer = server.call("POST", "/launch", content=body, headers={
        "Content-Type": "application/json", "Host": "evil.example",
        "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http",
        protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)})
    url = str(expect(answer, 200).json()["url"])
    assert url.startswith(f"{PUBLIC_URL}/?launch=") and "evil" not in url


@pytest.mark.parametrize(("change", "code"), [
    ({"currency": "USD"}, "currency_not_served"),
    ({"mode": "fun"}, "invalid_launch"), ({"operator_session": ""}, "invalid_launch"),
    ({"launch_id": None}, "invalid_launch")])
def test_a_launch_the_server_does_not_serve_is_refused_with_its_code(
        server: Server, wallet: OperatorWallet, change: dict[str, Any], code: str) -> None:
    fields = {k: v for k, v in change.items() if v is not None}
    answer = signed_launch(server, wallet.secret, f"v2-{uuid.uuid4().hex[:10]}", **fields)
    if change.get("launch_id", "") is None:  # without one: rebuild the body without it
        raw = json.loads(answer.request.content)
        raw.pop("launch_id")
        body = protocol.encode({k: v for k, v in raw.items() if k != "timestamp"},
                               server.now())
        answer = server.call("POST", "/launch", content=body, headers={
            "Content-Type": "application/json",
            protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)})
    assert (answer.status_code, answer.json()["error"]["code"]) == (422, code), answer.text
