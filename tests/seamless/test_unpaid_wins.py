"""Unpaid wins (issue 35, finding 1; OPERATOR-WALLET.md rule 5): a real ``starfever serve
--wallet operator`` against the reference wallet as a real process, on SQLite and on
PostgreSQL. The wallet is told to refuse one winning round's credit with a final ``4xx``
(the ``refuse`` fault: nothing applied on its side); another winning round is paid. The
unpaid win must then be shown as unpaid everywhere it matters: the spin's answer (its balance
the debit's, not counting the win), the player's history and recall, the back office's list
with both sides' ids, the metric, the daily report (kept out of wins and GGR, so that GGR is
the operator wallet's own), the audit (a finding: FAILED) and ``starfever reconcile``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from starfever.engine import load_model, replay_round
from starfever.engine.rng import ReplayError
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
    run_cli_in_process,
    start_server,
)
from tests.seamless.operator_mode import settled, wait_for

pytestmark = pytest.mark.slow

START = 10_000
"""The player's balance at the operator before the first spin (cents)."""


@cache
def _winning_draws() -> tuple[int, ...]:
    """Five base stops that play a plain win (no feature, no €€€) at line bet 1."""
    model = load_model("default")
    for first in range(len(model.base_reels[0])):
        for second in range(len(model.base_reels[1])):
            draws = (first, second, 0, 0, 0)
            try:
                result = replay_round(model, 1, draws, pool=model.seed_cents)
            except ReplayError:
                continue
            if result.total_win > 0 and result.feature is None \
                    and not result.progressive_win:
                return draws
    raise AssertionError("no plain winning stops found")


