"""Support by anyone's ids (issue 35, finding 2): a real ``starfever serve --wallet operator``
against the reference wallet as a real process, on SQLite and on PostgreSQL. What the operator's
support knows of a spin is what its wallet recorded (``wallet.transactions``): the player id,
its own transaction id of each call, Star Fever's transaction id and the ``round_id`` it was
sent. Each of them finds the round, the round's view shows its calls with both sides' ids, and
``starfever reconcile`` narrows to a player or a round, as a summary, a listing or JSON."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.harness import (
    OperatorWallet,
    Server,
    expect,
    launched_player,
    run_cli_in_process,
)
from tests.seamless.operator_mode import BET, TIMEOUT_S, settled, wait_for

pytestmark = pytest.mark.slow



def _player(server: Server, wallet: OperatorWallet, balance: int = 10_000) -> tuple[str, str]:
    player_id = f"support-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, balance)
    return player_id, launched_player(server, wallet.secret, player_id)


def _played(server: Server, wallet: OperatorWallet, spins: int) -> tuple[str, list[int]]:
    """A new player's ``spins`` rounds (ids, oldest first), every call settled."""
    player_id, token = _player(server, wallet)
    ids = [int(expect(server.spin(token), 201).json()["round"]["id"]) for _ in range(spins)]
    wait_for(lambda: settled(server, player_id))
    return player_id, ids


def _search(server: Server, **query: str | int) -> list[int]:
    found = expect(server.call("GET", "/operator/rounds", server.operator_token,
                               params=query), 200).json()["rounds"]
    return [int(r["id"]) for r in found]


def _by_round_ref(wallet: OperatorWallet, player_id: str) -> dict[str, dict[str, Any]]:
    """The operator's own record of each spin, by the round_id it was sent: method -> call."""
    spins: dict[str, dict[str, Any]] = {}
    for t in wallet.transactions(player_id):
        if t["applied"]:
            spins.setdefault(str(t["round_id"]), {})[str(t["method"])] = t
    return spins


