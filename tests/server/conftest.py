"""Fixtures: a real ``starfever serve`` process (uvicorn, a free port) on a real database, once
on SQLite and once on PostgreSQL (skipped only when 127.0.0.1:5432 is unreachable). Every test
session gets its own databases and drops them at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine

from starfever.server.db import sqlalchemy_url

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_ADMIN_URL = f"postgresql://postgres@{PG_HOST}:{PG_PORT}/test"
OPERATOR = "boss"
OPERATOR_PASSWORD = "operator-password-1"
SECRET = "test-secret-key-0123456789"


def pg_reachable() -> bool:
    """Whether a PostgreSQL server listens on 127.0.0.1:5432."""
    try:
        with socket.create_connection((PG_HOST, PG_PORT), timeout=1):
            return True
    except OSError:
        return False


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unique(prefix: str = "p") -> str:
    """A fresh username."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


class Databases:
    """Creates databases for this test session and drops them at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.pg_names: list[str] = []

    def new(self, kind: str) -> str:
        """A fresh, empty database URL of ``kind`` (``sqlite`` or ``postgresql``)."""
        name = f"starfever_test_{uuid.uuid4().hex[:12]}"
        if kind == "sqlite":
            return f"sqlite:///{self.tmp / name}.db"
        if not pg_reachable():
            pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
        admin = create_engine(sqlalchemy_url(PG_ADMIN_URL), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        self.pg_names.append(name)
        return f"postgresql://postgres@{PG_HOST}:{PG_PORT}/{name}"

    def drop_all(self) -> None:
        """Drop every PostgreSQL database this session created."""
        if not self.pg_names:
            return
        admin = create_engine(sqlalchemy_url(PG_ADMIN_URL), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            for name in self.pg_names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run_cli(*args: str, stdin: str = "", env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``starfever ARGS`` in a subprocess."""
    return subprocess.run([sys.executable, "-m", "starfever.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "STARFEVER_SECRET_KEY": SECRET, **(env or {})})


class Server:
    """A ``starfever serve`` subprocess and an HTTP client for it."""

    def __init__(self, url: str, log: Path, env: dict[str, str] | None = None) -> None:
        self.database_url = url
        self.log_path = log
        self.env = {"STARFEVER_TEST_MODE": "1", "STARFEVER_SECRET_KEY": SECRET, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.http = httpx.Client(timeout=60)

    @property
    def base(self) -> str:
        """The API root."""
        return f"http://127.0.0.1:{self.port}/api/v1"

    extra_args: tuple[str, ...] = ()
    """More ``starfever serve`` arguments (subclasses)."""
    own_session = False
    """Start the server in its own process group (so one signal reaches every worker)."""
    start_timeout = 60.0

    def _next_port(self) -> int:
        return free_port()

    def start(self) -> Server:
        """Start and wait until /health answers."""
        self.port = self._next_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("STARFEVER_")}
        env.update(self.env)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "starfever.cli", "serve", "--port", str(self.port),
                 *self.extra_args, "--database-url", self.database_url,
                 "--log-level", "warning"],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.log_path.parent,
                start_new_session=self.own_session)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-3000:]}")
            try:
                if self.http.get(f"{self.base}/health").status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError("server did not start")

    def stop(self) -> None:
        """Stop it (SIGTERM, then wait)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if hasattr(self, "_engine"):
            self._engine.dispose()

    # --- API helpers -------------------------------------------------------------------
    def call(self, method: str, path: str, token: str | None = None,
             **kwargs: Any) -> httpx.Response:
        """One request; ``token`` becomes the bearer header."""
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.http.request(method, f"{self.base}{path}", headers=headers, **kwargs)

    def login(self, username: str, password: str) -> str:
        """Log in; the token."""
        response = self.call("POST", "/sessions", json={"username": username,
                                                        "password": password})
        assert response.status_code == 201, response.text
        return str(response.json()["token"])

    def player(self, deposit: int = 0, **extra: Any) -> tuple[str, str]:
        """Register a fresh player (and deposit); (username, token)."""
        name = unique()
        response = self.call("POST", "/players", json={"username": name,
                                                       "password": "password-1", **extra})
        assert response.status_code == 201, response.text
        if deposit:
            self.deposit(name, deposit)
        return name, self.login(name, "password-1")

    @property
    def operator_token(self) -> str:
        """A token of the operator account."""
        if not hasattr(self, "_operator_token"):
            self._operator_token = self.login(OPERATOR, OPERATOR_PASSWORD)
        return self._operator_token

    def deposit(self, username: str, amount: int) -> httpx.Response:
        """Deposit as the operator (asserts success)."""
        response = self.call("POST", f"/players/{username}/deposits", self.operator_token,
                             json={"amount": amount})
        assert response.status_code == 201, response.text
        return response

    def spin(self, token: str, line_bet: int = 1, key: str | None = None,
             draws: list[int] | None = None) -> httpx.Response:
        """POST /spins with a fresh (or given) idempotency key."""
        body: dict[str, Any] = {"line_bet": line_bet}
        if draws is not None:
            body["test_draws"] = draws
        return self.call("POST", "/spins", token, json=body,
                         headers={"Idempotency-Key": key or uuid.uuid4().hex})

    def balance(self, token: str) -> int:
        """The player's balance."""
        response = self.call("GET", "/wallet", token)
        assert response.status_code == 200, response.text
        return int(response.json()["balance"])

    def engine(self) -> Engine:
        """A SQLAlchemy engine on the server's database (for checks and tampering)."""
        if not hasattr(self, "_engine"):
            self._engine = create_engine(sqlalchemy_url(self.database_url), pool_pre_ping=True)
        return self._engine


@pytest.fixture(scope="session")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    """This session's databases."""
    dbs = Databases(tmp_path_factory.mktemp("db"))
    yield dbs
    dbs.drop_all()


def start_server(databases: Databases, kind: str, tmp: Path,
                 env: dict[str, str] | None = None) -> Server:
    """A server with an operator account on a fresh database of ``kind``."""
    url = databases.new(kind)
    created = run_cli("operator", "create", OPERATOR, "--database-url", url,
                      stdin=OPERATOR_PASSWORD + "\n")
    assert created.returncode == 0, created.stderr
    return Server(url, tmp / "server.log", env).start()


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, databases: Databases,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The shared server of a database kind, in test mode (the reality check's own test
    starts a server with a short interval: a due check stops spins)."""
    tmp = tmp_path_factory.mktemp(f"server-{request.param}")
    srv = start_server(databases, request.param, tmp)
    yield srv
    srv.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_kind(request: pytest.FixtureRequest) -> str:
    """A database kind, for tests that start their own server."""
    return str(request.param)
