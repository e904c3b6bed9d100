"""Readiness proves a write; the server refuses to start on a database it cannot write
(issue 13). ``/health`` stays the liveness check. The operator's wallet is probed apart and
never makes a node unready (ADR 0057)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from starfever.server.db import sqlalchemy_url
from tests.harness import (
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    Databases,
    OperatorWallet,
    Server,
    expect,
    free_port,
    operator_mode_args,
    operator_mode_env,
    postgres_admin_url,
    run_cli,
    start_server,
)
from tests.server.conftest import skip_unless_available

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def test_readiness_proves_a_committed_write(server: Server) -> None:
    for _ in range(3):
        response = server.call("GET", "/ready")
        assert response.status_code == 200, response.text
        assert response.json() == {"status": "ready", "database": "writable"}
    with server.engine().connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM write_probes")).scalar_one() >= 1


def _admin(sql: str, name: str) -> int:
    admin = create_engine(sqlalchemy_url(postgres_admin_url()), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(sql.format(name=name)))
            return int(conn.execute(text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = :name AND pid <> pg_backend_pid()"), {"name": name})
                .scalar_one())
    finally:
        admin.dispose()


def test_not_ready_while_the_database_takes_no_writes(databases: Databases,
                                                      tmp_path: Path) -> None:
    skip_unless_available(databases, "postgresql")
    server = start_server(databases, "postgresql", tmp_path)
    name = server.database_url.rsplit("/", 1)[1]
    try:
        assert server.call("GET", "/ready").status_code == 200
        _admin('ALTER DATABASE "{name}" SET default_transaction_read_only = on', name)
        refused = server.call("GET", "/ready")
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert error["code"] == "not_ready" and "read-only" in error["message"]
        assert server.call("GET", "/health").status_code == 200  # alive, but not ready
        # nor would it start so
        done = run_cli("serve", "--port", str(free_port()), "--database-url",
                       server.database_url)
        assert done.returncode == 2, done.stdout
        assert done.stderr.startswith("starfever serve: error: cannot use the database")
        assert "read-only" in done.stderr and "Traceback" not in done.stderr
        _admin('ALTER DATABASE "{name}" SET default_transaction_read_only = off', name)
        assert server.call("GET", "/ready").status_code == 200
    finally:
        server.stop()


def test_serve_refuses_a_read_only_sqlite_database(tmp_path: Path) -> None:
    made = run_cli("operator", "create", OPERATOR_USERNAME, "--database-url",
                   f"sqlite:///{tmp_path}/ro.db", stdin=OPERATOR_PASSWORD + "\n")
    assert made.returncode == 0, made.stderr
    read_only = f"sqlite:///file:{tmp_path}/ro.db?mode=ro&uri=true"
    done = run_cli("serve", "--port", str(free_port()), "--database-url", read_only)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"starfever serve: error: cannot use the database "
                                   f"{read_only}: attempt to write a readonly database")


def test_serve_refuses_a_postgresql_whose_strings_take_backslash_escapes(
        databases: Databases) -> None:
    """The settler writes its values as SQL literals with ``'`` doubled (ADR 0027), which is
    the whole escape only with ``standard_conforming_strings`` on: a server set otherwise is
    refused at start-up, in one line, and nothing is played on it."""
    skip_unless_available(databases, "postgresql")
    url = databases.new("postgresql")
    name = url.rsplit("/", 1)[1]
    try:
        _admin('ALTER DATABASE "{name}" SET standard_conforming_strings = off', name)
        done = run_cli("serve", "--port", str(free_port()), "--database-url", url)
        assert done.returncode == 2, done.stdout
        lines = done.stderr.strip().splitlines()
        assert lines[-1] == (f"starfever serve: error: cannot use the database {url}: "
                             "standard_conforming_strings must be on (PostgreSQL's default): "
                             "the settler writes its values as literals"), done.stderr
        assert "Traceback" not in done.stderr
    finally:
        databases.drop(url)


def _scraped(server: Server, name: str) -> float | None:
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(server.http.get(f"{server.url}/metrics").text):
        for sample in family.samples:
            if sample.name == name:
                return float(sample.value)
    return None


def _until(check: Callable[[], bool], what: str, seconds: float = 20.0) -> None:
    """Poll a real server until ``check`` holds (its probe runs on its own thread)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def test_a_wallet_outage_leaves_the_node_ready_and_is_its_own_metric(
        databases: Databases, tmp_path: Path) -> None:
    """Readiness is about this node (ADR 0057): a hanging, then stopped operator's wallet
    never makes ``/readyz`` 503 nor slow (it is not asked); the background probe says so in
    ``wallet`` and in ``starfever_wallet_up``, and says ``answers`` again after it recovers."""
    wallet = OperatorWallet(tmp_path)
    server = start_server(databases, "sqlite", tmp_path, {
        **operator_mode_env(wallet, timeout=3), "STARFEVER_WALLET_PROBE_SECONDS": "0.2"},
        args=operator_mode_args(wallet))
    try:
        def readyz() -> dict[str, str]:
            started = time.monotonic()
            answer = expect(server.http.get(f"{server.url}/readyz"), 200)
            assert time.monotonic() - started < 1.5  # under the wallet's 3 s: never asked
            return dict(answer.json())

        _until(lambda: readyz()["wallet"] == "answers", "the wallet answers")
        assert _scraped(server, "starfever_wallet_up") == 1
        wallet.fault("balance", "delay", times=1_000, seconds=30)  # it hangs
        _until(lambda: _scraped(server, "starfever_wallet_up") == 0, "wallet_up 0 (hanging)")
        assert readyz() == {"status": "ready", "database": "writable", "wallet": "down"}
        probe = _scraped(server, "starfever_wallet_probe_seconds")
        assert probe is not None and probe >= 3  # the probe waited for its timeout
        wallet.clear_faults()
        _until(lambda: readyz()["wallet"] == "answers", "the wallet answers again")
        assert _scraped(server, "starfever_wallet_up") == 1
        wallet.stop()  # it is gone
        _until(lambda: readyz()["wallet"] == "down", "the probe says down")
        assert _scraped(server, "starfever_wallet_up") == 0
        assert "the operator's wallet is down" in server.log_tail()
    finally:
        server.stop()
        wallet.stop()
        databases.drop(server.database_url)


def test_the_wallet_probe_asks_in_a_currency_the_server_serves(tmp_path: Path) -> None:
    """ADR 0078: an installation that serves GBP alone never asks the operator's wallet for a
    balance in EUR (a wallet that pays only in pounds may refuse it, and then the probe would
    read a misconfiguration where there is none)."""
    from dataclasses import replace
    from typing import Any

    from starfever.seamless import protocol
    from starfever.server.app import create_app
    from starfever.server.seamless_config import OperatorConfig
    from tests.harness import settings_like_servers

    url = f"sqlite:///{tmp_path / 'probe.db'}"
    sent: list[tuple[str, dict[str, Any]]] = []

    class Recorder:
        def call(self, method: str, fields: dict[str, Any]) -> dict[str, Any]:
            sent.append((method, dict(fields)))
            return {}

    for served, asked in (("GBP", "GBP"), ("EUR,GBP", "EUR"), ("GBP,EUR", "GBP")):
        settings = replace(settings_like_servers(url), currencies=served)
        app = create_app(settings, operator_mode=OperatorConfig(url="http://127.0.0.1:9",
                                                                secret="s" * 40))
        wallet = app.state.context.wallet
        wallet.client = Recorder()
        assert wallet.ready() == "answers"
        assert sent[-1][0] == protocol.BALANCE and sent[-1][1]["currency"] == asked
