"""An operator resends or settles an unpaid win (issue 35 item 1, ADR 0061; OPERATOR-WALLET.md
rule 5), and the low items of issue 35 item 5 in operator mode. A real ``starfever serve
--wallet operator`` against the reference wallet (both real processes), on SQLite and on
PostgreSQL (this folder's module-scoped ``server`` and ``wallet``); the race of two approvers
runs the service in two threads of this process on the server's database.

The reference wallet's ``refuse`` fault answers a credit ``403 player_blocked`` without
applying or recording it: the operator's side "fixed" is the next credit not being refused."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from starfever.engine import load_model
from starfever.server.audit import run_audit
from starfever.server.db import Database
from starfever.server.reconcile import reconcile
from starfever.server.services import events, unpaid_actions
from starfever.server.services.errors import ServiceError
from tests.harness import (
    OPERATOR_PASSWORD,
    OperatorWallet,
    Server,
    create_operator,
    expect,
    operator_log_in,
    settings_like_servers,
)
from tests.seamless.operator_mode import new_player, settled, wait_for
from tests.web.forcing import line_win_draws

pytestmark = pytest.mark.slow


@cache
def _draws() -> tuple[int, ...]:
    return tuple(line_win_draws(load_model("default")))


@dataclass(frozen=True)
class Operators:
    """Two operator accounts of the module's server, logged in: ``a`` and ``b``."""

    a: str
    b: str


@pytest.fixture(scope="module")
def ops(server: Server) -> Operators:
    tokens = []
    for name in ("settle-a", "settle-b"):
        secret = create_operator(server.database_url, name)
        tokens.append(str(expect(operator_log_in(server.http, server.base, name,
                                                 OPERATOR_PASSWORD, secret, server),
                                 201).json()["token"]))
    return Operators(*tokens)


@dataclass(frozen=True)
class Unpaid:
    player_id: str
    token: str
    round: dict[str, Any]
    balance: int
    """The operator's balance after the refused round."""


def _unpaid_win(server: Server, wallet: OperatorWallet) -> Unpaid:
    player_id, token = new_player(server, wallet, 10_000)
    wallet.fault("credit", "refuse")
    answer = expect(server.spin(token, draws=list(_draws())), 201).json()
    assert answer["round"]["payment"] == "unpaid" and answer["round"]["total_win"] > 0
    wait_for(lambda: settled(server, player_id))
    return Unpaid(player_id, token, answer["round"], wallet.balance(player_id))


def _post(server: Server, token: str, path: str, status: int, **kwargs: Any) -> Any:
    return expect(server.call("POST", f"/operator/unpaid-wins{path}", token, **kwargs),
                  status).json()


def _payment(server: Server, token: str, round_id: int) -> str:
    found = expect(server.call("GET", f"/operator/rounds/{round_id}", token), 200).json()
    return str(found["round"]["payment"])


def _listed(server: Server, token: str) -> dict[int, dict[str, Any]]:
    found = expect(server.call("GET", "/operator/unpaid-wins", token), 200).json()
    return {w["round_id"]: w for w in found["wins"]}


def _events_of(server: Server, round_id: int) -> list[events.Event]:
    db = Database(server.database_url)
    try:
        return [e for e in reversed(events.query(db, limit=500))
                if e.detail.get("round_id") == round_id]
    finally:
        db.dispose()


def _credits_applied(wallet: OperatorWallet, player_id: str) -> list[dict[str, Any]]:
    return [t for t in wallet.transactions(player_id)
            if t["method"] == "credit" and t["applied"]]


def test_a_resent_credit_pays_the_win_once_and_a_refused_one_is_an_event(
        server: Server, wallet: OperatorWallet, ops: Operators) -> None:
    win = _unpaid_win(server, wallet)
    rid, amount = win.round["id"], win.round["total_win"]
    [refused] = _events_of(server, rid)  # the refusal itself is a significant event
    assert (refused.kind, refused.actor, refused.detail["error"]) == (
        "credit_refused", None, "player_blocked")
    assert rid in _listed(server, ops.a)

    done = _post(server, ops.a, f"/{rid}/resend", 200)
    assert done["payment"] == "paid" and done["operator_transaction_id"]
    assert _payment(server, ops.a, rid) == "paid" and rid not in _listed(server, ops.a)
    assert wallet.balance(win.player_id) == win.balance + amount == server.balance(win.token)
    [credit] = _credits_applied(wallet, win.player_id)
    assert credit["transaction_id"] == done["transaction_id"]  # the same credit transaction
    assert [(e.kind, e.actor) for e in _events_of(server, rid)] == [
        ("credit_refused", None), ("unpaid_win_resent", "settle-a"), ("unpaid_win_paid", None)]

    again = expect(server.call("POST", f"/operator/unpaid-wins/{rid}/resend", ops.b), 409)
    assert again.json()["error"]["code"] == "not_unpaid"
    assert len(_credits_applied(wallet, win.player_id)) == 1
    assert wallet.balance(win.player_id) == win.balance + amount


