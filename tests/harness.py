"""A real ``starfever serve`` on a fresh database: the one harness of the server tests, the
browser tests, ``tests/web/make_screenshots.py`` and ``benchmarks/load.py``.

Plain Python, no pytest (the fixtures live in the conftest files):

- :class:`Databases` makes fresh SQLite files or uniquely named PostgreSQL databases (through
  the admin URL in ``STARFEVER_TEST_PG``) and drops them again;
- :func:`create_operator` migrates a database and adds the operator account;
  :func:`run_cli` runs the real command line in a subprocess;
- :class:`Server` is a ``starfever serve`` process on a free port of 127.0.0.1 with an HTTP
  client and the helpers the tests share (log in, register, deposit, spin, balance); in the
  test suite one in test mode is forked from ``tests/forkserver.py`` (ADR 0084);
- :func:`start_server` and :func:`running_server` put those together: a fresh database with an
  operator account, and a server on it that answers ``/health``;
- :class:`OperatorWallet` is the reference operator wallet (``starfever operator-wallet-demo``)
  as a real process, for a server in operator mode (:func:`operator_mode_env`).
"""

from __future__ import annotations

import asyncio
import functools
import io
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qs, urlparse

import httpx
import pyotp
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError

from starfever.seamless import protocol
from starfever.server import clock
from starfever.server.db import Database, migrate, sqlalchemy_url
from starfever.server.services import operator_accounts as operators
from starfever.server.settings import Settings
from starfever.server.spin.wallets import LedgerWallet
from tests import forkserver

DatabaseKind = Literal["sqlite", "postgresql"]
DATABASE_KINDS: tuple[DatabaseKind, ...] = ("sqlite", "postgresql")
"""The database kinds every server test runs on (also the ids of their parametrization)."""

DEFAULT_POSTGRES_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"
"""Where the tests look for PostgreSQL unless ``STARFEVER_TEST_PG`` says otherwise."""

HOST = "127.0.0.1"
OPERATOR_USERNAME = "boss"
OPERATOR_PASSWORD = "Orbit-tangerine-4417"
"""Strong enough for the operator password policy (issue 13)."""
PLAYER_PASSWORD = "password-1"
TEST_SERVER_ENV = {"STARFEVER_REGISTRATIONS_PER_ADDRESS": "1000000",
                   "STARFEVER_DRAIN_GRACE_SECONDS": "0"}
"""Every test registers its players from 127.0.0.1 (and the load benchmark its 64): the
registration throttle's own test sets its limit. No load balancer waits for a test server's
``/readyz``: it drains at once on SIGTERM (the drain's own test sets a grace)."""
CHEAP_HASHES = {"STARFEVER_TEST_CHEAP_PASSWORD_HASHES": "1"}
"""What a server in test mode gets besides: password hashes of 1 MiB and one pass instead of
64 MiB and three (ADR 0045), so the suite's log-ins do not spend minutes hashing. A test of
what the full cost does (the hashing gate under a flood, memory) sets it to ``0``;
``tests/server/test_password_cost.py`` proves the production cost."""
ADULT_BIRTH_DATE = "1990-01-01"
"""A birth date that makes a player an adult (registration requires one)."""
SECRET = "test-secret-key-0123456789-ABCDEFGHIJKLMNOPQRSTUV"
"""The ``STARFEVER_SECRET_KEY`` of every server and command the harness starts."""


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server answers at the admin URL."""


class UnexpectedResponse(AssertionError):
    """The server answered a harness helper with another status than the one it needs."""


def postgres_admin_url() -> str:
    """The PostgreSQL URL databases are created through: ``STARFEVER_TEST_PG``, else the
    default (``postgres`` on 127.0.0.1:5432, database ``test``)."""
    return os.environ.get("STARFEVER_TEST_PG") or DEFAULT_POSTGRES_ADMIN_URL


def terminate_backends(database_url: str, kills: int, gap_s: float) -> int:
    """``kills`` times, every ``gap_s`` seconds, terminate every PostgreSQL backend connected
    to the database of ``database_url`` (as a failing network or a restarted PostgreSQL would
    drop them); returns how many connections were dropped in all."""
    db_name = database_url.rsplit("/", 1)[1]
    admin = create_engine(sqlalchemy_url(postgres_admin_url()), isolation_level="AUTOCOMMIT")
    dropped = 0
    try:
        for _ in range(kills):
            time.sleep(gap_s)
            with admin.connect() as conn:
                dropped += conn.execute(text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"),
                    {"name": db_name}).scalar_one()
    finally:
        admin.dispose()
    return int(dropped)


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def unique_name(prefix: str = "p") -> str:
    """A fresh username (or database name) that no other test has used."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def expect(response: httpx.Response, *statuses: int) -> httpx.Response:
    """``response``, if its status is one of ``statuses``; else :class:`UnexpectedResponse`."""
    if response.status_code not in statuses:
        raise UnexpectedResponse(f"{response.request.method} {response.request.url} answered "
                                 f"{response.status_code}, not {statuses}: {response.text}")
    return response


