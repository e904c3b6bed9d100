"""Operator mode end to end: a real ``starfever serve --wallet operator`` against the reference
operator wallet as a real process, on SQLite and on PostgreSQL (OPERATOR-WALLET.md)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import func, select, text

from starfever.engine.model import load_model
from starfever.engine.rng import SystemRandomSource
from starfever.server.db import Database
from starfever.server.models import Account, SessionToken
from starfever.server.seamless_config import OperatorConfig
from starfever.server.services.auth import Principal
from starfever.server.services.errors import ServiceError
from starfever.server.spin import draw as rounds
from starfever.server.spin.rule import SpinOutcome
from starfever.server.spin.seamless_wallet import SeamlessWallet as OperatorWalletAdapter
from tests.harness import (
    DATABASE_KINDS,
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    expect,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    run_cli,
    settings_like_servers,
    signed_launch,
    start_server,
    terminate_backends,
)

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

TIMEOUT_S = 1.0
"""The server's STARFEVER_WALLET_TIMEOUT here: a delay beyond it is a lost reply."""
BET = 20  # line bet 1 x 20 lines


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    with Databases(tmp_path_factory.mktemp("db")) as made:
        yield made


@pytest.fixture(params=DATABASE_KINDS)
def kind(request: pytest.FixtureRequest, databases: Databases) -> DatabaseKind:
    """A database kind, for tests that start their own server."""
    chosen: DatabaseKind = request.param
    if chosen == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    return chosen


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server in operator mode on a fresh database of each kind."""
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"operator-{kind}"),
                           operator_mode_env(wallet, timeout=TIMEOUT_S),
                           args=operator_mode_args(wallet))
    with started:
        yield started
    databases.drop(started.database_url)


def _player(server: Server, wallet: OperatorWallet, balance: int = 10_000, *,
            blocked: bool = False) -> tuple[str, str]:
    player_id = f"op-player-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, balance, blocked=blocked)
    return player_id, launched_player(server, wallet.secret, player_id)


def _rounds(server: Server, token: str) -> list[dict[str, object]]:
    return list(expect(server.call("GET", "/rounds", token, params={"limit": 100}), 200)
                .json()["rounds"])


def _calls(server: Server, where: str = "1 = 1") -> list[dict[str, object]]:
    with server.engine().connect() as conn:
        return [dict(row._mapping) for row in conn.execute(text(
            f"SELECT * FROM wallet_calls WHERE {where} ORDER BY id"))]


def _wait_for(condition: object, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.1)
    raise AssertionError("the condition did not come true in time")


def _applied(wallet: OperatorWallet, player_id: str, method: str) -> list[dict[str, object]]:
    return [t for t in wallet.transactions(player_id) if t["method"] == method and t["applied"]]


def test_launch_session_spins_and_both_books_agree(server: Server,
                                                   wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet, 10_000)
    assert server.balance(token) == 10_000  # GET /wallet asks the operator
    wallet.fault("debit", "twice", times=3)  # a request delivered twice moves money once
    wallet.fault("credit", "twice", times=3)
    answers = [expect(server.spin(token), 201).json() for _ in range(12)]
    rounds = _rounds(server, token)
    assert len(rounds) == 12
    net = sum(int(r["total_win"]) - int(r["total_bet"]) for r in rounds)
    debits = _applied(wallet, player_id, "debit")
    credits = _applied(wallet, player_id, "credit")
    assert len(debits) == len(credits) == 12
    assert wallet.balance(player_id) == 10_000 + net == \
        10_000 + sum(int(c["amount"]) for c in credits) - sum(int(d["amount"]) for d in debits)
    assert answers[-1]["balance"] == wallet.balance(player_id) == server.balance(token)
    # each credit's acknowledgement is recorded in the books' next group commit (the spin's
    # answer does not wait for it)
    _wait_for(lambda: {c["status"] for c in _calls(server, "kind = 'credit'")}
              == {"acknowledged"})
    credited = _calls(server, "kind = 'credit'")
    # each debit's acknowledgement was recorded with its round, which it names
    debited = [c for c in _calls(server, "kind = 'debit'") if c["account_id"] ==
               credited[-1]["account_id"]]
    assert sorted(int(str(c["round_id"])) for c in debited) == sorted(int(str(r["id"]))
                                                                       for r in rounds)
    assert {c["status"] for c in debited} == {"acknowledged"}
    assert sorted(str(c["operator_transaction_id"]) for c in debited) == \
        sorted(str(d["operator_transaction_id"]) for d in debits)
    audit = run_cli("audit", "--database-url", server.database_url)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    reconcile = run_cli("reconcile", "--full", "--database-url", server.database_url)
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    assert debits[0]["operator_transaction_id"] in reconcile.stdout


def test_migration_0014_names_the_round_of_every_debit_played_before_it(
        server: Server, wallet: OperatorWallet) -> None:
    """Debits recorded before migration 0014 named no round; it fills each one in from the
    round stored under the debit's key (so the stale-debit search skips them), and a debit
    without a round keeps none."""
    from alembic import command

    from starfever.server.db import alembic_config

    _, token = _player(server, wallet, 1_000)
    played = [int(expect(server.spin(token), 201).json()["round"]["id"]) for _ in range(3)]
    mine = f"kind = 'debit' AND round_id IN ({', '.join(map(str, played))})"
    ids = [str(c["transaction_id"]) for c in _calls(server, mine)]
    assert len(ids) == 3
    config = alembic_config(server.database_url)
    command.downgrade(config, "0013")  # as such rows were written before
    listed = ", ".join(f"'{i}'" for i in ids)
    assert {c["round_id"] for c in _calls(server, f"transaction_id IN ({listed})")} == {None}
    key = _calls(server, f"transaction_id = '{ids[0]}'")[0]["idempotency_key"]
    credits = {c["debit_transaction_id"]: c["round_id"] for c in _calls(server, "kind = 'credit'")}
    try:
        with server.engine().begin() as conn:  # and one debit whose round was never stored
            conn.execute(text("UPDATE wallet_calls SET idempotency_key = 'never-played' "
                              "WHERE transaction_id = :t"), {"t": ids[0]})
        command.upgrade(config, "head")
        after = {str(c["transaction_id"]): c["round_id"]
                 for c in _calls(server, f"transaction_id IN ({listed})")}
    finally:  # as it was (the retrier would roll a played debit without its key back)
        with server.engine().begin() as conn:
            conn.execute(text("UPDATE wallet_calls SET idempotency_key = :k, round_id = :r "
                              "WHERE transaction_id = :t"),
                         {"k": key, "r": credits[ids[0]], "t": ids[0]})
    assert after[ids[0]] is None
    assert [after[i] for i in ids[1:]] == [credits[i] for i in ids[1:]]
    assert None not in [after[i] for i in ids[1:]]


def test_insufficient_funds_and_player_blocked_are_clear_4xx_and_nothing_is_played(
        server: Server, wallet: OperatorWallet) -> None:
    poor_id, poor = _player(server, wallet, BET - 1)
    refused = server.spin(poor)
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "insufficient_funds")
    blocked_id, blocked = _player(server, wallet, 10_000, blocked=True)
    refused = server.spin(blocked)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "player_blocked")
    assert _rounds(server, poor) == [] and _rounds(server, blocked) == []
    assert wallet.balance(poor_id) == BET - 1 and wallet.balance(blocked_id) == 10_000


def test_a_debit_that_times_out_is_rolled_back_and_no_round_is_played(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet, 1_000)
    wallet.fault("debit", "delay", seconds=TIMEOUT_S + 1)
    lost = server.spin(token)
    assert (lost.status_code, lost.json()["error"]["code"]) == (503, "wallet_unavailable")
    assert _rounds(server, token) == []
    _wait_for(lambda: wallet.balance(player_id) == 1_000)  # debited late, then refunded
    assert len(_applied(wallet, player_id, "rollback")) == 1
    _wait_for(lambda: all(c["status"] == "acknowledged"
                          for c in _calls(server, "kind = 'rollback'")))


def test_a_credit_whose_reply_is_dropped_stays_pending_then_is_credited_once(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet, 1_000)
    wallet.fault("credit", "drop")
    answer = expect(server.spin(token), 201).json()
    round_id = answer["round"]["id"]

    def credit_status() -> object:
        found = _calls(server, f"kind = 'credit' AND round_id = {int(round_id)}")
        return found[0]["status"] if found else None

    _wait_for(lambda: credit_status() == "acknowledged")
    credits = [t for t in wallet.transactions(player_id) if t["method"] == "credit"]
    assert len(credits) == 1 and credits[0]["applied"]
    win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
    assert wallet.balance(player_id) == 1_000 + win


def test_a_retried_spin_reuses_its_transaction_id_and_moves_nothing(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = _player(server, wallet, 1_000)
    key = uuid.uuid4().hex
    first = expect(server.spin(token, key=key), 201).json()
    again = expect(server.spin(token, key=key), 200).json()
    assert again["replayed"] and again["round"]["id"] == first["round"]["id"]
    assert len(wallet.transactions(player_id)) == 2  # one debit, one credit
    assert len(_rounds(server, token)) == 1



def test_a_spin_whose_debit_reply_was_late_answers_the_round_its_retry_played(
        server: Server, wallet: OperatorWallet) -> None:
    """The first request's debit is answered after the server's timeout; meanwhile the client
    sent the same spin again (same key), whose debit the operator answered at once (with its
    first answer) and which was played. The first request must not then say "rolled back,
    nothing was played": it answers that round, and nothing is rolled back."""
    player_id, token = _player(server, wallet, 1_000)
    wallet.fault("debit", "delay", seconds=TIMEOUT_S + 0.5)
    key = uuid.uuid4().hex
    answers: dict[str, httpx.Response] = {}

    def send(name: str) -> None:
        answers[name] = server.spin(token, key=key)

    first = threading.Thread(target=send, args=("first",))
    first.start()
    time.sleep(0.3)
    send("retry")
    first.join()
    retry, late = answers["retry"], answers["first"]
    assert retry.status_code in (200, 201), retry.text
    assert late.status_code in (200, 201), late.text
    assert late.json()["round"]["id"] == retry.json()["round"]["id"]
    assert len(_rounds(server, token)) == 1
    assert [c["status"] for c in _calls(server, f"kind = 'debit' AND idempotency_key = '{key}'")] \
        == ["acknowledged"]
    assert not _calls(server, f"kind = 'rollback' AND round_ref IN (SELECT round_ref FROM "
                              f"wallet_calls WHERE idempotency_key = '{key}')")
    assert len(_applied(wallet, player_id, "debit")) == 1
    assert _applied(wallet, player_id, "rollback") == []