def test_a_resend_refused_again_stays_unpaid_with_the_new_answer(
        server: Server, wallet: OperatorWallet, ops: Operators) -> None:
    win = _unpaid_win(server, wallet)
    rid = win.round["id"]
    since = _listed(server, ops.a)[rid]["since"]
    wallet.fault("credit", "refuse")
    done = _post(server, ops.a, f"/{rid}/resend", 200)
    assert (done["payment"], done["error"]) == ("unpaid", "player_blocked")
    listed = _listed(server, ops.a)[rid]
    assert listed["error"] == "player_blocked" and listed["since"] > since
    assert _payment(server, ops.a, rid) == "unpaid" and not _credits_applied(wallet,
                                                                              win.player_id)
    assert [e.kind for e in _events_of(server, rid)] == [
        "credit_refused", "unpaid_win_resent", "credit_refused"]


def test_a_manual_settlement_needs_a_second_operators_approval(
        server: Server, wallet: OperatorWallet, ops: Operators) -> None:
    win = _unpaid_win(server, wallet)
    rid, amount = win.round["id"], win.round["total_win"]
    short = expect(server.call("POST", f"/operator/unpaid-wins/{rid}/settlement", ops.a,
                               json={"reason": "paid"}), 422)
    assert short.json()["error"]["code"] == "validation_error"
    reason = "Paid by bank transfer, operator ticket OPS-4711"
    proposed = _post(server, ops.a, f"/{rid}/settlement", 201, json={"reason": reason})
    assert (proposed["status"], proposed["proposed_by"], proposed["payment"]) == (
        "proposed", "settle-a", "unpaid")
    assert _listed(server, ops.a)[rid]["settlement"]["reason"] == reason
    twice = expect(server.call("POST", f"/operator/unpaid-wins/{rid}/settlement", ops.b,
                               json={"reason": reason}), 409)
    assert twice.json()["error"]["code"] == "settlement_proposed"

    db = Database(server.database_url)
    try:
        before = run_audit(db, settings_like_servers(server.database_url)).problems
    finally:
        db.dispose()
    assert [p for p in before if p.startswith(f"round {rid}: UNPAID")], before
    own = expect(server.call("POST", f"/operator/unpaid-wins/{rid}/settlement/approve",
                             ops.a), 403)
    assert own.json()["error"]["code"] == "own_proposal"
    assert _payment(server, ops.a, rid) == "unpaid"  # until another account approves

    approved = _post(server, ops.b, f"/{rid}/settlement/approve", 200)
    assert (approved["status"], approved["approved_by"], approved["payment"]) == (
        "approved", "settle-b", "settled_manually")
    for token in (ops.b, ops.a):  # a double approval settles nothing twice
        again = expect(server.call("POST", f"/operator/unpaid-wins/{rid}/settlement/approve",
                                   token), 409)
        assert again.json()["error"]["code"] == "already_settled"
    resend = expect(server.call("POST", f"/operator/unpaid-wins/{rid}/resend", ops.a), 409)
    assert resend.json()["error"]["code"] == "not_unpaid"

    assert _payment(server, ops.a, rid) == "settled_manually"
    history = expect(server.call("GET", f"/rounds/{rid}", win.token), 200).json()
    assert history["payment"] == "settled_manually"
    listed = expect(server.call("GET", "/operator/unpaid-wins", ops.a), 200).json()
    assert rid not in {w["round_id"] for w in listed["wins"]} and listed["settled_count"] >= 1
    assert [(e.kind, e.actor) for e in _events_of(server, rid)] == [
        ("credit_refused", None), ("settlement_proposed", "settle-a"),
        ("settlement_approved", "settle-b")]
    # never paid by the wallet: not in wins or GGR, reported apart; reconcile agrees
    assert wallet.balance(win.player_id) == win.balance and not _credits_applied(
        wallet, win.player_id)
    day = str(win.round["created_at"])[:10]
    report = expect(server.call("GET", "/operator/reports/daily", ops.a,
                                params={"date": day, "format": "json",
                                        "include_test": "true"}), 200).json()["total"]
    assert report["settled_wins"] >= amount and report["settled_rounds"] >= 1
    assert report["ggr"] == report["bets"] - report["wins"]
    db = Database(server.database_url)
    try:
        [spin] = reconcile(db, player_id=win.player_id).spins
        problems = run_audit(db, settings_like_servers(server.database_url)).problems
    finally:
        db.dispose()
    assert (spin.state, spin.doubt) == ("settled_manually", None)
    assert not [p for p in problems if p.startswith(f"round {rid}:")], problems


def _details(server: Server, round_: dict[str, Any], lang: str) -> str:
    path = "/round-details" + str(round_["details_url"]).split("/round-details", 1)[1]
    return expect(server.http.get(f"{server.url}{path}", params={"lang": lang}), 200).text