@dataclass(frozen=True)
class Played:
    """One server's play: a paid winning round, then one whose credit was refused."""

    server: Server
    player_id: str
    token: str
    paid: dict[str, Any]
    """The spin answer of the paid round."""
    unpaid: dict[str, Any]
    """The spin answer of the round whose credit the operator refused."""
    unpaid_key: str
    """Its Idempotency-Key."""


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def played(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    server = start_server(databases, kind, tmp_path_factory.mktemp(f"unpaid-{kind}"),
                          operator_mode_env(wallet, timeout=2.0),
                          args=operator_mode_args(wallet))
    with server:
        player_id = f"unpaid-{uuid.uuid4().hex[:10]}"
        wallet.player(player_id, START)
        token = launched_player(server, wallet.secret, player_id)
        draws = list(_winning_draws())
        paid = expect(server.spin(token, draws=draws), 201).json()
        wait_for(lambda: settled(server, player_id))
        wallet.fault("credit", "refuse")
        key = uuid.uuid4().hex
        unpaid = expect(server.spin(token, key=key, draws=draws), 201).json()
        wait_for(lambda: settled(server, player_id))
        yield Played(server, player_id, token, paid, unpaid, key)
    databases.drop(server.database_url)


def _applied(wallet: OperatorWallet, player_id: str, method: str) -> list[dict[str, Any]]:
    return [t for t in wallet.transactions(player_id) if t["method"] == method and t["applied"]]


def test_a_refused_credit_is_never_shown_to_the_player_as_paid(
        played: Played, wallet: OperatorWallet) -> None:
    server, paid, unpaid = played.server, played.paid, played.unpaid
    win = unpaid["round"]["total_win"]
    assert win > 0 and paid["round"]["total_win"] == win
    assert paid["round"]["payment"] == "paid" and unpaid["round"]["payment"] == "unpaid"
    # the wallet paid the first win and not the second: its balance is the spin's answer
    operator_balance = wallet.balance(played.player_id)
    assert operator_balance == START - 2 * paid["round"]["total_bet"] + win
    assert unpaid["balance"] == operator_balance != unpaid["round"]["balance_after"]
    assert server.balance(played.token) == operator_balance  # GET /wallet: the operator's
    history = expect(server.call("GET", "/rounds", played.token), 200).json()["rounds"]
    assert [(r["id"], r["payment"]) for r in history] == [
        (unpaid["round"]["id"], "unpaid"), (paid["round"]["id"], "paid")]
    retried = expect(server.spin(played.token, key=played.unpaid_key,
                                 draws=list(_winning_draws())), 200).json()
    assert retried["replayed"] and retried["round"]["payment"] == "unpaid"
    assert retried["balance"] == operator_balance  # a retry does not count it as paid either
    recalled = expect(server.call("GET", f"/rounds/{unpaid['round']['id']}", played.token),
                      200).json()
    assert recalled["payment"] == "unpaid"
    assert expect(server.call("GET", f"/rounds/{paid['round']['id']}", played.token),
                  200).json()["payment"] == "paid"


def test_the_back_office_lists_an_unpaid_win_with_both_sides_ids(
        played: Played, wallet: OperatorWallet) -> None:
    server, unpaid = played.server, played.unpaid
    listed = expect(server.call("GET", "/operator/unpaid-wins", server.operator_token),
                    200).json()
    assert (listed["count"], listed["amount"]) == (1, unpaid["round"]["total_win"])
    [win] = listed["wins"]
    debits = _applied(wallet, played.player_id, "debit")
    theirs = next(d for d in debits if d["round_id"] == win["round_ref"])
    assert win["round_id"] == unpaid["round"]["id"]
    assert win["external_id"] == played.player_id
    assert win["amount"] == unpaid["round"]["total_win"]
    assert win["error"] == "player_blocked"
    assert win["debit_transaction_id"] == theirs["transaction_id"]
    assert win["operator_debit_transaction_id"] == theirs["operator_transaction_id"]
    assert win["transaction_id"] not in {t["transaction_id"] for t in
                                         _applied(wallet, played.player_id, "credit")}
    meters = expect(server.call("GET", "/operator/meters", server.operator_token), 200).json()
    assert meters["unpaid_wins"]["count"] == 1
    assert meters["pending_credits"]["count"] == 0  # not pending: refused, and said so
    view = expect(server.call("GET", f"/operator/rounds/{win['round_id']}",
                              server.operator_token), 200).json()
    assert view["round"]["payment"] == "unpaid"


def test_unpaid_wins_are_a_metric(played: Played) -> None:
    response = expect(played.server.http.get(f"{played.server.url}/metrics"), 200)
    found = {s.name: s.value for f in text_string_to_metric_families(response.text)
             for s in f.samples}
    assert found["starfever_unpaid_wins"] == 1
    assert found["starfever_unpaid_wins_cents"] == played.unpaid["round"]["total_win"]
    assert found["starfever_pending_credits"] == 0


def test_the_daily_and_monthly_reports_keep_an_unpaid_win_out_of_wins_and_ggr(
        played: Played, wallet: OperatorWallet) -> None:
    day = played.unpaid["round"]["created_at"][:10]
    for period, date in (("daily", day), ("monthly", day[:7])):
        done = run_cli_in_process("report", period, "--date", date, "--format", "json",
                                  "--include-test", "--database-url",
                                  played.server.database_url)
        assert done.returncode == 0, done.stderr
        total = json.loads(done.stdout)["total"]
        bets = 2 * played.paid["round"]["total_bet"]
        assert (total["rounds"], total["bets"]) == (2, bets), period
        assert total["wins"] == played.paid["round"]["total_win"]
        assert (total["unpaid_rounds"], total["unpaid_wins"]) == \
            (1, played.unpaid["round"]["total_win"])
        # the GGR is what the operator's wallet kept of the player's money
        assert total["ggr"] == START - wallet.balance(played.player_id)
    shown = run_cli_in_process("report", "daily", "--date", day, "--include-test",
                               "--database-url", played.server.database_url).stdout
    assert "UNPAID: 1 wins" in shown


def test_audit_and_reconcile_flag_an_unpaid_win(played: Played) -> None:
    url, unpaid = played.server.database_url, played.unpaid
    audit = run_cli_in_process("audit", "--database-url", url)
    assert audit.returncode == 1
    assert f"round {unpaid['round']['id']}: UNPAID win of {unpaid['round']['total_win']} " \
        "cents" in audit.stdout
    summary = run_cli_in_process("reconcile", "--database-url", url)
    assert summary.returncode == 1
    assert "1 unpaid" in summary.stdout and "  UNPAID " in summary.stdout
    report = json.loads(run_cli_in_process("reconcile", "--json", "--database-url", url).stdout)
    assert [(s["round_id"], s["state"]) for s in report["unpaid"]] == \
        [(unpaid["round"]["id"], "unpaid")]
