"""Operator mode: a server killed while a debit's reply is on its way; the retry plays the
round once, or, with no retry, the restarted server rolls the debit back once it is stale
(OPERATOR-WALLET.md; a real server process, on SQLite and on PostgreSQL; ADR 0045)."""

from __future__ import annotations

import threading
import uuid

import pytest

from tests.harness import (
    DatabaseKind,
    Databases,
    OperatorWallet,
    expect,
    operator_mode_args,
    operator_mode_env,
    run_cli_in_process,
    start_server,
)
from tests.seamless.operator_mode import (
    BET,
    applied,
    calls,
    new_player,
    rounds_of,
    spin_ignoring_transport_errors,
    wait_for,
)

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


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
        player_id, token = new_player(server, wallet, 1_000)
        wallet.fault("debit", "delay", seconds=4)  # within the 5-s timeout: the reply waits
        key = uuid.uuid4().hex
        sent = threading.Thread(target=lambda: spin_ignoring_transport_errors(server, token, key))
        sent.start()
        wait_for(lambda: len(applied(wallet, player_id, "debit")) == 1)
        server.kill()
        sent.join()
        assert wallet.balance(player_id) == 1_000 - BET  # debited, no round anywhere
        assert [c["status"] for c in calls(server, "kind = 'debit'")] == ["pending"]
        server.start()
        answer = expect(server.spin(token, key=key), 201).json()
        wait_for(lambda: len(applied(wallet, player_id, "credit")) == 1)
        assert len(applied(wallet, player_id, "debit")) == 1
        assert applied(wallet, player_id, "rollback") == []
        assert len(rounds_of(server, token)) == 1
        win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
        wait_for(lambda: wallet.balance(player_id) == 1_000 + win)
        wait_for(lambda: run_cli_in_process("reconcile", "--database-url",
                                  server.database_url).returncode == 0)
    databases.drop(started.database_url)


def test_a_debit_left_without_its_round_by_a_crash_is_rolled_back_once_stale(
        kind: DatabaseKind, databases: Databases, wallet: OperatorWallet,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """As above, but the client never comes back: the restarted server's retrier rolls the
    debit back once it is older than its staleness (30 s at least, of the server's settable
    clock), the operator refunds it, and no round exists anywhere."""
    started = start_server(databases, kind, tmp_path_factory.mktemp("operator-stale-debit"),
                           operator_mode_env(wallet, timeout=5),
                           args=operator_mode_args(wallet), own_process_group=True)
    with started as server:
        player_id, token = new_player(server, wallet, 1_000)
        wallet.fault("debit", "delay", seconds=4)
        sent = threading.Thread(target=lambda: spin_ignoring_transport_errors(
            server, token, uuid.uuid4().hex))
        sent.start()
        wait_for(lambda: len(applied(wallet, player_id, "debit")) == 1)
        server.kill()
        sent.join()
        assert wallet.balance(player_id) == 1_000 - BET
        # the server's clock moved past the staleness (30 s): the restarted retrier's first
        # search finds the debit stale, where the test waited 30-40 s for it (ADR 0045)
        server.move_clock(45)
        server.start()
        wait_for(lambda: wallet.balance(player_id) == 1_000, seconds=30)
        assert len(applied(wallet, player_id, "rollback")) == 1
        assert rounds_of(server, token) == []
        assert [c["status"] for c in calls(server, "kind = 'debit'")] == ["rolled_back"]
        wait_for(lambda: run_cli_in_process("reconcile", "--database-url",
                                  server.database_url).returncode == 0)
    databases.drop(started.database_url)