Process = subprocess.Popen[bytes] | forkserver.ForkedProcess
"""A command the harness started: a process of its own, or a child of the fork server."""


def start_command(args: Sequence[str], env: Mapping[str, str], log_path: Path, *,
                  fork: bool, new_session: bool = False) -> Process:
    """``starfever ARGS`` as a process with ``env``, in the log's folder, its output appended
    to the log (in a session of its own if ``new_session``). ``fork``: a command in test mode,
    forked by the fork server (tests/forkserver.py, ADR 0084) unless
    ``STARFEVER_TEST_FORKS=0``; else a fresh interpreter, as production servers must be (their
    software check would see the test suite's modules loaded)."""
    if fork and forkserver.enabled():
        return forkserver.spawn(args, env=env, cwd=log_path.parent, log=log_path,
                                new_session=new_session)
    with open(log_path, "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "starfever.cli", *args], stdout=log,
                                stderr=subprocess.STDOUT, env=dict(env), cwd=log_path.parent,
                                start_new_session=new_session)


def _clean_environment(settings: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without its own ``STARFEVER_*`` settings, plus ``settings``:
    a server started from a developer's shell gets only what the harness gives it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARFEVER_")}
    env.update(settings)
    return env


@functools.cache
def audit_key_file() -> str:
    """The chain key file of this process's servers, commands and in-process settings, written
    on first use with a fresh random key: a key the tampering tests do not know (they cannot
    recompute a keyed hash, as an insider could not). It lies in the run's temporary folder
    (``tests/conftest.py``), which is removed after the run."""
    path = Path(tempfile.gettempdir()) / f"starfever-test-audit-key-{os.getpid()}"
    path.write_text(secrets.token_hex(32))
    path.chmod(0o600)
    return str(path)


def settings_like_servers(database_url: str) -> Settings:
    """In-process settings that match the harness's servers (secret, chain key, test mode)."""
    return Settings(database_url=database_url, secret_key=SECRET, test_mode=True,
                    audit_key_file=audit_key_file(), test_cheap_password_hashes=True)


_T = TypeVar("_T")


def run_coroutine(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run`` on a thread of its own: a browser test run earlier by the same
    pytest-xdist worker leaves Playwright's event loop running on the main thread, where
    ``asyncio.run`` would refuse to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def run_cli(*args: str, stdin: str = "", env: Mapping[str, str] | None = None,
            cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``starfever ARGS`` in a subprocess with the harness's secret and chain key (and
    ``env``)."""
    return subprocess.run([sys.executable, "-m", "starfever.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "STARFEVER_SECRET_KEY": SECRET,
                               "STARFEVER_AUDIT_KEY_FILE": audit_key_file(), **(env or {})})


def run_cli_in_process(*args: str, stdin: str = "", env: Mapping[str, str] | None = None,
                       cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` without the subprocess: ``starfever.cli.main(ARGS)`` in this process,
    with ``stdin``, the harness's secret and chain key (and ``env``) in the environment and
    ``cwd`` as the working folder for the call; its exit code and output as a subprocess's.
    For a command's answers and refusals, where a process of its own proves nothing more
    (one costs about two seconds of imports); exit by signal, broken pipes and start-up stay
    with :func:`run_cli` (ADR 0042)."""
    from starfever.cli import main

    settings = {"STARFEVER_SECRET_KEY": SECRET, "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
                **(env or {})}
    saved_env = {name: os.environ.get(name) for name in settings}
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_cwd = os.getcwd()
    saved_sigint = signal.getsignal(signal.SIGINT)  # main() installs its own (and may ignore)
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8"),
               io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", write_through=True))
    sys.stdin, sys.stdout, sys.stderr = streams
    os.environ.update(settings)
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's refusals and --help
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None
                                                                   else 1)
    finally:
        for stream in streams:
            stream.flush()
            stream.detach()  # (closing a wrapper would close the buffer read below)
        os.chdir(saved_cwd)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, saved_sigint)
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return subprocess.CompletedProcess(["starfever", *args], code,
                                       out.getvalue().decode(errors="replace"),
                                       err.getvalue().decode(errors="replace"))