def test_support_finds_a_round_by_the_operators_player_and_transaction_ids_and_ours(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, rounds = _played(server, wallet, 3)
    _other, others = _played(server, wallet, 2)
    assert _search(server, player_id=player_id) == rounds[::-1]  # theirs only, newest first
    assert _search(server, player_id="no-such-player") == []
    views = {r: expect(server.call("GET", f"/operator/rounds/{r}", server.operator_token),
                       200).json() for r in rounds}
    operator_side = _by_round_ref(wallet, player_id)
    assert len(operator_side) == 3
    for round_id, view in views.items():
        ref = view["wallet_calls"][0]["round_ref"]
        for call in operator_side[ref].values():  # the debit and the credit
            assert _search(server, operator_transaction_id=call["operator_transaction_id"]) \
                == [round_id]
            assert _search(server, transaction_id=call["transaction_id"]) == [round_id]
        # the filters hold together: a round id and another round's call id find nothing
        other_debit = operator_side[views[rounds[0] if round_id != rounds[0] else rounds[1]]
                                    ["wallet_calls"][0]["round_ref"]]["debit"]
        assert _search(server, round_id=round_id,
                       transaction_id=other_debit["transaction_id"]) == []
    assert _search(server, operator_transaction_id="no-such-transaction") == []
    line = expect(server.call("GET", "/operator/rounds", server.operator_token,
                              params={"round_id": others[0]}), 200).json()["rounds"][0]
    assert line["player_id"] == _other and line["username"].startswith("op-")


def test_a_rounds_view_shows_its_wallet_calls_with_both_sides_ids_statuses_and_attempts(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, (round_id,) = _played(server, wallet, 1)
    view = expect(server.call("GET", f"/operator/rounds/{round_id}", server.operator_token),
                  200).json()
    assert view["player_id"] == player_id
    calls = view["wallet_calls"]
    assert [c["kind"] for c in calls] == ["debit", "credit"]
    operator_side = _by_round_ref(wallet, player_id)[calls[0]["round_ref"]]
    for call in calls:
        theirs = operator_side[call["kind"]]
        assert (call["transaction_id"], call["operator_transaction_id"], call["amount"]) == \
            (theirs["transaction_id"], theirs["operator_transaction_id"], theirs["amount"])
        assert (call["status"], call["attempts"]) == ("acknowledged", 0)  # answered at once
        assert call["round_id"] == round_id and call["player_id"] == player_id
        assert call["created_at"] <= call["updated_at"]
    assert calls[0]["amount"] == view["round"]["total_bet"] == BET
    assert calls[1]["debit_transaction_id"] == calls[0]["transaction_id"]
    # a credit whose reply was lost shows the try that failed and when it was answered
    token = launched_player(server, wallet.secret, player_id)
    wallet.fault("credit", "drop")
    resent = int(expect(server.spin(token), 201).json()["round"]["id"])
    wait_for(lambda: settled(server, player_id))
    debit, credit = expect(server.call("GET", f"/operator/rounds/{resent}",
                                       server.operator_token), 200).json()["wallet_calls"]
    assert (debit["attempts"], credit["attempts"]) == (0, 1)
    assert credit["status"] == "acknowledged" and credit["updated_at"] > credit["created_at"]


def test_a_spin_that_played_no_round_is_found_by_its_ids_in_the_wallet_calls(
        server: Server, wallet: OperatorWallet) -> None:
    """A debit that timed out was rolled back: no round, and no operator id of ours (its
    reply never came; a rollback's reply carries none), but Star Fever's ids, which the
    operator recorded, and the player's id find both calls."""
    player_id, token = _player(server, wallet, 1_000)
    wallet.fault("debit", "delay", seconds=TIMEOUT_S + 1)
    assert expect(server.spin(token), 503).json()["error"]["code"] == "wallet_unavailable"
    wait_for(lambda: any(t["method"] == "rollback" and t["applied"]
                          for t in wallet.transactions(player_id)))
    wait_for(lambda: settled(server, player_id))
    theirs = {str(t["method"]): t for t in wallet.transactions(player_id)}
    debit_id, rollback_id = (theirs["debit"]["transaction_id"],
                             theirs["rollback"]["transaction_id"])
    assert _search(server, transaction_id=rollback_id) == []  # no round was played
    assert _search(server, player_id=player_id) == []

    def calls(**query: str) -> list[tuple[str, str, str, str | None]]:
        found = expect(server.call("GET", "/operator/wallet-calls", server.operator_token,
                                   params=query), 200).json()["calls"]
        return [(c["kind"], c["status"], c["transaction_id"], c["debit_transaction_id"])
                for c in found]

    assert calls(player_id=player_id) == [("debit", "rolled_back", debit_id, None),
                                          ("rollback", "acknowledged", rollback_id, debit_id)]
    assert calls(transaction_id=rollback_id) == calls(player_id=player_id)[1:]
    assert calls(transaction_id=debit_id, player_id=player_id) == \
        calls(player_id=player_id)[:1]
    assert calls(transaction_id=debit_id, player_id="someone-else") == []
    nothing = server.call("GET", "/operator/wallet-calls", server.operator_token)
    assert (nothing.status_code, nothing.json()["error"]["code"]) == (422, "no_filter")


def test_an_unknown_or_misspelt_search_parameter_is_422_not_the_newest_rounds(
        server: Server, wallet: OperatorWallet) -> None:
    _played(server, wallet, 1)
    for path in ("/operator/rounds", "/operator/wallet-calls", "/operator/players"):
        refused = server.call("GET", path, server.operator_token,
                              params={"player_idd": "someone"})
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["code"] == "unknown_query_parameter" and "player_idd" in error["message"]


def test_reconcile_narrows_to_a_player_or_a_round_as_a_summary_a_listing_or_json(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, rounds = _played(server, wallet, 2)
    _played(server, wallet, 1)
    url = server.database_url
    mine = run_cli_in_process("reconcile", "--json", "--full", "--player", player_id,
                              "--database-url", url)
    assert mine.returncode == 0, mine.stdout + mine.stderr
    report = json.loads(mine.stdout)
    assert report["spins"] == 2 and report["states"] == {"credited": 2}
    assert report["in_doubt"] == []
    assert sorted(s["round_id"] for s in report["listing"]) == sorted(rounds)
    assert {s["player_id"] for s in report["listing"]} == {player_id}
    operator_side = _by_round_ref(wallet, player_id)
    for spin in report["listing"]:
        theirs = operator_side[spin["round_ref"]]
        assert spin["debit"]["operator_transaction_id"] == \
            theirs["debit"]["operator_transaction_id"]
        assert spin["credit"]["transaction_id"] == theirs["credit"]["transaction_id"]
    one = json.loads(run_cli_in_process("reconcile", "--json", "--full", "--round", str(rounds[0]),
                                        "--database-url", url).stdout)
    assert [s["round_id"] for s in one["listing"]] == [rounds[0]]
    by_ref = json.loads(run_cli_in_process("reconcile", "--json", "--full", "--round",
                                           one["listing"][0]["round_ref"],
                                           "--database-url", url).stdout)
    assert by_ref["listing"] == one["listing"]
    summary = run_cli_in_process("reconcile", "--player", player_id, "--database-url", url)
    assert summary.returncode == 0
    assert summary.stdout.strip() == "reconcile: 2 spins (2 credited), 0 in doubt"
    listing = run_cli_in_process("reconcile", "--full", "--player", player_id,
                                 "--database-url", url)
    debit_id = one["listing"][0]["debit"]["operator_transaction_id"]
    assert debit_id in listing.stdout and debit_id not in summary.stdout
    short = json.loads(run_cli_in_process("reconcile", "--json", "--player", player_id,
                                          "--database-url", url).stdout)
    assert "listing" not in short and short["spins"] == 2  # the listing only with --full