def test_the_round_details_page_says_whether_the_win_was_paid(
        server: Server, wallet: OperatorWallet, ops: Operators) -> None:
    win = _unpaid_win(server, wallet)
    rid = win.round["id"]
    unpaid_de, unpaid_en = _details(server, win.round, "de"), _details(server, win.round, "en")
    assert 'data-payment="unpaid"' in unpaid_de and 'data-payment="unpaid"' in unpaid_en
    assert "Gewinn noch nicht vom Betreiber ausgezahlt" in unpaid_de
    assert "win pending payment by the operator" in unpaid_en
    _post(server, ops.a, f"/{rid}/settlement", 201, json={"reason": "Paid at the cashier desk"})
    _post(server, ops.b, f"/{rid}/settlement/approve", 200)
    settled_de, settled_en = _details(server, win.round, "de"), _details(server, win.round, "en")
    assert 'data-payment="settled_manually"' in settled_de
    assert "vom Betreiber außerhalb des Spiels abgerechnet" in settled_de
    assert "settled by the operator outside the game" in settled_en


def test_a_withdrawn_proposal_leaves_the_win_unpaid(
        server: Server, wallet: OperatorWallet, ops: Operators) -> None:
    win = _unpaid_win(server, wallet)
    rid = win.round["id"]
    _post(server, ops.a, f"/{rid}/settlement", 201, json={"reason": "A wrong reason, typed"})
    withdrawn = expect(server.call("DELETE", f"/operator/unpaid-wins/{rid}/settlement", ops.b),
                       200).json()
    assert (withdrawn["status"], withdrawn["payment"]) == ("withdrawn", "unpaid")
    gone = expect(server.call("POST", f"/operator/unpaid-wins/{rid}/settlement/approve", ops.b),
                  404)
    assert gone.json()["error"]["code"] == "no_settlement_proposed"
    assert _listed(server, ops.a)[rid]["settlement"] is None
    again = _post(server, ops.b, f"/{rid}/settlement", 201, json={"reason": "The right one now"})
    assert again["proposed_by"] == "settle-b" and again["status"] == "proposed"


def test_two_approvers_at_once_settle_it_once(server: Server, wallet: OperatorWallet,
                                              ops: Operators) -> None:
    win = _unpaid_win(server, wallet)
    rid = win.round["id"]
    _post(server, ops.a, f"/{rid}/settlement", 201, json={"reason": "Settled by the cashier"})
    db = Database(server.database_url)
    start = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def approve(actor: str) -> Callable[[], None]:
        def run() -> None:
            start.wait()
            try:
                outcomes[actor] = unpaid_actions.approve(db, rid, actor=actor).status
            except ServiceError as refused:
                outcomes[actor] = refused.code
        return run

    threads = [threading.Thread(target=approve(name)) for name in ("racer-1", "racer-2")]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        db.dispose()
    assert sorted(map(str, outcomes.values())) == ["already_settled", "approved"], outcomes
    approvals = [e for e in _events_of(server, rid) if e.kind == "settlement_approved"]
    assert len(approvals) == 1 and approvals[0].actor in ("racer-1", "racer-2")
    assert _payment(server, ops.a, rid) == "settled_manually"


def test_refusals_are_clear(server: Server, wallet: OperatorWallet, ops: Operators) -> None:
    player_id, token = new_player(server, wallet, 10_000)
    paid = expect(server.spin(token, draws=list(_draws())), 201).json()["round"]
    wait_for(lambda: settled(server, player_id))
    for path, status, code in ((f"/{paid['id']}/resend", 409, "not_unpaid"),
                               (f"/{paid['id']}/settlement/approve", 404,
                                "no_settlement_proposed"),
                               ("/999999999/resend", 404, "no_unpaid_win")):
        refused = expect(server.call("POST", f"/operator/unpaid-wins{path}", ops.a), status)
        assert refused.json()["error"]["code"] == code, path
    as_player = expect(server.call("POST", f"/operator/unpaid-wins/{paid['id']}/resend",
                                   token), 403)
    assert as_player.json()["error"]["code"] == "operator_only"


def test_a_pending_credits_spin_answer_agrees_with_the_wallet(
        server: Server, wallet: OperatorWallet) -> None:
    """Issue 35 item 5: while the credit is pending, the spin's balance is what ``GET
    /wallet`` says (the operator's, without the win) and the round says ``pending``."""
    player_id, token = new_player(server, wallet, 10_000)
    wallet.fault("credit", "drop")
    answer = expect(server.spin(token, draws=list(_draws())), 201).json()
    assert answer["round"]["payment"] == "pending"
    assert answer["balance"] == 10_000 - answer["round"]["total_bet"] \
        == answer["round"]["balance_after"] - answer["round"]["total_win"]
    assert server.balance(token) in (answer["balance"], answer["round"]["balance_after"])
    wait_for(lambda: settled(server, player_id))
    assert server.balance(token) == answer["round"]["balance_after"]


def test_the_operator_keeps_limits_and_exclusions_and_the_back_office_is_told(
        server: Server, wallet: OperatorWallet, ops: Operators) -> None:
    _, token = new_player(server, wallet, 1_000)
    for path in ("/limits", "/self-exclusion"):
        refused = expect(server.call("GET", path, token), 403).json()["error"]
        assert refused["code"] == "operator_mode" and "operator's" in refused["message"]
    told = expect(server.call("GET", "/operator/wallet", ops.a), 200).json()
    assert told == {"keeps_balances": False, "calls_operator": True, "launches_players": True}