def create_operator(database_url: str, name: str = OPERATOR_USERNAME,
                    password: str = OPERATOR_PASSWORD) -> str:
    """Migrate the database and create an operator account, as ``starfever operator create``
    does, but in this process (a subprocess would spend most of its two seconds importing)
    and with a test server's cheap password hash (:data:`CHEAP_HASHES`); the TOTP secret of
    its second factor."""
    db = Database(database_url)
    try:
        migrate(db)
        made = operators.create_operator(db, Settings(test_mode=True,
                                                       test_cheap_password_hashes=True),
                                         LedgerWallet(), name, password)
    finally:
        db.dispose()
    return made.totp_secret


def totp_secret_of(output: str) -> str:
    """The TOTP secret in the output of ``starfever operator create`` (or ``totp``)."""
    for line in output.splitlines():
        if line.strip().startswith("secret:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no TOTP secret in {output!r}")


def operator_log_in(http: httpx.Client, base: str, name: str, password: str,
                    secret: str, server: Server | None = None) -> httpx.Response:
    """``POST /operator/sessions`` with the current code (a code is good once: after a reuse,
    the next 30-second step's code: ``server``'s clock is moved to it, else this waits)."""
    response = None
    for _ in range(2):
        at = server.now() if server is not None else datetime.now(UTC)
        response = http.post(f"{base}/operator/sessions", json={
            "username": name, "password": password, "otp": pyotp.TOTP(secret).at(at)})
        if response.status_code != 401 or response.json()["error"]["code"] != "otp_reused":
            return response
        if server is not None and server.test_mode:
            server.move_clock(30)
        else:
            time.sleep(30.5 - time.time() % 30)
    assert response is not None
    return response


