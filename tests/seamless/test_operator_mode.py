"""Operator mode end to end: a real ``starfever serve --wallet operator`` against the reference
operator wallet as a real process, on SQLite and on PostgreSQL (OPERATOR-WALLET.md). A server
killed mid-round is in test_operator_mode_crashes.py and test_operator_mode_debit_crashes.py,
the long runs with faults in test_operator_mode_faults.py; reconcile and audit answer in
process (the database is what they read; ADR 0045)."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import func, select, text

from starfever.engine.model import load_model
from starfever.engine.rng import SystemRandomSource
from starfever.server.db import Database
from starfever.server.models import Account, SessionToken
from starfever.server.seamless_config import OperatorConfig
from starfever.server.services import round_details
from starfever.server.services.auth import Principal
from starfever.server.services.errors import ServiceError
from starfever.server.spin import draw as rounds
from starfever.server.spin.rule import SpinOutcome
from starfever.server.spin.seamless_wallet import SeamlessWallet as OperatorWalletAdapter
from tests.harness import (
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    expect,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    run_cli_in_process,
    run_coroutine,
    settings_like_servers,
    signed_launch,
    start_server,
    terminate_backends,
)
from tests.seamless.operator_mode import (
    BET,
    TIMEOUT_S,
    applied,
    calls,
    in_process_wallet,
    new_player,
    principal_of,
    rounds_of,
    wait_for,
)

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def test_launch_session_spins_and_both_books_agree(server: Server,
                                                   wallet: OperatorWallet) -> None:
    player_id, token = new_player(server, wallet, 10_000)
    assert server.balance(token) == 10_000  # GET /wallet asks the operator
    wallet.fault("debit", "twice", times=3)  # a request delivered twice moves money once
    wallet.fault("credit", "twice", times=3)
    answers = [expect(server.spin(token), 201).json() for _ in range(12)]
    rounds = rounds_of(server, token)
    assert len(rounds) == 12
    net = sum(int(r["total_win"]) - int(r["total_bet"]) for r in rounds)
    debits = applied(wallet, player_id, "debit")
    credits = applied(wallet, player_id, "credit")
    assert len(debits) == len(credits) == 12
    assert wallet.balance(player_id) == 10_000 + net == \
        10_000 + sum(int(c["amount"]) for c in credits) - sum(int(d["amount"]) for d in debits)
    assert answers[-1]["balance"] == wallet.balance(player_id) == server.balance(token)
    # each credit's acknowledgement is recorded in the books' next group commit (the spin's
    # answer does not wait for it)
    wait_for(lambda: {c["status"] for c in calls(server, "kind = 'credit'")}
              == {"acknowledged"})
    credited = calls(server, "kind = 'credit'")
    # each debit's acknowledgement was recorded with its round, which it names
    debited = [c for c in calls(server, "kind = 'debit'") if c["account_id"] ==
               credited[-1]["account_id"]]
    assert sorted(int(str(c["round_id"])) for c in debited) == sorted(int(str(r["id"]))
                                                                       for r in rounds)
    assert {c["status"] for c in debited} == {"acknowledged"}
    assert sorted(str(c["operator_transaction_id"]) for c in debited) == \
        sorted(str(d["operator_transaction_id"]) for d in debits)
    audit = run_cli_in_process("audit", "--database-url", server.database_url)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    reconcile = run_cli_in_process("reconcile", "--full", "--database-url", server.database_url)
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    assert debits[0]["operator_transaction_id"] in reconcile.stdout


def test_migration_0014_names_the_round_of_every_debit_played_before_it(
        kind: DatabaseKind, databases: Databases, wallet: OperatorWallet,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Debits recorded before migration 0014 named no round; it fills each one in from the
    round stored under the debit's key (so the stale-debit search skips them), and a debit
    without a round keeps none. A server of its own, stopped before the migrations run: the
    way down drops what later versions added (a chain head's MAC, which only a server's
    start writes again), so the module's shared server must not see it."""
    from alembic import command

    from starfever.server.db import alembic_config

    started = start_server(databases, kind, tmp_path_factory.mktemp("operator-migration"),
                           operator_mode_env(wallet, timeout=TIMEOUT_S),
                           args=operator_mode_args(wallet))
    with started as server:
        _, token = new_player(server, wallet, 1_000)
        played = [int(expect(server.spin(token), 201).json()["round"]["id"]) for _ in range(3)]
        wait_for(lambda: {c["status"] for c in calls(server, "kind = 'credit'")}
                 == {"acknowledged"})
    try:
        mine = f"kind = 'debit' AND round_id IN ({', '.join(map(str, played))})"
        ids = [str(c["transaction_id"]) for c in calls(server, mine)]
        assert len(ids) == 3
        config = alembic_config(server.database_url)
        command.downgrade(config, "0013")  # as such rows were written before
        listed = ", ".join(f"'{i}'" for i in ids)
        assert {c["round_id"] for c in calls(server, f"transaction_id IN ({listed})")} == {None}
        credits = {c["debit_transaction_id"]: c["round_id"]
                   for c in calls(server, "kind = 'credit'")}
        with server.engine().begin() as conn:  # and one debit whose round was never stored
            conn.execute(text("UPDATE wallet_calls SET idempotency_key = 'never-played' "
                              "WHERE transaction_id = :t"), {"t": ids[0]})
        command.upgrade(config, "head")
        after = {str(c["transaction_id"]): c["round_id"]
                 for c in calls(server, f"transaction_id IN ({listed})")}
    finally:
        server.engine().dispose()
        databases.drop(started.database_url)
    assert after[ids[0]] is None
    assert [after[i] for i in ids[1:]] == [credits[i] for i in ids[1:]]
    assert None not in [after[i] for i in ids[1:]]


