"""Group commit (ADR 0009): a batch settles its spins in order against the running state,
refuses a request alone, and stores exactly what a round-by-round settle would have stored."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from starfever.engine import round as engine_round
from starfever.engine.model import MathModel
from starfever.engine.rng import SeededSource
from starfever.engine.round import RoundResult, at_pool, play_round, replay_round
from starfever.engine.symbols import BET_CLASSES
from starfever.server.db import Database, sqlalchemy_url
from starfever.server.services import auth
from starfever.server.services.errors import Conflict, ServiceError
from starfever.server.settings import Settings
from starfever.server.spin import draw as rounds
from starfever.server.spin import settler as settle
from starfever.server.spin import sql
from starfever.server.spin import transaction as batch_module
from tests.harness import (
    ADULT_BIRTH_DATE,
    Server,
    postgres_admin_url,
    settings_like_servers,
    unique_name,
)
from tests.server.helpers import jackpot_draws, model


def test_pool_written_in_equals_a_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settled at another pool, every round of a seeded sample equals its replay there, and
    only a round with a €€€ line is re-derived: the others get the pool written in."""
    m = model()
    rederived: list[tuple[int, ...]] = []

    def counted_replay(model: MathModel, line_bet: int, draws: Sequence[int],
                       **kwargs: Any) -> RoundResult:
        rederived.append(tuple(draws))
        return replay_round(model, line_bet, draws, **kwargs)

    monkeypatch.setattr(engine_round, "replay_round", counted_replay)
    source = SeededSource(20_260_101)
    layouts: set[str] = set()
    with_jackpot_line = 0
    for i in range(3_000):
        drawn = play_round(m, BET_CLASSES[i % len(BET_CLASSES)], source, pool=m.seed_cents)
        pool = m.seed_cents + 1 + (i * 7919) % 500_000
        assert at_pool(m, drawn, pool) == replay_round(m, drawn.line_bet, drawn.draws,
                                                       pool=pool)
        layouts |= {event["type"] for event in drawn.events}
        with_jackpot_line += any(event["type"] == "jackpot" for event in drawn.events)
    # the sample has every layout the written-in pool must get right ...
    assert {"line_win", "star_wild", "hold_and_cash_start", "respin"} <= layouts
    # ... and took the shortcut for each round without a €€€ line
    assert len(rederived) == with_jackpot_line
    hit = replay_round(m, 100, jackpot_draws(), pool=m.seed_cents)
    assert at_pool(m, hit, m.seed_cents * 3) == replay_round(
        m, 100, jackpot_draws(), pool=m.seed_cents * 3)
    assert rederived[with_jackpot_line:] == [hit.draws]  # a €€€ round is re-derived


def _job(settings: Settings, principal: auth.Principal, key: str, bet: int = 1,
         draws: tuple[int, ...] | None = None) -> settle.Job:
    m = model()
    drawn = replay_round(m, bet, draws, pool=m.seed_cents) if draws else \
        play_round(m, bet, SeededSource(len(key)), pool=m.seed_cents)
    return settle.Job(settings=settings, model=m, principal=principal, bet=bet, key=key,
                      fingerprint=rounds.request_hash(bet, list(draws) if draws else None),
                      drawn=drawn, test=draws is not None)