class Databases:
    """Fresh databases: SQLite files in ``directory``, or PostgreSQL databases with unique names
    created through ``admin_url``. Every one is dropped by :meth:`drop` or :meth:`drop_all`
    (or on leaving the ``with`` block)."""

    def __init__(self, directory: Path, *, admin_url: str | None = None,
                 prefix: str = "starfever_test_") -> None:
        self.directory = directory
        self.admin_url = admin_url or postgres_admin_url()
        self.prefix = prefix
        self.created: list[str] = []
        """The URLs of the databases made and not yet dropped."""

    @property
    def shown_admin_url(self) -> str:
        """The admin URL without its password (for messages)."""
        return make_url(self.admin_url).render_as_string(hide_password=True)

    @cached_property
    def postgres_available(self) -> bool:
        """Whether a PostgreSQL server answers at the admin URL (asked once)."""
        try:
            with self._admin() as admin, admin.connect():
                return True
        except (SQLAlchemyError, OSError):  # no server, or one that refuses us: not here
            return False

    def new(self, kind: DatabaseKind) -> str:
        """The URL of a fresh, empty database of ``kind``."""
        name = unique_name(self.prefix)
        if kind == "sqlite":
            self.directory.mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{self.directory / name}.db"
        else:
            if not self.postgres_available:
                raise PostgresUnavailable(f"no PostgreSQL answers at {self.shown_admin_url} "
                                          "(set STARFEVER_TEST_PG to its admin URL)")
            with self._admin() as admin, admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            url = make_url(self.admin_url).set(drivername="postgresql", database=name) \
                .render_as_string(hide_password=False)
        self.created.append(url)
        return url

    def drop(self, url: str) -> None:
        """Drop one database made by :meth:`new` (a SQLite file with its companions)."""
        if url.startswith("sqlite:///"):
            database = Path(url.removeprefix("sqlite:///"))
            for path in database.parent.glob(database.name + "*"):
                path.unlink(missing_ok=True)
        else:
            name = make_url(url).database
            with self._admin() as admin, admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self.created.remove(url)

    def drop_all(self) -> None:
        """Drop every database made and not yet dropped."""
        for url in list(self.created):
            self.drop(url)

    @contextmanager
    def _admin(self) -> Iterator[Engine]:
        engine = create_engine(sqlalchemy_url(self.admin_url), isolation_level="AUTOCOMMIT",
                               connect_args={"connect_timeout": 5})
        try:
            yield engine
        finally:
            engine.dispose()

    def __enter__(self) -> Databases:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.drop_all()


