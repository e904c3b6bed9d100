"""Operator mode under injected faults: many concurrent rounds, and thousands of rounds with
a fault of every kind, leave the operator's book and ours agreeing (OPERATOR-WALLET.md; a real
server process against the reference operator wallet, on SQLite and on PostgreSQL; ADR 0045)."""

from __future__ import annotations

import os
import random
import threading
from collections import Counter

import pytest

from tests.harness import (
    OperatorWallet,
    Server,
    run_cli_in_process,
)
from tests.seamless.operator_mode import (
    TIMEOUT_S,
    all_rounds,
    applied,
    new_player,
    rounds_of,
    wait_for,
)

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def test_books_agree_after_many_concurrent_rounds_with_faults_injected(
        server: Server, wallet: OperatorWallet) -> None:
    from concurrent.futures import ThreadPoolExecutor

    players = [new_player(server, wallet, 100_000) for _ in range(3)]
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
        return run_cli_in_process("reconcile", "--database-url",
                                  server.database_url).returncode == 0

    wait_for(settled, seconds=60)
    played = 0
    for player_id, token in players:
        rounds = rounds_of(server, token)
        played += len(rounds)
        assert wallet.balance(player_id) == 100_000 + sum(
            int(r["total_win"]) - int(r["total_bet"]) for r in rounds)
        assert len(applied(wallet, player_id, "credit")) == len(rounds)
    assert played == statuses.count(201)
    audit = run_cli_in_process("audit", "--database-url", server.database_url)
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

    players = [new_player(server, wallet, 10_000_000) for _ in range(6)]
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
    wait_for(lambda: run_cli_in_process("reconcile", "--database-url",
                              server.database_url).returncode == 0, seconds=180)
    played = 0
    for player_id, token in players:
        rounds = all_rounds(server, token)
        played += len(rounds)
        assert wallet.balance(player_id) == 10_000_000 + sum(
            int(r["total_win"]) - int(r["total_bet"]) for r in rounds), player_id
        credits = applied(wallet, player_id, "credit")
        assert len(credits) == len(rounds)
        assert len({c["debit_transaction_id"] for c in credits}) == len(rounds)
    assert played == statuses.count(201)
    audit = run_cli_in_process("audit", "--database-url", server.database_url)
    assert audit.returncode == 0, audit.stdout
