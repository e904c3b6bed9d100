"""Operator mode: a server killed between a round's debit and its credit (SIGKILL), then
restarted, credits exactly once (OPERATOR-WALLET.md; a real server process against the reference
operator wallet, on SQLite and on PostgreSQL). A module of its own so that another worker can
take it (ADR 0045)."""

from __future__ import annotations

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
    TIMEOUT_S,
    applied,
    calls,
    new_player,
    wait_for,
)

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


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
        player_id, token = new_player(server, wallet, 1_000)
        wallet.fault("credit", fault, times=100_000)  # every send of the credit fails
        answer = expect(server.spin(token), 201).json()
        assert len(applied(wallet, player_id, "debit")) == 1
        credited = applied(wallet, player_id, "credit")
        assert len(credited) == (1 if fault == "drop" else 0)
        server.kill()  # SIGKILL: the round is committed, its credit not acknowledged
        in_doubt = run_cli_in_process("reconcile", "--database-url", server.database_url)
        assert in_doubt.returncode == 1 and "IN DOUBT" in in_doubt.stdout
        assert "pending_credit" in in_doubt.stdout
        wallet.clear_faults()
        server.start()
        round_id = int(answer["round"]["id"])
        wait_for(lambda: calls(server, f"kind = 'credit' AND round_id = {round_id}")[0]
                  ["status"] == "acknowledged")
        assert len(applied(wallet, player_id, "credit")) == 1
        win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
        assert wallet.balance(player_id) == 1_000 + win
        assert run_cli_in_process("reconcile", "--database-url",
                                  server.database_url).returncode == 0
        assert run_cli_in_process("audit", "--database-url", server.database_url).returncode == 0
    databases.drop(started.database_url)
