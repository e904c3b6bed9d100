"""Every cent is chained (issue 34, ADR 0048): on a real server's database, played through the
real code and then edited as an insider without the audit key would, the audit fails

- a wallet ``win`` that no round explains (with its house pair and a continuous
  ``balance_after``), also once the operator has paid it out; and a round's entry changed
  where no sum shows it;
- a deposit given an id of 0 or below (with its cashier pair) for a player with no entries:
  the walk starts at the lowest id there is, not at 1;
- either chain's end cut off, books made consistent, without any signed statement: each head
  carries a MAC, and the server extends no head that does not match it;
- a database sealed by the version before: not sealed until its first start with this one,
  then every ledger entry before the keyed boundary is sealed under the boundary's MAC.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

from starfever.server.services.chain import boundary_mac
from tests.harness import (
    Databases,
    Server,
    expect,
    run_cli_in_process,
    settings_like_servers,
    start_server,
)

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def _audit(server: Server) -> tuple[int, str]:
    """``starfever audit`` of the server's database, in this process: it reads the database,
    which no process of its own would read differently (ADR 0045)."""
    done = run_cli_in_process("audit", "--database-url", server.database_url, "--show", "50")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _account(conn: Connection, name: str) -> tuple[int, int]:
    """The player's account id and wallet balance."""
    aid = conn.execute(text("SELECT id FROM accounts WHERE username = :u"),
                       {"u": name}).scalar_one()
    balance = conn.execute(text("SELECT balance FROM wallets WHERE account_id = :a"),
                           {"a": aid}).scalar_one()
    return int(aid), int(balance)