def test_the_first_spin_after_the_database_dropped_its_connections_is_played(
        server: Server, wallet: OperatorWallet) -> None:
    """PostgreSQL restarted (every connection of the server dropped) between two spins: the
    next spin's debit is recorded on a new connection, not answered 500."""
    if not server.database_url.startswith("postgresql"):
        pytest.skip("drops PostgreSQL's connections")
    _player_id, token = _player(server, wallet, 1_000)
    expect(server.spin(token), 201)
    assert terminate_backends(server.database_url, 1, 0.0) > 0
    for _ in range(3):
        expect(server.spin(token), 201)
    assert len(_rounds(server, token)) == 4

def test_a_forged_launch_signature_is_refused(server: Server, wallet: OperatorWallet) -> None:
    forged = signed_launch(server, "not-the-operator-secret-0123456789abc", "someone")
    assert (forged.status_code, forged.json()["error"]["code"]) == (401, "bad_signature")
    unsigned = server.call("POST", "/launch", json={"player_id": "someone"})
    assert unsigned.status_code == 401


def test_a_used_expired_or_forged_launch_token_gets_401(server: Server,
                                                        wallet: OperatorWallet) -> None:
    player_id = f"op-player-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 100)
    launches = [expect(signed_launch(server, wallet.secret, player_id), 200).json()["url"]
                for _ in range(2)]
    used, expired = (url.split("launch=")[1].split("&")[0] for url in launches)
    expect(server.call("POST", "/sessions", json={"launch_token": used}), 201)
    with server.engine().begin() as conn:
        conn.execute(text("UPDATE launch_tokens SET expires_at = :past WHERE used_at IS NULL"),
                     {"past": (datetime.now(UTC) - timedelta(seconds=1)).replace(tzinfo=None)})
    for token in (used, expired, "forged-launch-token"):
        refused = server.call("POST", "/sessions", json={"launch_token": token})
        assert (refused.status_code, refused.json()["error"]["code"]) == \
            (401, "invalid_launch_token")