def test_insufficient_funds_and_player_blocked_are_clear_4xx_and_nothing_is_played(
        server: Server, wallet: OperatorWallet) -> None:
    poor_id, poor = new_player(server, wallet, BET - 1)
    refused = server.spin(poor)
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "insufficient_funds")
    blocked_id, blocked = new_player(server, wallet, 10_000, blocked=True)
    refused = server.spin(blocked)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "player_blocked")
    assert rounds_of(server, poor) == [] and rounds_of(server, blocked) == []
    assert wallet.balance(poor_id) == BET - 1 and wallet.balance(blocked_id) == 10_000


def test_a_debit_that_times_out_is_rolled_back_and_no_round_is_played(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = new_player(server, wallet, 1_000)
    wallet.fault("debit", "delay", seconds=TIMEOUT_S + 1)
    lost = server.spin(token)
    assert (lost.status_code, lost.json()["error"]["code"]) == (503, "wallet_unavailable")
    assert rounds_of(server, token) == []
    wait_for(lambda: wallet.balance(player_id) == 1_000)  # debited late, then refunded
    assert len(applied(wallet, player_id, "rollback")) == 1
    wait_for(lambda: all(c["status"] == "acknowledged"
                          for c in calls(server, "kind = 'rollback'")))
    # the JSON log line of the failure carries the ids as fields of their own (issue 35)
    entries = [json.loads(line) for line in server.log_path.read_text().splitlines()
               if line.startswith("{")]
    failed = [e for e in entries if e.get("call") == "debit" and e.get("player_id") == player_id]
    assert len(failed) == 1, failed
    debit = calls(server, f"transaction_id = '{failed[0]['transaction_id']}'")[0]
    assert debit["kind"] == "debit" and failed[0]["round_ref"] == debit["round_ref"]
    assert failed[0]["debit_transaction_id"] == debit["transaction_id"]
    assert re.fullmatch(r"[0-9a-f]{32}", failed[0]["request_id"])
    assert failed[0]["account_id"] == debit["account_id"]


def test_a_hanging_wallet_costs_a_failed_spin_one_timeout_its_rollback_goes_on_after(
        server: Server, wallet: OperatorWallet) -> None:
    """Issue 35 item 4: the debit hangs past the timeout and so does its rollback. The player
    gets ``503 wallet_unavailable`` after the debit's timeout, not after the rollback's too:
    when the answer comes, the rollback is recorded (committed, OPERATOR-WALLET.md rule 3) and
    its send still under way (never answered yet); it goes on in the background and the
    resender sends it again until the operator has refunded the bet. The spin runs through
    this test process's own adapter (as one more worker would), with a 1.5 s timeout."""
    timeout = 1.5
    player_id, _ = new_player(server, wallet, 1_000)
    db = Database(server.database_url)
    adapter, settings, model = in_process_wallet(server, wallet, db, timeout=timeout)
    wallet.fault("debit", "delay", seconds=timeout + 1)
    wallet.fault("rollback", "delay", seconds=timeout + 1)

    async def spin() -> tuple[float, str, list[dict[str, object]]]:
        job = rounds.queued_spin(settings, model, principal_of(db, player_id), 1,
                                 uuid.uuid4().hex, None, draw=False)
        started = time.monotonic()
        try:
            with pytest.raises(ServiceError) as lost:
                await adapter.spin(job)
            elapsed = time.monotonic() - started
            debit = calls(server, f"kind = 'debit' AND idempotency_key = '{job.key}'")[0]
            rollback = calls(server, f"kind = 'rollback' AND debit_transaction_id = "
                                     f"'{debit['transaction_id']}'")
            return elapsed, lost.value.code, rollback
        finally:
            await adapter.aclose()

    try:
        elapsed, code, rollback = run_coroutine(spin())
    finally:
        db.dispose()
    assert code == "wallet_unavailable"
    assert timeout <= elapsed < 2 * timeout, elapsed  # the debit's timeout, not two
    assert [(c["status"], c["attempts"]) for c in rollback] == [("pending", 0)]
    wait_for(lambda: wallet.balance(player_id) == 1_000 and calls(
        server, f"transaction_id = '{rollback[0]['transaction_id']}'")[0]["status"]
        == "acknowledged")
    assert rounds_of(server, launched_player(server, wallet.secret, player_id)) == []


def test_a_credit_whose_reply_is_dropped_stays_pending_then_is_credited_once(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = new_player(server, wallet, 1_000)
    wallet.fault("credit", "drop")
    answer = expect(server.spin(token), 201).json()
    round_id = answer["round"]["id"]

    def credit_status() -> object:
        found = calls(server, f"kind = 'credit' AND round_id = {int(round_id)}")
        return found[0]["status"] if found else None

    wait_for(lambda: credit_status() == "acknowledged")
    credits = [t for t in wallet.transactions(player_id) if t["method"] == "credit"]
    assert len(credits) == 1 and credits[0]["applied"]
    win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
    assert wallet.balance(player_id) == 1_000 + win


def test_a_retried_spin_reuses_its_transaction_id_and_moves_nothing(
        server: Server, wallet: OperatorWallet) -> None:
    player_id, token = new_player(server, wallet, 1_000)
    key = uuid.uuid4().hex
    first = expect(server.spin(token, key=key), 201).json()
    again = expect(server.spin(token, key=key), 200).json()
    assert again["replayed"] and again["round"]["id"] == first["round"]["id"]
    assert len(wallet.transactions(player_id)) == 2  # one debit, one credit
    assert len(rounds_of(server, token)) == 1



def test_a_spin_whose_debit_reply_was_late_answers_the_round_its_retry_played(
        server: Server, wallet: OperatorWallet) -> None:
    """The first request's debit is answered after the server's timeout; meanwhile the client
    sent the same spin again (same key), whose debit the operator answered at once (with its
    first answer) and which was played. The first request must not then say "rolled back,
    nothing was played": it answers that round, and nothing is rolled back."""
    player_id, token = new_player(server, wallet, 1_000)
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
    assert len(rounds_of(server, token)) == 1
    assert [c["status"] for c in calls(server, f"kind = 'debit' AND idempotency_key = '{key}'")] \
        == ["acknowledged"]
    assert not calls(server, f"kind = 'rollback' AND round_ref IN (SELECT round_ref FROM "
                              f"wallet_calls WHERE idempotency_key = '{key}')")
    assert len(applied(wallet, player_id, "debit")) == 1
    assert applied(wallet, player_id, "rollback") == []


def test_the_first_spin_after_the_database_dropped_its_connections_is_played(
        server: Server, wallet: OperatorWallet) -> None:
    """PostgreSQL restarted (every connection of the server dropped) between two spins: the
    next spin's debit is recorded on a new connection, not answered 500."""
    if not server.database_url.startswith("postgresql"):
        pytest.skip("drops PostgreSQL's connections")
    _player_id, token = new_player(server, wallet, 1_000)
    expect(server.spin(token), 201)
    assert terminate_backends(server.database_url, 1, 0.0) > 0
    for _ in range(3):
        expect(server.spin(token), 201)
    assert len(rounds_of(server, token)) == 4

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
    _, token = new_player(server, wallet, 100)
    for path, body in (("/limits", {"weekly_deposit_limit": 100}),
                       ("/self-exclusion", {"days": 7})):
        method = "PUT" if path == "/limits" else "POST"
        refused = server.call(method, path, token, json=body)
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "operator_mode")


def test_the_operators_player_list_includes_operator_mode_players(
        server: Server, wallet: OperatorWallet) -> None:
    """An operator-mode player has no wallet row here (the operator keeps the balance): the
    player list names it all the same, with no balance, instead of leaving it out."""
    player_id, _ = new_player(server, wallet, 100)
    found = expect(server.call("GET", "/operator/search/players", server.operator_token,
                               params={"q": player_id}), 200).json()["players"]
    assert [p["external_id"] for p in found] == [player_id]
    listed = expect(server.call("GET", "/operator/players", server.operator_token,
                                params={"limit": 1000}), 200).json()["players"]
    assert [p["balance"] for p in listed if p["username"] == found[0]["username"]] == [None]


def test_a_forged_reply_counts_for_nothing(server: Server, wallet: OperatorWallet) -> None:
    """Replies signed with another secret (a man in the middle): a forged debit reply is a
    failed debit (rolled back, nothing played); a forged credit reply leaves the credit
    pending until a genuine reply acknowledges it."""
    player_id, token = new_player(server, wallet, 1_000)
    wallet.fault("debit", "forge")
    lost = server.spin(token)
    assert (lost.status_code, lost.json()["error"]["code"]) == (503, "wallet_unavailable")
    assert rounds_of(server, token) == []
    wait_for(lambda: wallet.balance(player_id) == 1_000)
    assert len(applied(wallet, player_id, "rollback")) == 1
    wallet.fault("credit", "forge")
    answer = expect(server.spin(token), 201).json()
    round_id = int(answer["round"]["id"])
    wait_for(lambda: calls(server, f"kind = 'credit' AND round_id = {round_id}")[0]
              ["status"] == "acknowledged")
    credit = calls(server, f"kind = 'credit' AND round_id = {round_id}")[0]
    assert int(credit["attempts"]) >= 1  # the forged reply was not taken for an answer
    assert len(applied(wallet, player_id, "credit")) == 1
    win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
    assert wallet.balance(player_id) == 1_000 + win


def test_audit_checks_the_operator_book_against_the_wallet_calls(
        server: Server, wallet: OperatorWallet) -> None:
    _, token = new_player(server, wallet, 1_000)
    round_id = int(expect(server.spin(token), 201).json()["round"]["id"])
    tamper = "UPDATE wallet_calls SET amount = amount + :d WHERE kind = 'credit' AND round_id = :r"
    with server.engine().begin() as conn:
        conn.execute(text(tamper), {"d": 1, "r": round_id})
    try:
        audit = run_cli_in_process("audit", "--database-url", server.database_url)
        assert audit.returncode == 1 and f"round {round_id}: credit of" in audit.stdout
    finally:
        with server.engine().begin() as conn:
            conn.execute(text(tamper), {"d": -1, "r": round_id})
    audit = run_cli_in_process("audit", "--database-url", server.database_url)
    assert audit.returncode == 0 and "operator rounds checked" in audit.stdout, audit.stdout


def test_a_live_round_is_drawn_only_once_the_operator_took_its_bet(
        server: Server, wallet: OperatorWallet) -> None:
    """OPERATOR-WALLET.md rule 2: a round is drawn only after its debit is acknowledged, so a
    refused bet never had an outcome. The spins run through this test process's own
    operator-mode wallet on the server's database (as one more worker would, with its own
    settler), whose live source notes, when the round's draws are asked for, which of the
    player's calls the operator has applied."""
    player_id, _ = new_player(server, wallet, 10_000)
    blocked_id, _ = new_player(server, wallet, 10_000, blocked=True)
    db = Database(server.database_url)
    settings = settings_like_servers(server.database_url)
    model = load_model(settings.model)
    adapter = OperatorWalletAdapter(db, OperatorConfig(url=wallet.url, secret=wallet.secret,
                                                       timeout=TIMEOUT_S,
                                                       public_url=server.url),
                                    details_key=round_details.details_key(settings.secret_key))
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
        run_coroutine(both())
    finally:
        db.dispose()
    assert [t["method"] for t in wallet.transactions(player_id) if t["applied"]] \
        == ["debit", "credit"]