class Server:
    """A ``starfever serve`` process on 127.0.0.1 and an HTTP client for its API (in the test
    suite, one in test mode with one worker is forked by the fork server: :func:`start_command`).

    The port is chosen at the first :meth:`start` and kept, so a restarted server is where its
    clients expect it. ``env`` adds ``STARFEVER_*`` settings to the harness's own (the secret
    and the test mode); nothing else of this process's ``STARFEVER_*`` environment reaches it.
    In test mode its clock follows a file beside its log, which :meth:`move_clock` writes
    (ADR 0041): a time rule is tested by moving the clock, not by sleeping.
    """

    def __init__(self, database_url: str, log_path: Path, env: Mapping[str, str] | None = None,
                 *, test_mode: bool = True, workers: int = 1, own_process_group: bool = False,
                 start_timeout: float = 60.0, args: Sequence[str] = ()) -> None:
        self.database_url = database_url
        self.args = tuple(args)
        """More arguments of ``starfever serve`` (e.g. ``--wallet operator``)."""
        self.log_path = log_path
        self.clock_file = log_path.parent / f"clock-{unique_name()}"
        """The file the server's clock follows (test mode only)."""
        self.clock_shift = 0.0
        """How many seconds :meth:`move_clock` has moved the server's clock in all."""
        self.env = {"STARFEVER_SECRET_KEY": SECRET, "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
                    "STARFEVER_TEST_MODE": "1" if test_mode else "0",
                    **TEST_SERVER_ENV, **(env or {})}
        # test mode as the server will see it (``env`` may turn it off, or ask for production)
        test_mode = self.env["STARFEVER_TEST_MODE"] == "1" \
            and self.env.get("STARFEVER_ENV", "development") == "development"
        if test_mode:
            self.env["STARFEVER_TEST_CLOCK_FILE"] = str(self.clock_file)
            self.env = {**CHEAP_HASHES, **self.env}
        self.test_mode = test_mode
        self.workers = workers
        self.own_process_group = own_process_group
        """Start it in its own process group, so that one signal reaches every worker."""
        self.start_timeout = start_timeout
        self.process: Process | None = None
        self.port = 0
        self.http = httpx.Client(timeout=60)
        self._engine: Engine | None = None
        self._operator_token: str | None = None
        self._operator_lock = threading.Lock()
        self.operator_totp = ""
        """The operator's TOTP secret (from :func:`create_operator`)."""

    @property
    def url(self) -> str:
        """The server's root (the web client's page)."""
        return f"http://{HOST}:{self.port}"

    @property
    def base(self) -> str:
        """The API root."""
        return f"{self.url}/api/v1"

    def start(self) -> Server:
        """Start it and wait until ``/health`` answers."""
        self.port = self.port or free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        args = ("serve", "--host", HOST, "--port", str(self.port), "--workers",
                str(self.workers), "--database-url", self.database_url, "--log-level",
                "warning", *self.args)
        # (a supervisor of workers writes its metrics file when it imports the metrics, and
        # lists itself by that file: a forked one never would, so it starts as itself)
        self.process = start_command(args, _clean_environment(self.env), self.log_path,
                                     fork=self.test_mode and self.workers == 1,
                                     new_session=self.own_process_group)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_tail()}")
            try:
                if self.http.get(f"{self.base}/health").status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"the server did not answer /health in {self.start_timeout} s: "
                           f"{self.log_tail()}")

    def stop(self) -> None:
        """Stop it (SIGTERM, then wait; SIGKILL if it does not end in 20 s)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._engine is not None:
            self._engine.dispose()

    def kill(self) -> None:
        """SIGKILL it, as a machine crash would: no shutdown handler runs. Started in its own
        process group, the whole group (every worker) goes at once."""
        if self.process is None:
            return
        if self.own_process_group:
            os.killpg(self.process.pid, signal.SIGKILL)
        else:
            self.process.kill()
        self.process.wait()
        self.process = None

    def move_clock(self, seconds: float) -> None:
        """Move the server's clock ``seconds`` on (it keeps running from there); every time
        rule of the server sees the moved time at its next reading."""
        if not self.test_mode:
            raise RuntimeError("only a server in test mode has a clock a test can move")
        self.clock_shift += seconds
        clock.write_shift(self.clock_file, self.clock_shift)

    def now(self) -> datetime:
        """The server's time (this machine's clock, moved as :meth:`move_clock` moved it)."""
        return datetime.now(UTC) + timedelta(seconds=self.clock_shift)

    def log_tail(self, characters: int = 3000) -> str:
        """The end of the server's log."""
        return self.log_path.read_text(errors="replace")[-characters:]

    def __enter__(self) -> Server:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
        self.http.close()

    # --- API helpers -------------------------------------------------------------------
    def call(self, method: str, path: str, token: str | None = None,
             **kwargs: Any) -> httpx.Response:
        """One request to ``/api/v1{path}``; ``token`` becomes the bearer header."""
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.http.request(method, f"{self.base}{path}", headers=headers, **kwargs)

    def login(self, username: str, password: str = PLAYER_PASSWORD) -> str:
        """Log in; the session token."""
        response = self.call("POST", "/sessions",
                             json={"username": username, "password": password})
        return str(expect(response, 201).json()["token"])

    def register(self, username: str, password: str = PLAYER_PASSWORD, **extra: Any) -> None:
        """Register a player (``extra``: more fields of the request; the birth date is an
        adult's unless ``birth_date`` says otherwise)."""
        response = self.call("POST", "/players", json={
            "username": username, "password": password, "birth_date": ADULT_BIRTH_DATE,
            **extra})
        expect(response, 201)

    def player(self, deposit: int = 0, **extra: Any) -> tuple[str, str]:
        """A fresh player (with ``deposit`` cents), logged in: (username, token)."""
        name = unique_name()
        self.register(name, **extra)
        if deposit:
            self.deposit(name, deposit)
        return name, self.login(name)

    @property
    def operator_token(self) -> str:
        """A session token of the operator account (password and TOTP code), logged in once
        even when many threads ask at once (a TOTP code is good once: a second log-in with it
        would count as a failure, and three lock the operator out)."""
        with self._operator_lock:
            if self._operator_token is None:
                response = operator_log_in(self.http, self.base, OPERATOR_USERNAME,
                                           OPERATOR_PASSWORD, self.operator_totp, self)
                self._operator_token = str(expect(response, 201).json()["token"])
            return self._operator_token

    def deposit(self, username: str, amount: int, key: str | None = None) -> httpx.Response:
        """Deposit ``amount`` cents for the player, as the operator, under a fresh (or the
        given) ``Idempotency-Key``."""
        response = self.call("POST", f"/players/{username}/deposits", self.operator_token,
                             json={"amount": amount},
                             headers={"Idempotency-Key": key or uuid.uuid4().hex})
        return expect(response, 201)

    def spin(self, token: str, line_bet: int = 1, key: str | None = None,
             draws: list[int] | None = None) -> httpx.Response:
        """``POST /spins`` with a fresh (or the given) idempotency key; ``draws`` forces the
        round (test mode only)."""
        body: dict[str, Any] = {"line_bet": line_bet}
        if draws is not None:
            body["test_draws"] = draws
        return self.call("POST", "/spins", token, json=body,
                         headers={"Idempotency-Key": key or uuid.uuid4().hex})

    def balance(self, token: str) -> int:
        """The player's balance in cents."""
        return int(expect(self.call("GET", "/wallet", token), 200).json()["balance"])

    def engine(self) -> Engine:
        """A SQLAlchemy engine on the server's database (for checks and tampering)."""
        if self._engine is None:
            self._engine = create_engine(sqlalchemy_url(self.database_url),
                                         pool_pre_ping=True)
        return self._engine