def test_players_neither_register_nor_log_in_with_a_password_in_operator_mode(
        server: Server, wallet: OperatorWallet) -> None:
    refused = server.call("POST", "/players", json={"username": "someone",  # well-formed
                                                    "password": "password-1",
                                                    "birth_date": "1990-04-02"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "operator_mode")
    refused = server.call("POST", "/sessions", json={"username": "someone",
                                                     "password": "password-1"})
    assert (refused.status_code, refused.json()["error"]["code"]) == \
        (403, "operator_mode_launch_only")
    assert server.operator_token  # the operator's own account still logs in
    _, token = _player(server, wallet, 100)
    for path, body in (("/limits", {"weekly_deposit_limit": 100}),
                       ("/self-exclusion", {"days": 7})):
        method = "PUT" if path == "/limits" else "POST"
        refused = server.call(method, path, token, json=body)
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "operator_mode")


def test_the_operators_player_list_includes_operator_mode_players(
        server: Server, wallet: OperatorWallet) -> None:
    """An operator-mode player has no wallet row here (the operator keeps the balance): the
    player list names it all the same, with no balance, instead of leaving it out."""
    player_id, _ = _player(server, wallet, 100)
    found = expect(server.call("GET", "/operator/search/players", server.operator_token,
                               params={"q": player_id}), 200).json()["players"]
    assert [p["external_id"] for p in found] == [player_id]
    listed = expect(server.call("GET", "/operator/players", server.operator_token,
                                params={"limit": 1000}), 200).json()["players"]
    assert [p["balance"] for p in listed if p["username"] == found[0]["username"]] == [None]


