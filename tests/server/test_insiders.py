"""The audit against insiders (issue 13, ADR 0011): someone who can write the database but does
not hold the audit key cannot make a forged deposit or a rewritten round pass, and a signed
statement of the chain heads catches even a consistent cut of the chain's end back to a head
the insider kept from before (a cut without one fails at once: ``test_every_cent_chained``,
ADR 0048)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from starfever.engine.rng import SeededSource
from starfever.engine.round import play_round, replay_round
from starfever.server.models import ChainHead, Round
from starfever.server.services.chain import UNKEYED, canonical_json, round_hash
from starfever.server.settings import DEVELOPMENT_AUDIT_KEY
from tests.harness import Databases, Server, run_cli_in_process, start_server
from tests.server.helpers import feature_draws, model

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def _audit(server: Server, *statements: Path) -> tuple[int, str]:
    extra = [arg for path in statements for arg in ("--statement", str(path))]
    done = run_cli_in_process("audit", "--database-url", server.database_url, "--show", "50",
                              *extra)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def test_a_forged_deposit_with_a_matching_ledger_pair_fails_the_audit(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    try:
        name, token = server.player(deposit=1_000)
        server.spin(token)
        assert _audit(server)[0] == 0
        forged = 1_000_000  # 25 times the weekly limit
        with server.engine().begin() as conn:
            aid = conn.execute(text("SELECT id FROM accounts WHERE username = :u"),
                               {"u": name}).scalar_one()
            balance = conn.execute(text("SELECT balance FROM wallets WHERE account_id = :a"),
                                   {"a": aid}).scalar_one()
            head = conn.execute(text("SELECT last_hash FROM chain_head WHERE id = 2")
                                ).scalar_one()
            # the insider copies the chain's form: a link to the head and an HMAC under the
            # only key they could know (the development one), and moves the head along
            conn.execute(text(
                "INSERT INTO ledger_entries (book, account_id, kind, amount, balance_after, "
                "created_at, chain_prev, chain_hash) VALUES ('wallet', :a, 'deposit', :x, :b, "
                ":t, :p, :h)"), {"a": aid, "x": forged, "b": balance + forged, "t": _now(),
                                 "p": head, "h": "f" * 64})
            conn.execute(text(
                "INSERT INTO ledger_entries (book, kind, amount, created_at) "
                "VALUES ('cashier', 'deposit', :x, :t)"), {"x": -forged, "t": _now()})
            conn.execute(text("UPDATE wallets SET balance = balance + :x WHERE account_id = :a"),
                         {"x": forged, "a": aid})
            new_id = conn.execute(text("SELECT MAX(id) FROM ledger_entries WHERE book = "
                                       "'wallet'")).scalar_one()
            conn.execute(text("UPDATE chain_head SET last_round_id = :i, last_hash = :h "
                              "WHERE id = 2"), {"i": new_id, "h": "f" * 64})
        assert server.balance(token) > forged  # the forgery is live...
        code, output = _audit(server)
        assert code == 1, output  # ... and the audit fails it
        assert f"ledger entry {new_id}: its cashier hash does not match its fields" in output
        assert "over any limit it had" in output
        assert "audit FAILED" in output
    finally:
        server.stop()


def _no_win_draws() -> list[int]:
    source = SeededSource(13)
    while True:
        drawn = play_round(model(), 1, source, pool=model().seed_cents)
        if drawn.total_win == 0 and drawn.feature is None:
            return list(drawn.draws)


def test_a_rewritten_round_with_new_hash_and_chain_head_fails_the_audit(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    try:
        _, token = server.player(deposit=1_000)
        played = server.spin(token, draws=_no_win_draws()).json()["round"]
        assert played["total_win"] == 0
        assert _audit(server)[0] == 0
        with Session(server.engine()) as session, session.begin():
            r = session.get(Round, played["id"])
            assert r is not None and r.hash_scheme == 3  # keyed, with build and model
            rich = replay_round(model(), r.line_bet, feature_draws("hold_and_cash"),
                                pool=r.pool_before)
            assert rich.total_win > 0 and not rich.progressive_win
            for field in ("base_win", "star_wild_win", "hold_and_cash_win", "progressive_win",
                          "total_win", "feature", "pool_after", "pool_refill"):
                setattr(r, field, getattr(rich, field))
            r.draws = json.dumps(list(rich.draws), separators=(",", ":"))
            r.events = canonical_json(list(rich.events))
            r.balance_after = r.balance_before - r.total_bet + rich.total_win
            # the books made to match: the win paid into the wallet, out of the house
            session.execute(text(
                "INSERT INTO ledger_entries (book, account_id, kind, amount, balance_after, "
                "round_id, created_at) VALUES ('wallet', :a, 'win', :w, :b, :r, :t)"),
                {"a": r.account_id, "w": rich.total_win, "b": r.balance_after, "r": r.id,
                 "t": _now()})
            session.execute(text(
                "INSERT INTO ledger_entries (book, kind, amount, round_id, created_at) "
                "VALUES ('house', 'win', :w, :r, :t)"), {"w": -rich.total_win, "r": r.id,
                                                        "t": _now()})
            session.execute(text("UPDATE wallets SET balance = balance + :w WHERE "
                                 "account_id = :a"), {"w": rich.total_win, "a": r.account_id})
            r.hash = round_hash(r, DEVELOPMENT_AUDIT_KEY)  # the only key the insider knows
            head = session.get(ChainHead, 1)
            assert head is not None
            head.last_hash = r.hash
        assert server.balance(token) == played["balance_after"] + rich.total_win
        code, output = _audit(server)
        assert code == 1, output
        assert f"round {played['id']}: stored hash does not match its fields" in output
        # everything else was made to match, the round's entries too, but for the chain
        # head's MAC, which names the hash before (ADR 0048)
        assert f"chain head 1 (entry {played['id']}) does not match its MAC" in output
        assert output.count("MISMATCH") == 2
        # nor does passing it off as an old, unkeyed round help
        with Session(server.engine()) as session, session.begin():
            r = session.get(Round, played["id"])
            assert r is not None
            r.hash_scheme = UNKEYED
            r.hash = round_hash(r)
            head = session.get(ChainHead, 1)
            assert head is not None
            head.last_hash = r.hash
        code, output = _audit(server)
        assert code == 1 and f"round {played['id']}: hash scheme 1, expected 2" in output
    finally:
        server.stop()


def test_a_signed_statement_of_the_chain_heads_catches_a_cut_chain(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    try:
        name, token = server.player(deposit=1_000)
        server.spin(token)
        with server.engine().connect() as conn:  # the insider keeps the cashier head's row
            kept = conn.execute(text("SELECT last_round_id, last_hash, head_mac FROM "
                                     "chain_head WHERE id = 2")).one()
        server.deposit(name, 2_000)
        published = tmp_path / "head.json"
        made = run_cli_in_process("chain-statement", "--database-url", server.database_url,
                                  "--out", str(published))
        assert made.returncode == 0, made.stderr
        statement = json.loads(published.read_text())
        assert statement["rounds"]["last_id"] >= 1 and statement["cashier"]["last_id"] >= 1
        code, output = _audit(server, published)
        assert code == 0 and "1 signed statements" in output, output
        forged = tmp_path / "forged.json"
        forged.write_text(json.dumps({**statement, "rounds": {**statement["rounds"],
                                                              "last_id": 99}}))
        code, output = _audit(server, forged)
        assert code == 1 and "signature does not verify" in output
        # the insider cuts off the last deposit, books and chain head made consistent
        with server.engine().begin() as conn:
            last, = conn.execute(text(
                "SELECT id FROM ledger_entries WHERE book = 'wallet' AND kind = 'deposit' "
                "ORDER BY id DESC LIMIT 1")).one()
            before = conn.execute(text(
                "SELECT id, chain_hash FROM ledger_entries WHERE book = 'wallet' AND kind = "
                "'deposit' AND id < :i ORDER BY id DESC LIMIT 1"), {"i": last}).one()
            conn.execute(text("UPDATE wallets SET balance = balance - 2000"))
            # with the record of its Idempotency-Key (ADR 0017), which names the entry
            conn.execute(text("DELETE FROM cashier_transactions WHERE entry_id = :i"),
                         {"i": last})
            conn.execute(text("DELETE FROM ledger_entries WHERE id IN (:i, :j)"),
                         {"i": last, "j": last + 1})
            assert (kept.last_round_id, kept.last_hash) == (before.id, before.chain_hash)
            # the head set back to the row kept from before, its MAC with it
            conn.execute(text("UPDATE chain_head SET last_round_id = :i, last_hash = :h, "
                              "head_mac = :m WHERE id = 2"),
                         {"i": before.id, "h": before.chain_hash, "m": kept.head_mac})
        assert _audit(server)[0] == 0  # a consistent cut: only the published head shows it
        code, output = _audit(server, published)
        assert code == 1, output
        assert f"cashier entry {last} with the published hash is no longer in the chain" \
            in output
    finally:
        server.stop()


def test_rounds_stored_before_the_key_still_audit(db_kind: str, databases: Databases,
                                                  tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path)
    name, token = server.player(deposit=1_000)
    for _ in range(3):
        server.spin(token)
    server.stop()
    # the database as the code before the keyed chain left it: SHA-256 rounds, no boundary,
    # no cashier chain
    with Session(server.engine()) as session, session.begin():
        prev = "0" * 64
        for r in session.query(Round).order_by(Round.id):
            r.hash_scheme, r.prev_hash = UNKEYED, prev
            r.hash = prev = round_hash(r)
        session.execute(text("UPDATE chain_head SET last_hash = :h, keyed_from = NULL, "
                             "ledger_keyed_from = NULL, keyed_mac = NULL, head_mac = NULL "
                             "WHERE id = 1"), {"h": prev})
        session.execute(text("DELETE FROM chain_head WHERE id = 2"))
        session.execute(text("UPDATE ledger_entries SET chain_prev = NULL, chain_hash = NULL"))
    server.engine().dispose()
    server.start()  # the first start with the key fixes the boundary
    try:
        server.deposit(name, 500)
        for _ in range(2):
            assert server.spin(token).status_code == 201
        with server.engine().connect() as conn:
            schemes = [s for s, in conn.execute(text(
                "SELECT hash_scheme FROM rounds ORDER BY id"))]
        assert schemes == [1, 1, 1, 3, 3]  # keyed from the boundary, with build and model
        code, output = _audit(server)
        assert code == 0, output
        assert "audit OK: 5 rounds replayed and chained" in output
    finally:
        server.stop()


def test_concurrent_deposits_keep_the_cashier_chain_in_order(
        db_kind: str, databases: Databases, tmp_path: Path) -> None:
    """Deposits of different players at once: each entry is chained after the one before it
    in id order (the chain head is locked before the entry is booked), so the audit passes."""
    server = start_server(databases, db_kind, tmp_path)
    try:
        names = [server.player()[0] for _ in range(12)]
        server.operator_token  # noqa: B018 (one log-in, before the threads)
        with ThreadPoolExecutor(max_workers=12) as pool:
            list(pool.map(lambda name: server.deposit(name, 1_000), names * 2))
        code, out = _audit(server)
        assert code == 0, out
    finally:
        server.stop()
