"""Free rounds in operator mode (issue 36, ADR 0064; OPERATOR-WALLET.md version 2): a grant made
through the operator's signed API is played against the reference wallet as a real process, on
SQLite and PostgreSQL. The wallet sees a debit of 0 and a credit of the paid win, each with the
``free_round`` block; concurrent spins never play more than granted and a loser's 0 debit is
rolled back. Uses this folder's module-scoped ``server`` (one per database kind)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from starfever.seamless import protocol
from tests.harness import OperatorWallet, Server, expect, launched_player, run_cli_in_process
from tests.seamless.operator_mode import applied, new_player, settled, wait_for
from tests.server.helpers import jackpot_draws

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

LINE_BET = 5


def signed(server: Server, wallet: OperatorWallet, path: str, **fields: Any) -> httpx.Response:
    """A call of the operator's free-round API, signed with the wallet's secret."""
    body = protocol.encode(fields, server.now())
    return server.call("POST", f"/operator-api/free-rounds{path}", content=body, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)})


def free_spin(server: Server, token: str, grant_id: int,
              draws: list[int] | None = None) -> httpx.Response:
    body: dict[str, Any] = {"line_bet": LINE_BET, "grant_id": grant_id}
    if draws is not None:
        body["test_draws"] = draws
    return server.call("POST", "/spins", token, json=body,
                       headers={"Idempotency-Key": uuid.uuid4().hex})


def test_a_free_round_debits_zero_and_credits_the_paid_win_with_its_block(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = new_player(server, wallet, 1_000)
    grant_id = f"og-{uuid.uuid4().hex[:10]}"
    made = expect(signed(server, wallet, "/grants", grant_id=grant_id, player_id=player_id,
                         rounds=2, line_bet=LINE_BET), 201).json()
    again = expect(signed(server, wallet, "/grants", grant_id=grant_id, player_id=player_id,
                          rounds=2, line_bet=LINE_BET), 200).json()
    assert again == made
    unsigned = server.call("POST", "/operator-api/free-rounds/grants", json={
        "grant_id": "og-forged", "player_id": player_id, "rounds": 9, "line_bet": LINE_BET})
    assert (unsigned.status_code, unsigned.json()["error"]["code"]) == (401, "bad_signature")
    body = protocol.encode({"grant_id": "og-late", "player_id": player_id, "rounds": 9,
                            "line_bet": LINE_BET}, server.now() - timedelta(seconds=61))
    late = server.call("POST", "/operator-api/free-rounds/grants", content=body, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)})
    assert (late.status_code, late.json()["error"]["code"]) == (409, "stale_request")  # the
    # launch's window holds for every signed call of the operator (api/operator_calls.py)
    [listed] = expect(server.call("GET", "/free-rounds", token), 200).json()["grants"]
    assert (listed["grant_id"], listed["rounds_left"]) == (grant_id, 2)
    wins = []
    for left in (1, 0):
        played = expect(free_spin(server, token, made["id"]), 201).json()
        assert played["free_round"]["rounds_left"] == left
        assert played["round"]["total_bet"] == 20 * LINE_BET
        wins.append(played["free_round"]["paid_win"])
    wait_for(lambda: settled(server, player_id))
    debits = applied(wallet, player_id, "debit")
    credits = applied(wallet, player_id, "credit")
    block = [{"grant_id": grant_id, "campaign_id": None, "rounds_left": n} for n in (1, 0)]
    assert [(d["amount"], d["free_round"]) for d in debits] == [(0, b) for b in block]
    assert [(c["amount"], c["free_round"]) for c in credits] == list(zip(wins, block,
                                                                       strict=True))
    assert wallet.balance(player_id) == 1_000 + sum(wins) == server.balance(token)
    printed = [line for line in wallet.log.read_text().splitlines() if player_id in line]
    assert sum(f"FREE ROUND grant {grant_id} campaign None" in line for line in printed) == 4
    queried = expect(signed(server, wallet, "/grants/query", grant_id=grant_id), 200).json()
    [shown] = queried["grants"]
    assert (shown["rounds_left"], shown["winnings"], shown["state"]) == (0, sum(wins),
                                                                         "finished")
    refused = free_spin(server, token, made["id"])
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "grant_used_up")
    audit = run_cli_in_process("audit", "--database-url", server.database_url)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_concurrent_free_spins_in_operator_mode_never_play_more_than_granted(
        server: Server, wallet: OperatorWallet) -> None:
    """Twenty-four spins at once from two tabs on a grant of three, the wallet slow to answer
    the first debits so that many pass the early check together: three rounds; every 0 debit
    the wallet applied is either the debit of one of those rounds or rolled back."""
    player_id, token = new_player(server, wallet, 500)
    second_tab = launched_player(server, wallet.secret, player_id)  # a second tab
    made = expect(signed(server, wallet, "/grants", grant_id=f"og-{uuid.uuid4().hex[:10]}",
                         player_id=player_id, rounds=3, line_bet=LINE_BET), 201).json()
    wallet.fault("debit", "delay", times=12, seconds=0.3)  # debits in flight together
    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(lambda i: free_spin(server, (token, second_tab)[i % 2],
                                                    made["id"]), range(24)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] * 3 + [409] * 21, statuses
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == \
        {"grant_used_up"}
    wait_for(lambda: settled(server, player_id))
    with server.engine().connect() as conn:
        rounds = conn.execute(text("SELECT COUNT(*), COALESCE(SUM(paid_win), 0) FROM rounds "
                                   "WHERE grant_id = :g"), {"g": made["id"]}).one()
        played = conn.execute(text("SELECT rounds_played FROM free_round_grants WHERE id = :g"),
                              {"g": made["id"]}).scalar_one()
    assert rounds[0] == played == 3
    debits = applied(wallet, player_id, "debit")
    credits = applied(wallet, player_id, "credit")
    rolled_back = {str(r["debit_transaction_id"])
                   for r in applied(wallet, player_id, "rollback")}
    credited = {str(c["debit_transaction_id"]) for c in credits}
    assert len(credits) == 3 and all(d["amount"] == 0 for d in debits)
    assert {str(d["transaction_id"]) for d in debits} == credited | rolled_back
    assert not credited & rolled_back and rolled_back  # the race was run, and lost
    wallet.clear_faults()
    assert wallet.balance(player_id) == 500 + rounds[1] == server.balance(token)


def test_a_campaign_for_every_player_grants_itself_at_launch(
        server: Server, wallet: OperatorWallet) -> None:
    """A campaign with ``players: null`` open now: a player launched in its window has its
    grant before asking for free rounds (the operator's query shows it); a cancelled one
    grants nobody."""
    now = server.now()
    window = {"starts_at": protocol.timestamp(now - timedelta(hours=1)),
              "ends_at": protocol.timestamp(now + timedelta(days=1))}
    campaign_id = f"oc-{uuid.uuid4().hex[:10]}"
    expect(signed(server, wallet, "/campaigns", campaign_id=campaign_id, players=None,
                  rounds=4, line_bet=LINE_BET, **window), 201)
    player_id, _ = new_player(server, wallet, 0)
    [given] = expect(signed(server, wallet, "/grants/query", player_id=player_id),
                     200).json()["grants"]
    assert (given["campaign_id"], given["rounds_left"]) == (campaign_id, 4)
    expect(signed(server, wallet, "/campaigns/cancel", campaign_id=campaign_id), 200)
    late_id, _ = new_player(server, wallet, 0)
    assert expect(signed(server, wallet, "/grants/query", player_id=late_id),
                  200).json()["grants"] == []


def test_a_cancelled_grant_keeps_its_credited_winnings_in_the_operators_wallet(
        server: Server, wallet: OperatorWallet) -> None:
    """Cancelling a grant sends the operator nothing: the credit of the round already played
    stays in its wallet (no rollback, no second call); only the unplayed rounds lapse."""
    player_id, token = new_player(server, wallet, 1_000)
    grant_id = f"og-{uuid.uuid4().hex[:10]}"
    made = expect(signed(server, wallet, "/grants", grant_id=grant_id, player_id=player_id,
                         rounds=3, line_bet=LINE_BET), 201).json()
    won = expect(free_spin(server, token, made["id"], draws=list(jackpot_draws())),
                 201).json()["free_round"]["paid_win"]
    assert won > 0
    wait_for(lambda: settled(server, player_id))
    calls_before = wallet.transactions(player_id)
    assert wallet.balance(player_id) == 1_000 + won
    cancelled = expect(signed(server, wallet, "/grants/cancel", grant_id=grant_id), 200).json()
    assert (cancelled["state"], cancelled["rounds_played"], cancelled["winnings"]) == (
        "cancelled", 1, won)
    refused = free_spin(server, token, made["id"])
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "grant_cancelled")
    assert wallet.transactions(player_id) == calls_before
    assert wallet.balance(player_id) == 1_000 + won == server.balance(token)