def start_server(databases: Databases, kind: DatabaseKind, directory: Path,
                 env: Mapping[str, str] | None = None, *, test_mode: bool = True,
                 workers: int = 1, own_process_group: bool = False,
                 start_timeout: float = 60.0, args: Sequence[str] = ()) -> Server:
    """A started server, with an operator account, on a fresh database of ``kind``; its log
    is ``directory/server.log``. The other arguments are those of :class:`Server`."""
    url = databases.new(kind)
    secret = create_operator(url)
    server = Server(url, directory / "server.log", env, test_mode=test_mode, workers=workers,
                    own_process_group=own_process_group, start_timeout=start_timeout,
                    args=args)
    server.operator_totp = secret
    return server.start()


@contextmanager
def running_server(directory: Path, kind: DatabaseKind = "sqlite",
                   env: Mapping[str, str] | None = None, *, keep: bool = False,
                   test_mode: bool = True, workers: int = 1,
                   start_timeout: float = 60.0, args: Sequence[str] = ()) -> Iterator[Server]:
    """A server on a fresh database of its own (in ``directory``, or through
    ``STARFEVER_TEST_PG``) for the ``with`` block; afterwards it is stopped and the database
    dropped, unless ``keep``. ``args``: more arguments of ``starfever serve``."""
    databases = Databases(directory / "db")
    try:
        with start_server(databases, kind, directory, env, test_mode=test_mode,
                          workers=workers, start_timeout=start_timeout,
                          args=args) as server:
            yield server
    finally:
        if not keep:
            databases.drop_all()
            shutil.rmtree(databases.directory, ignore_errors=True)


OPERATOR_SECRET = "operator-shared-secret-0123456789abcdef"
"""The shared secret of the reference wallet and of a server in operator mode."""