def test_a_win_that_no_round_explains_fails_the_audit_also_once_paid_out(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    try:
        name, token = server.player(deposit=1_000)
        for _ in range(3):
            expect(server.spin(token), 201)
        assert _audit(server)[0] == 0
        # an entry of a round changed where no sum shows it: the house's bet income booked as
        # a win paid (the operator's reports would misstate the takings)
        with server.engine().begin() as conn:
            entry, round_id = conn.execute(text(
                "SELECT id, round_id FROM ledger_entries WHERE book = 'house' AND kind = 'bet' "
                "ORDER BY id DESC LIMIT 1")).one()
            conn.execute(text("UPDATE ledger_entries SET kind = 'win' WHERE id = :i"),
                         {"i": entry})
        code, output = _audit(server)
        assert code == 1 and "1 mismatches" in output, output
        assert f"round {round_id}: its ledger entries are not the ones it books" in output
        with server.engine().begin() as conn:
            conn.execute(text("UPDATE ledger_entries SET kind = 'bet' WHERE id = :i"),
                         {"i": entry})
        assert _audit(server)[0] == 0
        forged = 900_000  # EUR 9,000
        with server.engine().begin() as conn:
            aid, balance = _account(conn, name)
            # the books made to match: the win comes out of the house, the wallet's
            # balance_after continues from the entry before
            conn.execute(text(
                "INSERT INTO ledger_entries (book, account_id, kind, amount, balance_after, "
                "created_at) VALUES ('wallet', :a, 'win', :x, :b, :t)"),
                {"a": aid, "x": forged, "b": balance + forged, "t": _now()})
            win_id = conn.execute(text("SELECT MAX(id) FROM ledger_entries WHERE book = "
                                       "'wallet'")).scalar_one()
            conn.execute(text("INSERT INTO ledger_entries (book, kind, amount, created_at) "
                              "VALUES ('house', 'win', :x, :t)"), {"x": -forged, "t": _now()})
            conn.execute(text("UPDATE wallets SET balance = balance + :x WHERE account_id = :a"),
                         {"x": forged, "a": aid})
        explained = (f"ledger entry {win_id}: a wallet win of {forged} cents that no round or "
                     "cashier booking explains")
        code, output = _audit(server)
        assert code == 1 and explained in output, output
        assert "a house win of -900000 cents that no round or cashier booking explains" in output
        # the operator pays the forged money out: a real, chained withdrawal
        paid = server.call("POST", f"/players/{name}/withdrawals", server.operator_token,
                           json={"amount": forged}, headers={"Idempotency-Key": uuid.uuid4().hex})
        expect(paid, 201)
        code, output = _audit(server)
        assert code == 1 and explained in output, output
        assert "2 mismatches" in output  # the two forged entries; the withdrawal is in order
    finally:
        server.stop()


def test_a_deposit_with_an_id_of_zero_or_below_fails_the_audit(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    try:
        name, token = server.player()  # no entries at all
        _, other_token = server.player(deposit=2_000)
        expect(server.spin(other_token), 201)
        assert _audit(server)[0] == 0
        forged, now = 1_000_000, _now()  # 25 times the weekly limit
        with server.engine().begin() as conn:
            aid, _ = _account(conn, name)
            conn.execute(text(
                "INSERT INTO ledger_entries (id, book, account_id, kind, amount, balance_after, "
                "created_at) VALUES (-7, 'wallet', :a, 'deposit', :x, :x, :t)"),
                {"a": aid, "x": forged, "t": now})
            conn.execute(text(
                "INSERT INTO ledger_entries (id, book, kind, amount, created_at) "
                "VALUES (-8, 'cashier', 'deposit', :x, :t)"), {"x": -forged, "t": now})
            conn.execute(text("UPDATE wallets SET balance = :x WHERE account_id = :a"),
                         {"x": forged, "a": aid})
        assert server.balance(token) == forged  # the forgery is live...
        code, output = _audit(server)
        assert code == 1, output  # ... and the audit reads it: chain and limits
        assert "ledger entry -7: a deposit of 1000000 cents that is not in the cashier chain" \
            in output
        assert "over any limit it had" in output
        # at id 0, and with the chain's form copied (a link to the head, a made-up MAC)
        with server.engine().begin() as conn:
            head = conn.execute(text("SELECT last_hash FROM chain_head WHERE id = 2")
                                ).scalar_one()
            conn.execute(text("UPDATE ledger_entries SET id = 0, chain_prev = :p, "
                              "chain_hash = :h WHERE id = -7"), {"p": head, "h": "f" * 64})
        code, output = _audit(server)
        assert code == 1, output
        assert "ledger entry 0: its cashier hash does not match its fields" in output
        assert "over any limit it had" in output
    finally:
        server.stop()


def test_a_cut_off_chain_end_fails_the_audit_without_a_signed_statement(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    try:
        name, token = server.player(deposit=5_000)
        for _ in range(3):
            expect(server.spin(token), 201)
        with server.engine().connect() as conn:
            pool = dict(conn.execute(text("SELECT amount, carry, contributions, wins, refills, "
                                          "hits FROM jackpot_pool")).one()._mapping)
            _, balance = _account(conn, name)
        last = expect(server.spin(token), 201).json()["round"]
        assert _audit(server)[0] == 0
        # the insider cuts off the last round, every book made consistent with the cut
        with server.engine().begin() as conn:
            prev = conn.execute(text("SELECT id, hash FROM rounds WHERE id = :i"),
                                {"i": last["id"] - 1}).one()
            conn.execute(text("DELETE FROM ledger_entries WHERE round_id = :i"), {"i": last["id"]})
            conn.execute(text("DELETE FROM rounds WHERE id = :i"), {"i": last["id"]})
            conn.execute(text("UPDATE jackpot_pool SET amount = :amount, carry = :carry, "
                              "contributions = :contributions, wins = :wins, "
                              "refills = :refills, hits = :hits"), pool)
            conn.execute(text("UPDATE wallets SET balance = :b WHERE account_id = "
                              "(SELECT id FROM accounts WHERE username = :u)"),
                         {"b": balance, "u": name})
            conn.execute(text("UPDATE chain_head SET last_round_id = :i, last_hash = :h "
                              "WHERE id = 1"), {"i": prev.id, "h": prev.hash})
        code, output = _audit(server)
        assert code == 1, output
        assert f"chain head 1 (entry {prev.id}) does not match its MAC" in output
        assert "1 mismatches" in output  # everything else was made to match
        # nor does the next round seal the cut under a fresh MAC: nothing is played on it
        refused = server.spin(token)
        assert refused.status_code == 503 and "chain_tampered" in refused.text
        # the cashier chain's end likewise: the last deposit cut off
        server.deposit(name, 2_000)
        with server.engine().begin() as conn:
            entry, = conn.execute(text(
                "SELECT id FROM ledger_entries WHERE book = 'wallet' AND kind = 'deposit' "
                "ORDER BY id DESC LIMIT 1")).one()
            before = conn.execute(text(
                "SELECT id, chain_hash FROM ledger_entries WHERE book = 'wallet' AND kind = "
                "'deposit' AND id < :i ORDER BY id DESC LIMIT 1"), {"i": entry}).one()
            conn.execute(text("DELETE FROM cashier_transactions WHERE entry_id = :i"),
                         {"i": entry})
            conn.execute(text("DELETE FROM ledger_entries WHERE round_id IS NULL AND kind = "
                              "'deposit' AND id >= :i"), {"i": entry})
            conn.execute(text("UPDATE wallets SET balance = balance - 2000"))
            conn.execute(text("UPDATE chain_head SET last_round_id = :i, last_hash = :h "
                              "WHERE id = 2"), {"i": before.id, "h": before.chain_hash})
        code, output = _audit(server)
        assert code == 1, output
        assert f"chain head 2 (entry {before.id}) does not match its MAC" in output
        assert "2 mismatches" in output
        refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                              json={"amount": 100}, headers={"Idempotency-Key": "after-cut"})
        assert refused.status_code == 503 and "chain_tampered" in refused.text
        # nor does deleting both heads, MACs and boundary with them, pass for a new database
        with server.engine().begin() as conn:
            conn.execute(text("DELETE FROM chain_head"))
        code, output = _audit(server)
        assert code == 1, output
        assert f"chain head names round 0, the last stored round is {prev.id}" in output
        assert f"cashier chain head names entry 0, the chain ends at entry {before.id}" \
            in output
    finally:
        server.stop()


def test_a_database_sealed_by_the_version_before_is_sealed_at_its_first_start(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    name, token = server.player(deposit=1_000)
    expect(server.spin(token), 201)
    server.stop()
    key = settings_like_servers(server.database_url).chain_key()
    # the chain heads as the version before left them: the boundary's MAC of version 1, over
    # the two ids only, and no MAC on either head
    with server.engine().begin() as conn:
        keyed_from, ledger_from = conn.execute(text(
            "SELECT keyed_from, ledger_keyed_from FROM chain_head WHERE id = 1")).one()
        conn.execute(text("UPDATE chain_head SET keyed_mac = :m WHERE id = 1"),
                     {"m": boundary_mac(key, keyed_from, ledger_from)})
        conn.execute(text("UPDATE chain_head SET head_mac = NULL"))
    code, output = _audit(server)
    assert code == 1 and "is not sealed yet" in output, output
    server.engine().dispose()
    server.start()
    try:
        assert _audit(server)[0] == 0
        expect(server.spin(token), 201)
        server.deposit(name, 500)
        assert _audit(server)[0] == 0
        # an entry before the boundary (the pool's seed) changed where no other check looks
        with server.engine().begin() as conn:
            conn.execute(text("UPDATE ledger_entries SET created_at = :t WHERE id = 1"),
                         {"t": _now()})
        code, output = _audit(server)
        assert code == 1 and "keyed boundary does not match its MAC" in output, output
    finally:
        server.stop()