def test_a_batch_refuses_alone_and_chains_in_order(server: Server) -> None:
    settings = settings_like_servers(server.database_url)
    db = Database(server.database_url)
    try:
        rich, poor = unique_name("rich"), unique_name("poor")
        for name, amount in ((rich, 10_000), (poor, 20)):
            server.call("POST", "/players", json={"username": name, "password": "password-1",
                                                  "birth_date": ADULT_BIRTH_DATE})
            server.deposit(name, amount)
        a = auth.authenticate(db, settings, server.login(rich, "password-1"))
        b = auth.authenticate(db, settings, server.login(poor, "password-1"))
        jobs = [_job(settings, b, "b1"),                        # 20 cents: covered
                _job(settings, a, "a1", draws=jackpot_draws(), bet=100),
                _job(settings, b, "b2"),                        # short now (unless b1 won)
                _job(settings, a, "a1", draws=jackpot_draws(), bet=100),  # retry of a1
                _job(settings, a, "a1", bet=2),                 # same key, other body
                _job(settings, a, "a2")]
        results = settle.settle_batch(db, jobs)
        b1, a1, b2, a1_again, a1_other, a2 = results
        assert isinstance(b1, settle.SpinOutcome) and isinstance(a1, settle.SpinOutcome)
        assert isinstance(a2, settle.SpinOutcome)
        if b1.balance < 20:
            assert isinstance(b2, Conflict) and b2.code == "insufficient_funds"
        assert isinstance(a1_again, settle.SpinOutcome) and a1_again.replayed
        assert a1_again.round.id == a1.round.id
        assert isinstance(a1_other, ServiceError) and a1_other.code == "idempotency_key_reused"
        assert a1.round.progressive_win > 0
        # each stored round follows the one before it in the batch: hash, pool, balance
        assert a1.round.prev_hash == b1.round.hash and a1.round.id == b1.round.id + 1
        assert a1.round.pool_before == b1.round.pool_after + a1.round.contribution
        before = b2 if isinstance(b2, settle.SpinOutcome) else a1
        assert a2.round.prev_hash == before.round.hash
        assert a2.round.pool_before == before.round.pool_after + a2.round.contribution
        assert a2.round.balance_before == a1.round.balance_after
        listed = server.call("GET", "/rounds", server.login(rich, "password-1")).json()
        assert [r["id"] for r in listed["rounds"]] == [a2.round.id, a1.round.id]
    finally:
        db.dispose()
    assert server.call("GET", "/health").status_code == 200


def test_a_batch_finds_a_stored_round_by_its_own_account_and_key(server: Server) -> None:
    """A retried spin finds its round by its (account, key) pair exactly: another player's
    round under the same key, or the player's round under another key of the batch, is not
    it. On PostgreSQL the read probes the unique index once a pair (not every account with
    every key), in the one plan the group commit's connection keeps for every batch."""
    settings = settings_like_servers(server.database_url)
    db = Database(server.database_url)
    try:
        principals = []
        for name in (unique_name("pairs-x"), unique_name("pairs-y")):
            server.call("POST", "/players", json={"username": name, "password": "password-1",
                                                  "birth_date": ADULT_BIRTH_DATE})
            server.deposit(name, 1_000)
            principals.append(auth.authenticate(db, settings, server.login(name, "password-1")))
        x, y = principals
        x1, y2 = settle.settle_batch(db, [_job(settings, x, "k1"), _job(settings, y, "k2")])
        assert isinstance(x1, settle.SpinOutcome) and isinstance(y2, settle.SpinOutcome)
        crossed = settle.settle_batch(db, [_job(settings, x, "k2"), _job(settings, y, "k1"),
                                           _job(settings, x, "k1"), _job(settings, y, "k2")])
        x2, y1, x1_again, y2_again = crossed
        assert isinstance(x2, settle.SpinOutcome) and not x2.replayed
        assert isinstance(y1, settle.SpinOutcome) and not y1.replayed
        assert isinstance(x1_again, settle.SpinOutcome) and x1_again.replayed
        assert isinstance(y2_again, settle.SpinOutcome) and y2_again.replayed
        assert (x1_again.round.id, y2_again.round.id) == (x1.round.id, y2.round.id)
        if db.bulk_engine is None:
            return
        read = batch_module._plan(sql._READS[True].rounds, db.bulk_engine.dialect)
        prepared = batch_module._prepared(read.sql)
        pairs = [(x.account_id, f"key-{i}") for i in range(40)]
        with db.bulk_engine.connect() as conn:  # the group commit's connections
            assert conn.execute(text("SHOW plan_cache_mode")).scalar() == "force_generic_plan"
        with db.write_engine.connect() as conn:  # (one where the statement is not prepared)
            conn.execute(text("SET plan_cache_mode = force_generic_plan"))
            conn.execute(text("SET enable_seqscan = off"))  # (the test's table is tiny)
            conn.exec_driver_sql(prepared.prepare)
            execute = prepared.execute({"ids": [a for a, _ in pairs],
                                        "keys": [k for _, k in pairs]})
            plan = "\n".join(str(row[0]) for row in conn.exec_driver_sql(
                f"EXPLAIN (ANALYZE, COSTS OFF) {execute}"))
        # an index probe a pair (of the unique index, or, on a table this small, of the
        # account's), never an array of accounts crossed with an array of keys
        assert "ANY" not in plan and "(account_id = wanted.account_id" in plan, plan
        assert "Index Scan" in plan and "loops=40" in plan, plan
    finally:
        db.dispose()


