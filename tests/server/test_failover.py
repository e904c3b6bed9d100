"""A PostgreSQL failover as the game servers see it (ADR 0070): the primary goes, spins are
answered ``503 database_unavailable`` with ``Retry-After`` (never 500), the servers reconnect
by themselves, and a spin whose COMMIT's outcome they could not learn is settled exactly once
when it is sent again with its key. The primary's loss is a real proxy cut between a real
server and a real PostgreSQL (``tests.failover_cluster.Link``); the whole failover with Patroni
is the drill's (``tests/assurance/test_failover_drill.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, make_url, text

from starfever.server.api.errors import answer
from starfever.server.db import Database, checked_url, database_unavailable, sqlalchemy_url
from tests.failover_cluster import Link
from tests.harness import (
    Databases,
    OperatorWallet,
    Server,
    create_operator,
    expect,
    free_port,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    run_cli_in_process,
    settings_like_servers,
)
from tests.server.conftest import skip_unless_available

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_url(databases: Databases) -> Iterator[str]:
    """A fresh PostgreSQL database."""
    skip_unless_available(databases, "postgresql")
    url = databases.new("postgresql")
    yield url
    databases.drop(url)


def _error_of(url: str, statement: str) -> BaseException:
    engine = create_engine(sqlalchemy_url(url), connect_args={"connect_timeout": 3})
    try:
        with engine.begin() as conn:
            conn.execute(text(statement))
    except Exception as error:  # the error under test
        return error
    finally:
        engine.dispose()
    raise AssertionError(f"{statement!r} did not fail")


def test_a_database_out_of_reach_is_503_database_unavailable_never_500(pg_url: str) -> None:
    dead = make_url(pg_url).set(port=free_port()).render_as_string(hide_password=False)
    out_of_reach = [
        _error_of(dead, "SELECT 1"),  # refused: the primary's host is gone
        _error_of(pg_url, "SET TRANSACTION READ ONLY; CREATE TABLE t (i int)"),  # a standby
        _error_of(pg_url, "SELECT pg_terminate_backend(pg_backend_pid())"),  # shut down
    ]
    for error in out_of_reach:
        assert database_unavailable(error), repr(error)
        response = answer(error)  # type: ignore[arg-type]
        assert response.status_code == 503 and response.headers["Retry-After"] == "1"
        assert b'"database_unavailable"' in response.body
    own_fault = _error_of(pg_url, "SELECT * FROM no_such_table")
    assert not database_unavailable(own_fault) and answer(own_fault).status_code == 500  # type: ignore[arg-type]


def test_a_multi_host_url_reaches_the_host_that_takes_writes(pg_url: str) -> None:
    live = make_url(pg_url)
    dead_port = free_port()
    libpq_form = (f"postgresql://{live.username}@127.0.0.1:{dead_port},{live.host}:{live.port}"
                  f"/{live.database}?target_session_attrs=read-write&connect_timeout=2")
    query_form = (f"postgresql://{live.username}@/{live.database}?host=127.0.0.1:{dead_port}"
                  f"&host={live.host}:{live.port}&target_session_attrs=read-write")
    for url in (libpq_form, query_form):
        assert checked_url(url).query["target_session_attrs"] == "read-write"
        settings_like_servers(url).check()  # STARFEVER_DATABASE_URL takes it
        db = Database(url)
        try:
            with db.write() as session:
                assert session.execute(text("SELECT NOT pg_is_in_recovery()")).scalar_one()
        finally:
            db.dispose()


def _server(url: str, link: Link, folder: Path, *, args: tuple[str, ...] = (),
            env: dict[str, str] | None = None) -> Server:
    proxied = make_url(url).set(port=link.port).render_as_string(hide_password=False)
    server = Server(proxied, folder / "server.log", env, args=args)
    server.operator_totp = create_operator(url)
    return server.start()


def _spin(server: Server, token: str, key: str) -> httpx.Response:
    return server.spin(token, key=key)


def _rounds_of(url: str, key: str) -> list[int]:
    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            return list(conn.execute(text("SELECT id FROM rounds WHERE idempotency_key = :k"),
                                     {"k": key}).scalars())
    finally:
        engine.dispose()


def _refused(response: httpx.Response) -> bool:
    return (response.status_code == 503 and response.headers.get("Retry-After") == "1"
            and response.json()["error"]["code"] == "database_unavailable")


def test_ledger_spins_ride_through_a_lost_primary_and_settle_once(
        pg_url: str, tmp_path: Path) -> None:
    # the strict market paces each player's rounds (2.5 s, a row claimed in its own
    # transaction before the spin): a spin sent again after a 503 is never paced
    link = Link(make_url(pg_url).port or 5432)
    with _server(pg_url, link, tmp_path, env={"STARFEVER_MARKET": "strict"}) as server:
        name, token = server.player(deposit=10_000)
        assert server.spin(token).status_code == 201

        server.move_clock(3)
        link.cut()  # the primary is gone: refused, never 500, nothing settled
        key = uuid.uuid4().hex
        assert _refused(_spin(server, token, key))
        assert server.http.get(f"{server.url}/readyz").status_code == 503
        link.restore()  # a new primary answers: the same key settles, once
        assert _spin(server, token, key).status_code == 201
        assert len(_rounds_of(pg_url, key)) == 1

        outcomes = {}
        for when in ("after", "before"):  # the COMMIT reached the database, or did not
            server.move_clock(3)
            key = uuid.uuid4().hex
            link.cut_at_commit(when)
            assert _refused(_spin(server, token, key))
            link.restore()
            again = expect(_spin(server, token, key), 200, 201)
            outcomes[when] = again.status_code
            assert _rounds_of(pg_url, key) == [again.json()["round"]["id"]]
        assert outcomes == {"after": 200, "before": 201}  # replayed / settled now
        assert link.commits_cut == 2
        server.move_clock(3)
        assert server.spin(token).status_code == 201
    assert run_cli_in_process("audit", "--database-url", pg_url).returncode == 0
    engine = create_engine(sqlalchemy_url(pg_url))
    with engine.connect() as conn:
        bets, wins, count, balance = conn.execute(text(
            "SELECT sum(total_bet), sum(total_win), count(*), (SELECT balance FROM wallets w "
            "JOIN accounts a ON a.id = w.account_id WHERE a.username = :n) FROM rounds"),
            {"n": name}).one()
    engine.dispose()
    assert count == 5 and balance == 10_000 - bets + wins  # each round booked once


def _pending_calls(url: str) -> int:
    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(
                "SELECT count(*) FROM wallet_calls WHERE status = 'pending'")).scalar_one())
    finally:
        engine.dispose()


def test_operator_mode_rides_through_a_lost_primary_with_every_call_exact(
        pg_url: str, tmp_path: Path) -> None:
    from tests.failover_cluster import wait_for

    wallet = OperatorWallet(tmp_path, quiet=True)
    link = Link(make_url(pg_url).port or 5432)
    try:
        with _server(pg_url, link, tmp_path, args=operator_mode_args(wallet),
                     env=operator_mode_env(wallet, timeout=2)) as server:
            wallet.player("op-1", 10_000)
            token = launched_player(server, wallet.secret, "op-1")
            assert server.spin(token).status_code == 201

            link.cut()
            key = uuid.uuid4().hex
            assert _refused(_spin(server, token, key))  # nothing debited: not recorded
            link.restore()
            assert _spin(server, token, key).status_code == 201
            for when in ("after", "before"):  # the round's COMMIT (after the debit's record)
                wait_for("the last credit is acknowledged",
                         lambda: _pending_calls(pg_url) == 0, 60)
                key = uuid.uuid4().hex
                link.cut_at_commit(when, skip=1)
                assert _refused(_spin(server, token, key))  # the debit was taken
                link.restore()
                expect(_spin(server, token, key), 200, 201)
                assert len(_rounds_of(pg_url, key)) == 1
            wait_for("the retrier sends what is pending",
                     lambda: _pending_calls(pg_url) == 0, 60)
        in_doubt = run_cli_in_process("reconcile", "--database-url", pg_url)
        assert in_doubt.returncode == 0, in_doubt.stdout
        engine = create_engine(sqlalchemy_url(pg_url))
        with engine.connect() as conn:
            net, rounds = conn.execute(text(
                "SELECT sum(total_win - total_bet), count(*) FROM rounds")).one()
        engine.dispose()
        assert rounds == 4
        assert wallet.balance("op-1") == 10_000 + net  # every debit and credit once
        applied = [t for t in wallet.transactions("op-1") if t["applied"]]
        assert sum(t["method"] == "debit" for t in applied) == 4
        assert sum(t["method"] == "credit" for t in applied) == 4
        assert not [t for t in applied if t["method"] == "rollback"]
    finally:
        wallet.stop()