class OperatorWallet:
    """The reference operator wallet (``starfever operator-wallet-demo``) as a real process on
    a free port, with its own SQLite file in ``folder``, and a client for its admin routes
    (``quiet``: without its line per call, as the load benchmark runs it)."""

    def __init__(self, folder: Path, secret: str = OPERATOR_SECRET, *,
                 quiet: bool = False, args: Sequence[str] = (),
                 verify: str | bool | ssl.SSLContext = True) -> None:
        self.port = free_port()
        scheme = "https" if "--ssl-certfile" in args else "http"
        self.url = f"{scheme}://{HOST}:{self.port}"
        self.secret = secret
        self.db = folder / "operator-wallet.db"
        self.log = folder / "operator-wallet.log"
        env = {**os.environ, "STARFEVER_OPERATOR_SECRET": secret}
        self.process = start_command(
            ("operator-wallet-demo", "--port", str(self.port), "--db", str(self.db),
             *(["--quiet"] if quiet else []), *args), env, self.log, fork=True)
        self.admin = httpx.Client(base_url=self.url, timeout=10, verify=verify)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(self.log.read_text())
            try:
                self.admin.get("/_admin/transactions")
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the reference wallet did not start")

    def player(self, player_id: str, balance: int = 0, *, blocked: bool = False) -> None:
        """Create the player or set its balance and block."""
        self.admin.post("/_admin/players", json={"player_id": player_id, "balance": balance,
                                                 "blocked": blocked}).raise_for_status()

    def balance(self, player_id: str) -> int:
        """The player's balance on the operator's side."""
        response = self.admin.get(f"/_admin/players/{player_id}")
        response.raise_for_status()
        return int(response.json()["balance"])

    def transactions(self, player_id: str | None = None) -> list[dict[str, Any]]:
        """Every request the wallet recorded (of one player), oldest first."""
        params = {"player_id": player_id} if player_id else {}
        return list(self.admin.get("/_admin/transactions", params=params).json())

    def fault(self, method: str, fault: str, *, times: int = 1, seconds: float = 0) -> None:
        """Make the next ``times`` calls of ``method`` misbehave (``delay``, ``drop``,
        ``error``, ``twice``, ``forge``, ``refuse``)."""
        self.admin.post("/_admin/faults", json={"method": method, "fault": fault,
                                                "times": times, "seconds": seconds}
                        ).raise_for_status()

    def clear_faults(self) -> None:
        """Forget the faults not yet consumed."""
        self.admin.delete("/_admin/faults").raise_for_status()

    def stop(self) -> None:
        """End the process."""
        self.admin.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def operator_mode_args(wallet: OperatorWallet) -> tuple[str, ...]:
    """``starfever serve`` arguments of operator mode against ``wallet``."""
    return ("--wallet", "operator", "--wallet-url", wallet.url)


def operator_mode_env(wallet: OperatorWallet, *, timeout: float = 5,
                      retry: float = 0.2) -> dict[str, str]:
    """The environment of a server in operator mode: the secret, the wallet's timeout and the
    retrier's first backoff."""
    return {"STARFEVER_OPERATOR_SECRET": wallet.secret,
            "STARFEVER_WALLET_TIMEOUT": str(timeout),
            "STARFEVER_WALLET_RETRY_SECONDS": str(retry)}


def signed_launch(server: Server, secret: str, player_id: str,
                  **fields: Any) -> httpx.Response:
    """The operator's ``POST /launch`` for ``player_id``, signed with ``secret`` (wallet
    protocol v2: a fresh ``launch_id`` unless ``fields`` name one)."""
    body = protocol.encode({"launch_id": f"launch-{uuid.uuid4().hex}", "player_id": player_id,
                            "operator_session": f"opsess-{player_id}", "currency": "EUR",
                            "language": "de", "market": "at", "mode": "real",
                            "return_url": "https://operator.example/lobby", **fields},
                           server.now())
    return server.call("POST", "/launch", content=body, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign(secret, body)})


def launched_player(server: Server, secret: str, player_id: str) -> str:
    """Launch ``player_id`` and exchange the launch token: the session token."""
    url = str(expect(signed_launch(server, secret, player_id), 200).json()["url"])
    launch_token = parse_qs(urlparse(url).query)["launch"][0]
    response = server.call("POST", "/sessions", json={"launch_token": launch_token})
    return str(expect(response, 201).json()["token"])