def test_parallel_spins_of_one_player_never_overdraw(server: Server) -> None:
    _, token = server.player(deposit=400)  # 20 spins at 20 cents, unless some win
    with ThreadPoolExecutor(max_workers=16) as pool:
        codes = list(pool.map(lambda _: server.spin(token).status_code, range(64)))
    assert set(codes) <= {201, 409}
    assert codes.count(201) >= 20
    assert server.balance(token) >= 0


def test_a_logged_out_token_stops_spinning(server: Server) -> None:
    _, token = server.player(deposit=1_000)
    assert server.spin(token).status_code == 201  # the worker now knows the token
    assert server.call("DELETE", "/sessions/current", token).status_code in (200, 204)
    response = server.spin(token)
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "invalid_token"


def test_spins_go_on_after_the_database_dropped_every_connection(server: Server) -> None:
    if not server.database_url.startswith("postgresql"):
        pytest.skip("a PostgreSQL server can drop its clients' connections; SQLite has none")
    _, token = server.player(deposit=10_000)
    assert server.spin(token).status_code == 201  # the settler now holds a pooled connection
    name = server.database_url.rsplit("/", 1)[1]
    admin = create_engine(sqlalchemy_url(postgres_admin_url()), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        dropped = conn.execute(text(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = :name AND pid <> pg_backend_pid()"), {"name": name}).scalar_one()
    admin.dispose()
    assert dropped >= 1
    before = server.balance(token)
    answers = [server.spin(token) for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 201], answers[0].text
    after = answers[-1].json()["balance"]
    assert after == server.balance(token)
    assert after == before - sum(a.json()["round"]["total_bet"] for a in answers) \
        + sum(a.json()["round"]["total_win"] for a in answers)


def test_spins_that_arrive_while_another_process_settles_join_one_batch(
        server: Server) -> None:
    """The settler takes its queue only once the host's turn is its own (ADR 0028): the
    spins queued while the turn was another's settle in one transaction (one batch stores
    its rounds at one instant, in a chain)."""
    settings = settings_like_servers(server.database_url)
    db, elsewhere = Database(server.database_url), Database(server.database_url)
    settler = settle.Settler(db)
    try:
        name = unique_name("turn")
        server.call("POST", "/players", json={"username": name, "password": "password-1",
                                              "birth_date": ADULT_BIRTH_DATE})
        server.deposit(name, 10_000)
        player = auth.authenticate(db, settings, server.login(name, "password-1"))
        with elsewhere.settle_turn.held():  # another process of this host is settling
            waiting = [settler.enqueue(_job(settings, player, f"turn-{i}")) for i in range(5)]
            time.sleep(0.3)
            assert not any(future.done() for future in waiting)
        outcomes = [future.result(timeout=30) for future in waiting]
        assert all(isinstance(outcome, settle.SpinOutcome) for outcome in outcomes)
        stored = [outcome.round for outcome in outcomes]
        assert len({row.created_at for row in stored}) == 1
        assert [row.id for row in stored] == list(range(stored[0].id, stored[0].id + 5))
    finally:
        db.dispose()
        elsewhere.dispose()