@pytest.mark.parametrize("fault", ["error", "drop"])
def test_a_server_killed_between_debit_and_credit_credits_exactly_once_after_restart(
        kind: DatabaseKind, fault: str, databases: Databases, wallet: OperatorWallet,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """``error``: the credit never reached the operator; ``drop``: the operator applied it and
    its reply was lost. Either way the restarted server's retrier credits exactly once."""
    started = start_server(databases, kind, tmp_path_factory.mktemp("operator-kill"),
                           operator_mode_env(wallet, timeout=TIMEOUT_S),
                           args=operator_mode_args(wallet))
    with started as server:
        player_id, token = _player(server, wallet, 1_000)
        wallet.fault("credit", fault, times=100_000)  # every send of the credit fails
        answer = expect(server.spin(token), 201).json()
        assert len(_applied(wallet, player_id, "debit")) == 1
        credited = _applied(wallet, player_id, "credit")
        assert len(credited) == (1 if fault == "drop" else 0)
        server.kill()  # SIGKILL: the round is committed, its credit not acknowledged
        in_doubt = run_cli("reconcile", "--database-url", server.database_url)
        assert in_doubt.returncode == 1 and "IN DOUBT" in in_doubt.stdout
        assert "pending_credit" in in_doubt.stdout
        wallet.clear_faults()
        server.start()
        round_id = int(answer["round"]["id"])
        _wait_for(lambda: _calls(server, f"kind = 'credit' AND round_id = {round_id}")[0]
                  ["status"] == "acknowledged")
        assert len(_applied(wallet, player_id, "credit")) == 1
        win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
        assert wallet.balance(player_id) == 1_000 + win
        assert run_cli("reconcile", "--database-url", server.database_url).returncode == 0
        assert run_cli("audit", "--database-url", server.database_url).returncode == 0
    databases.drop(started.database_url)


def test_a_server_killed_while_the_debit_reply_is_on_its_way_plays_the_retry_once(
        kind: DatabaseKind, databases: Databases, wallet: OperatorWallet,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The operator applied the debit; the server dies before its reply arrives (the debit is
    ``pending`` in its books, no round). The client's retry with the same key resends the
    debit, gets the operator's first answer, plays the round once and credits it once."""
    started = start_server(databases, kind, tmp_path_factory.mktemp("operator-kill-debit"),
                           operator_mode_env(wallet, timeout=5),
                           args=operator_mode_args(wallet), own_process_group=True)
    with started as server:
        player_id, token = _player(server, wallet, 1_000)
        wallet.fault("debit", "delay", seconds=4)  # within the 5-s timeout: the reply waits
        key = uuid.uuid4().hex
        sent = threading.Thread(target=lambda: _ignore_transport_errors(server, token, key))
        sent.start()
        _wait_for(lambda: len(_applied(wallet, player_id, "debit")) == 1)
        server.kill()
        sent.join()
        assert wallet.balance(player_id) == 1_000 - BET  # debited, no round anywhere
        assert [c["status"] for c in _calls(server, "kind = 'debit'")] == ["pending"]
        server.start()
        answer = expect(server.spin(token, key=key), 201).json()
        _wait_for(lambda: len(_applied(wallet, player_id, "credit")) == 1)
        assert len(_applied(wallet, player_id, "debit")) == 1
        assert _applied(wallet, player_id, "rollback") == []
        assert len(_rounds(server, token)) == 1
        win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
        _wait_for(lambda: wallet.balance(player_id) == 1_000 + win)
        _wait_for(lambda: run_cli("reconcile", "--database-url",
                                  server.database_url).returncode == 0)
    databases.drop(started.database_url)


def test_a_debit_left_without_its_round_by_a_crash_is_rolled_back_once_stale(
        kind: DatabaseKind, databases: Databases, wallet: OperatorWallet,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """As above, but the client never comes back: the restarted server's retrier rolls the
    debit back once it is older than its staleness (30 s at least), the operator refunds it,
    and no round exists anywhere."""
    started = start_server(databases, kind, tmp_path_factory.mktemp("operator-stale-debit"),
                           operator_mode_env(wallet, timeout=5),
                           args=operator_mode_args(wallet), own_process_group=True)
    with started as server:
        player_id, token = _player(server, wallet, 1_000)
        wallet.fault("debit", "delay", seconds=4)
        sent = threading.Thread(target=lambda: _ignore_transport_errors(
            server, token, uuid.uuid4().hex))
        sent.start()
        _wait_for(lambda: len(_applied(wallet, player_id, "debit")) == 1)
        server.kill()
        sent.join()
        assert wallet.balance(player_id) == 1_000 - BET
        server.start()
        _wait_for(lambda: wallet.balance(player_id) == 1_000, seconds=90)
        assert len(_applied(wallet, player_id, "rollback")) == 1
        assert _rounds(server, token) == []
        assert [c["status"] for c in _calls(server, "kind = 'debit'")] == ["rolled_back"]
        _wait_for(lambda: run_cli("reconcile", "--database-url",
                                  server.database_url).returncode == 0)
    databases.drop(started.database_url)


def _ignore_transport_errors(server: Server, token: str, key: str) -> None:
    with contextlib.suppress(httpx.TransportError):  # the server was killed under it
        server.spin(token, key=key)


def test_a_forged_reply_counts_for_nothing(server: Server, wallet: OperatorWallet) -> None:
    """Replies signed with another secret (a man in the middle): a forged debit reply is a
    failed debit (rolled back, nothing played); a forged credit reply leaves the credit
    pending until a genuine reply acknowledges it."""
    player_id, token = _player(server, wallet, 1_000)
    wallet.fault("debit", "forge")
    lost = server.spin(token)
    assert (lost.status_code, lost.json()["error"]["code"]) == (503, "wallet_unavailable")
    assert _rounds(server, token) == []
    _wait_for(lambda: wallet.balance(player_id) == 1_000)
    assert len(_applied(wallet, player_id, "rollback")) == 1
    wallet.fault("credit", "forge")
    answer = expect(server.spin(token), 201).json()
    round_id = int(answer["round"]["id"])
    _wait_for(lambda: _calls(server, f"kind = 'credit' AND round_id = {round_id}")[0]
              ["status"] == "acknowledged")
    credit = _calls(server, f"kind = 'credit' AND round_id = {round_id}")[0]
    assert int(credit["attempts"]) >= 1  # the forged reply was not taken for an answer
    assert len(_applied(wallet, player_id, "credit")) == 1
    win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
    assert wallet.balance(player_id) == 1_000 + win


def test_audit_checks_the_operator_book_against_the_wallet_calls(
        server: Server, wallet: OperatorWallet) -> None:
    _, token = _player(server, wallet, 1_000)
    round_id = int(expect(server.spin(token), 201).json()["round"]["id"])
    tamper = "UPDATE wallet_calls SET amount = amount + :d WHERE kind = 'credit' AND round_id = :r"
    with server.engine().begin() as conn:
        conn.execute(text(tamper), {"d": 1, "r": round_id})
    try:
        audit = run_cli("audit", "--database-url", server.database_url)
        assert audit.returncode == 1 and f"round {round_id}: credit of" in audit.stdout
    finally:
        with server.engine().begin() as conn:
            conn.execute(text(tamper), {"d": -1, "r": round_id})
    audit = run_cli("audit", "--database-url", server.database_url)
    assert audit.returncode == 0 and "operator rounds checked" in audit.stdout, audit.stdout


def test_books_agree_after_many_concurrent_rounds_with_faults_injected(
        server: Server, wallet: OperatorWallet) -> None:
    from concurrent.futures import ThreadPoolExecutor

    players = [_player(server, wallet, 100_000) for _ in range(3)]
    for method, fault, times in (("debit", "error", 4), ("debit", "twice", 5),
                                 ("debit", "delay", 2), ("credit", "drop", 2),
                                 ("credit", "error", 5), ("credit", "twice", 5),
                                 ("rollback", "error", 2)):
        wallet.fault(method, fault, times=times, seconds=TIMEOUT_S + 0.5)

    def play(i: int) -> int:
        _, token = players[i % len(players)]
        return server.spin(token).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(play, range(120)))
    assert set(statuses) <= {201, 503}, statuses
    assert statuses.count(503) == 6  # the debits answered 500 or too late: rolled back
    wallet.clear_faults()

    def settled() -> bool:
        return run_cli("reconcile", "--database-url", server.database_url).returncode == 0

    _wait_for(settled, seconds=60)
    played = 0
    for player_id, token in players:
        rounds = _rounds(server, token)
        played += len(rounds)
        assert wallet.balance(player_id) == 100_000 + sum(
            int(r["total_win"]) - int(r["total_bet"]) for r in rounds)
        assert len(_applied(wallet, player_id, "credit")) == len(rounds)
    assert played == statuses.count(201)
    audit = run_cli("audit", "--database-url", server.database_url)
    assert audit.returncode == 0, audit.stdout


ROUNDS = int(os.environ.get("STARFEVER_OPERATOR_ROUNDS", "2000"))
"""The rounds of the long run with faults (``STARFEVER_OPERATOR_ROUNDS`` for a longer one)."""
FAULT_MIX = [(method, fault) for method in ("debit", "credit", "rollback")
             for fault in ("delay", "drop", "error", "twice", "forge")]


def test_thousands_of_rounds_with_faults_leave_both_books_agreeing(
        server: Server, wallet: OperatorWallet) -> None:
    """Eight clients play ``ROUNDS`` rounds while a fault of every kind is injected into a
    random method four times a second; afterwards (once the retrier has settled what was in
    doubt) every player's balance at the operator equals the start plus the wins minus the
    bets of their rounds, each round was credited exactly once, reconcile and audit agree."""
    from concurrent.futures import ThreadPoolExecutor

    players = [_player(server, wallet, 10_000_000) for _ in range(6)]
    stop = threading.Event()
    injected: Counter[str] = Counter()

    def inject() -> None:
        draw = random.Random(14)
        while not stop.wait(0.25):
            method, fault = draw.choice(FAULT_MIX)
            wallet.fault(method, fault, seconds=TIMEOUT_S + 0.5)
            injected[f"{method} {fault}"] += 1

    def play(i: int) -> int:
        return server.spin(players[i % len(players)][1], line_bet=1 + i % 5).status_code

    injector = threading.Thread(target=inject)
    injector.start()
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(play, range(ROUNDS)))
    finally:
        stop.set()
        injector.join()
        wallet.clear_faults()
    print(f"{ROUNDS} spins: {dict(Counter(statuses))}; faults injected: {dict(injected)}")
    assert set(statuses) <= {201, 503}, Counter(statuses)
    assert statuses.count(503) >= 1 and len(injected) >= 10  # the faults did strike
    _wait_for(lambda: run_cli("reconcile", "--database-url",
                              server.database_url).returncode == 0, seconds=180)
    played = 0
    for player_id, token in players:
        rounds = _all_rounds(server, token)
        played += len(rounds)
        assert wallet.balance(player_id) == 10_000_000 + sum(
            int(r["total_win"]) - int(r["total_bet"]) for r in rounds), player_id
        credits = _applied(wallet, player_id, "credit")
        assert len(credits) == len(rounds)
        assert len({c["debit_transaction_id"] for c in credits}) == len(rounds)
    assert played == statuses.count(201)
    audit = run_cli("audit", "--database-url", server.database_url, timeout=600)
    assert audit.returncode == 0, audit.stdout


def _all_rounds(server: Server, token: str) -> list[dict[str, object]]:
    """Every round of the player (``GET /rounds`` paged to the end)."""
    found: list[dict[str, object]] = []
    params: dict[str, int] = {"limit": 100}
    while True:
        page = expect(server.call("GET", "/rounds", token, params=params), 200).json()
        found += page["rounds"]
        if page.get("next_before") is None:
            return found
        params["before"] = int(page["next_before"])



def test_a_live_round_is_drawn_only_once_the_operator_took_its_bet(
        server: Server, wallet: OperatorWallet) -> None:
    """OPERATOR-WALLET.md rule 2: a round is drawn only after its debit is acknowledged, so a
    refused bet never had an outcome. The spins run through this test process's own
    operator-mode wallet on the server's database (as one more worker would, with its own
    settler), whose live source notes, when the round's draws are asked for, which of the
    player's calls the operator has applied."""
    player_id, _ = _player(server, wallet, 10_000)
    blocked_id, _ = _player(server, wallet, 10_000, blocked=True)
    db = Database(server.database_url)
    settings = settings_like_servers(server.database_url)
    model = load_model(settings.model)
    adapter = OperatorWalletAdapter(db, OperatorConfig(url=wallet.url, secret=wallet.secret,
                                                       timeout=TIMEOUT_S))
    applied_at_draw: list[list[str]] = []
    drawing_for: list[str] = []

    def noting_source() -> SystemRandomSource:
        applied_at_draw.append([str(t["method"]) for t in wallet.transactions(drawing_for[-1])
                                if t["applied"]])
        return SystemRandomSource()

    adapter.live_source = noting_source

    def principal(external_id: str) -> Principal:
        with db.read() as session:
            account = session.scalars(select(Account).where(
                Account.external_id == external_id)).one()
            session_id = session.scalar(select(func.max(SessionToken.id)).where(
                SessionToken.account_id == account.id))
            return Principal(account.id, account.username, "player", int(str(session_id)))

    async def spin(external_id: str) -> SpinOutcome:
        drawing_for.append(external_id)
        job = rounds.queued_spin(settings, model, principal(external_id), 1,
                                 uuid.uuid4().hex, None, draw=False)
        assert job.drawn is None
        return await adapter.spin(job)

    async def both() -> None:
        try:
            outcome = await spin(player_id)
            assert applied_at_draw == [["debit"]]
            assert outcome.round.total_bet == BET
            with pytest.raises(ServiceError) as refused:
                await spin(blocked_id)
            assert refused.value.code == "player_blocked"
            assert applied_at_draw == [["debit"]], "a refused bet was drawn"
        finally:
            await adapter.aclose()

    try:
        asyncio.run(both())
    finally:
        db.dispose()
    assert [t["method"] for t in wallet.transactions(player_id) if t["applied"]] \
        == ["debit", "credit"]
