"""Database engines and transactions.

Every service call runs in exactly one transaction from :meth:`Database.write` or
:meth:`Database.read`. On SQLite a write transaction starts with ``BEGIN IMMEDIATE`` (the
database's write lock, taken up front, so two writers never interleave and never deadlock);
reads use a second engine with plain deferred transactions (WAL lets them run beside a writer).
Write transactions of this package also queue on a :class:`WriteLock` first, so a writer
waiting in another thread or process wakes as soon as the lock is free instead of polling.
On PostgreSQL both are the same engine, and services lock the rows they change with
``SELECT ... FOR UPDATE`` in a fixed order: wallet, then pool, then chain head. The group
commits of spins on one host take turns as well (``spin.turn.SettleTurn``), which makes their
batches larger; the row locks alone keep them right.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from importlib import resources
from typing import Any

from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from starfever.engine.errors import InputError
from starfever.server.settings import secrets_of, shown_url
from starfever.server.spin.turn import SettleTurn

try:
    import fcntl
except ImportError:  # not on Windows: there, processes wait in SQLite's busy handler
    fcntl = None  # type: ignore[assignment]

SQLITE_BUSY_TIMEOUT_S = 30
MIGRATION_LOCK_KEY = 0x5374_4665  # pg_advisory_lock key: "StFe"


def sqlalchemy_url(url: str) -> str:
    """The URL SQLAlchemy needs: ``postgresql://`` is driven by psycopg 3, and libpq's
    multi-host form (``postgresql://USER@H1:P1,H2:P2/DB?target_session_attrs=read-write``,
    as failover managers print it) is written as SQLAlchemy reads several hosts:
    ``postgresql+psycopg://USER@/DB?host=H1:P1&host=H2:P2&target_session_attrs=read-write``
    (ADR 0070)."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + _hosts_in_query(url[len(prefix):])
    return url


def _hosts_in_query(rest: str) -> str:
    """``USER@H1:P1,H2:P2/DB?QUERY`` (the URL after its scheme) with its hosts moved into the
    query; anything with one host or none is returned as it is."""
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0),
              default=len(rest))
    netloc, tail = rest[:cut], rest[cut:]
    user, at, hosts = netloc.rpartition("@")
    if "," not in hosts:
        return rest
    path, question, query = tail.partition("?")
    listed = "&".join(f"host={host}" for host in hosts.split(",") if host)
    return f"{user}{at}{path or '/'}?{listed}" + (f"&{query}" if question and query else "")


def _sqlite_engine(url: str, *, immediate: bool) -> Engine:
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S,
                                              "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_S * 1000}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class CommitUnknown(RuntimeError):
    """The connection failed during COMMIT: whether the transaction committed is unknown, so
    the request must not be run again here (answered ``503 commit_unknown``: the client sends
    it again with its ``Idempotency-Key``, which finds what was committed)."""


UNAVAILABLE_SQLSTATES = frozenset(("57P01", "57P02", "57P03", "25006"))
"""PostgreSQL's answers of a server that cannot take this work now, whatever the request:
``admin_shutdown``, ``crash_shutdown``, ``cannot_connect_now`` (starting, stopping, or
recovering), and ``read_only_sql_transaction`` (a standby, or a primary demoted in a failover,
ADR 0070). With the connection errors (class ``08``, and the driver's own, which have none)
they are :func:`database_unavailable`."""


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error``, or an error it was raised from, says that no database that takes
    writes could be reached (a failover under way, ADR 0070): a connection that died
    (``connection_invalidated``), one that could not be opened (no host of a multi-host URL
    takes writes yet), a server shutting down or starting, a read-only server. Nothing of a
    request failed so is the request's fault: it is answered ``503 database_unavailable`` and
    sent again later, never ``500``; and a group commit does not split its batch over it."""
    import psycopg

    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DBAPIError) and current.connection_invalidated:
            return True
        for candidate in (current, getattr(current, "orig", None)):  # SQLAlchemy wraps
            if isinstance(candidate, psycopg.Error):
                state = candidate.sqlstate
                if state is None and isinstance(candidate, psycopg.OperationalError):
                    return True  # the driver's own: refused, lost, no read-write host
                if state is not None and (state.startswith("08")
                                          or state in UNAVAILABLE_SQLSTATES):
                    return True
        current = current.__cause__ or current.__context__
    return False


class WriteLock:
    """Lets one write transaction at a time start on a SQLite file, across the threads of this
    process (a lock) and across processes (``flock`` on ``<file>-writer.lock``). A waiter
    sleeps in the kernel and wakes the moment the writer ends, where a second process's
    ``BEGIN IMMEDIATE`` would poll SQLite's busy handler, which sleeps up to 100 ms between
    tries: with two worker processes that was a p99 of 0.8 s at 500 spins/s. A writer that
    does not take this lock (another program) is still kept out by SQLite's own lock."""

    def __init__(self, database_file: str | None) -> None:
        self._path = f"{database_file}-writer.lock" if database_file and fcntl else None
        self._threads = threading.RLock()
        self._fd: int | None = None
        self._pid = 0
        self._depth = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the block (re-entrant within one thread)."""
        with self._threads:
            self._depth += 1
            try:
                if self._depth == 1 and self._path is not None:
                    if self._fd is None or self._pid != os.getpid():  # not a forked parent's
                        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
                        self._pid = os.getpid()
                    fcntl.flock(self._fd, fcntl.LOCK_EX)
                    try:
                        yield
                    finally:
                        fcntl.flock(self._fd, fcntl.LOCK_UN)
                else:
                    yield
            finally:
                self._depth -= 1

    def close(self) -> None:
        """Close the lock file (the lock is not held)."""
        with self._threads:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _generic_plans(driver: Any, _record: Any) -> None:
    """A group commit's connection plans each of its prepared statements once
    (``spin.transaction``). PostgreSQL's default plans a statement anew for every execution
    whenever the plan for unknown values looks dearer than the last five for known ones, as it
    does for a batch's arrays of a few rows: measured, planning the stored-rounds read took
    0.46 ms against 0.19 ms to run it, and planning was a tenth of the database's CPU in
    operator mode. The statements are written so that one plan serves every batch (index
    probes a row: ``unnest`` joins, ``= ANY`` on a key); a plan made while a table was still
    nearly empty is made again when the table is analysed (autovacuum does so as it grows)."""
    driver.execute("SET plan_cache_mode = force_generic_plan")
    driver.commit()


class Database:
    """The engines of one database URL and its transactions."""

    def __init__(self, url: str) -> None:
        self.url = sqlalchemy_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self._write_lock: WriteLock | None = None
        if self.is_sqlite:
            self.write_engine = _sqlite_engine(self.url, immediate=True)
            self.read_engine = _sqlite_engine(self.url, immediate=False)
            shared = sqlite_file(make_url(self.url))  # (None: this process's memory)
            self._write_lock = WriteLock(shared)
            # a file's settlers take turns by the file's real path
            self.settle_turn = SettleTurn(os.path.realpath(shared) if shared else None)
        else:
            self.write_engine = create_engine(self.url, pool_size=10, max_overflow=20,
                                              pool_pre_ping=True)
            self.read_engine = self.write_engine
            self.settle_turn = SettleTurn(self.url)
        # the group commits' (``spin.transaction``): the settler's and, in operator mode, the wallet
        # books' thread at once; one kept for each (a connection beyond pool_size is closed
        # when returned, and opening one costs a PostgreSQL backend's start). Autocommit at
        # the driver: a batch sends its own BEGIN and COMMIT with its statements.
        self.bulk_engine: Engine | None = None if self.is_sqlite else create_engine(
            self.url, pool_size=2, max_overflow=4, isolation_level="AUTOCOMMIT")
        if self.bulk_engine is not None:
            event.listen(self.bulk_engine, "connect", _generic_plans)
        self._writer = sessionmaker(self.write_engine, expire_on_commit=False)
        self._reader = sessionmaker(self.read_engine, expire_on_commit=False)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One write transaction: committed when the block ends, rolled back on any error.
        A database error during the COMMIT itself is raised as :class:`CommitUnknown` (it may
        or may not have committed); every error before it left nothing written."""
        with self.write_turn(), self._writer() as session:
            session.begin()
            try:
                yield session
                session.flush()
            except BaseException:
                session.rollback()
                raise
            try:
                session.commit()
            except DBAPIError as error:
                raise CommitUnknown("the database failed during COMMIT: the transaction "
                                    "may or may not have committed") from error

    @contextmanager
    def read(self) -> Iterator[Session]:
        """One transaction for reading (nothing is written in it; loaded rows stay usable
        after it ends)."""
        with self._reader() as session, session.begin():
            yield session

    def write_turn(self) -> AbstractContextManager[None]:
        """This package's turn to write (SQLite: the :class:`WriteLock`; PostgreSQL locks rows
        instead: no turn to wait for)."""
        return self._write_lock.held() if self._write_lock is not None else nullcontext()

    def dispose(self) -> None:
        """Close every pooled connection (and the lock files)."""
        self.settle_turn.close()
        if self._write_lock is not None:
            self._write_lock.close()
        if self.bulk_engine is not None:
            self.bulk_engine.dispose()
        self.write_engine.dispose()
        if self.read_engine is not self.write_engine:
            self.read_engine.dispose()


def alembic_config(url: str) -> Any:
    """The Alembic configuration of the migrations shipped in the package."""
    from alembic.config import Config

    package = resources.files("starfever.server")
    config = Config(str(package / "alembic.ini"))
    config.set_main_option("script_location", str(package / "migrations"))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return config


def migrate(database: Database) -> None:
    """Bring the database to the newest schema. Several servers may start at once on
    PostgreSQL: an advisory lock lets one migrate while the others wait. A database at a
    revision this version does not know was migrated by a newer release (a rolling upgrade,
    ADR 0063): its schema only adds to this version's, so it is served as it is."""
    from alembic import command

    config = alembic_config(database.url)
    with database.write_engine.connect() as connection:
        if not database.is_sqlite:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            connection.commit()
        try:
            newer = _newer_revision(config, connection)
            if newer is not None:
                logging.getLogger("starfever.server").warning(
                    "the database is at schema revision %s, newer than this version's %s (a "
                    "newer release migrated it: a rolling upgrade); serving on it unchanged",
                    newer, head_revision())
                return
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
        finally:
            if not database.is_sqlite:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"),
                                   {"key": MIGRATION_LOCK_KEY})
                connection.commit()


def _newer_revision(config: Any, connection: Connection) -> str | None:
    """The database's revision if this version's migrations do not know it, else ``None``."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    current = MigrationContext.configure(connection).get_current_revision()
    if current is None:
        return None
    try:
        ScriptDirectory.from_config(config).get_revision(current)
    except CommandError:
        return current
    return None


def current_revision(database: Database) -> str | None:
    """The schema revision the database is at (``None`` if it was never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with database.read_engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""
DRIVERS = ("sqlite", "sqlite+pysqlite", "postgresql+psycopg")
"""The SQLAlchemy drivers Star Fever keeps its data with (``sqlalchemy_url`` maps
``postgresql://`` to psycopg 3)."""
USE = "use sqlite:///FILE or postgresql://USER@HOST/DB"


def checked_url(url: str) -> URL:
    """The parsed ``url`` of a database Star Fever can keep its data in, or an
    :class:`InputError`: not a URL, a driver other than SQLite's or psycopg's, or an in-memory
    SQLite database (gone when the command that wrote it ends, and every server worker would
    have its own)."""
    shown = shown_url(url)
    try:
        parsed = make_url(sqlalchemy_url(url))
    except (ArgumentError, ValueError):
        raise InputError(f"database URL {shown!r} is not a URL: {USE}") from None
    if parsed.drivername not in DRIVERS:
        raise InputError(f"unsupported database URL {shown!r}: {USE}")
    if parsed.drivername.startswith("sqlite") and sqlite_file(parsed) is None:
        raise InputError(f"database URL {shown!r} is an in-memory database, gone when the "
                         f"command ends: use sqlite:///FILE")
    return parsed


def sqlite_file(url: URL) -> str | None:
    """The file of an SQLite URL (a URI filename's path too); ``None`` for an in-memory
    database or one that is not SQLite's."""
    if not url.drivername.startswith("sqlite"):
        return None
    file = url.database
    if file and file.startswith("file:") and str(url.query.get("uri", "")).lower() in (
            "true", "1"):  # a URI filename: sqlite:///file:PATH?mode=ro&uri=true
        if url.query.get("mode") == "memory":
            return None
        file = file.removeprefix("file:")
    return file if file and file != ":memory:" else None


def database_problem(url: str, error: BaseException) -> InputError:
    """A one-line error for a database that cannot be used, with no secret in it."""
    detail = str(getattr(error, "orig", None) or error).strip().splitlines()
    message = detail[0] if detail else type(error).__name__
    for secret in secrets_of(url):
        message = message.replace(secret, "***")
    return InputError(f"cannot use the database {shown_url(url)}: {message}")


def _sqlite_header(file: str, shown: str) -> bytes | None:
    """The first 16 bytes of an existing SQLite file (``b""`` for an empty one, ``None`` for
    no file at all), read without opening it as a database; a folder or a file that is not an
    SQLite database is an :class:`InputError`."""
    if os.path.isdir(file):
        raise InputError(f"{shown}: {file} is a folder, not a database file")
    try:
        with open(file, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError(f"{shown}: cannot read {file} ({error.strerror})") from None
    if header and header != SQLITE_HEADER:
        raise InputError(f"{shown}: {file} is not an SQLite database file")
    return header


def _sqlite_revision(file: str, shown: str) -> str | None:
    """The schema revision of an SQLite file, read through a read-only connection (so that a
    file refused is left exactly as it was: no journal mode set, nothing created)."""
    import sqlite3
    from urllib.parse import quote

    try:
        connection = sqlite3.connect(f"file:{quote(os.path.abspath(file))}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise InputError(f"{shown}: cannot be opened ({error})") from None
    try:
        return str(connection.execute("SELECT version_num FROM alembic_version").fetchone()[0])
    except (sqlite3.OperationalError, TypeError):  # no such table, or no row in it
        return None
    except sqlite3.Error as error:
        raise InputError(f"{shown}: cannot be opened ({error})") from None
    finally:
        connection.close()


def open_existing(url: str) -> Database:
    """The database at ``url``, which must already hold Star Fever's schema at this version's
    revision: for every command that only uses an existing one (``audit``, ``chain-statement``,
    ``reconcile``, ``report``, ``operator totp``). Anything else (a malformed or unsupported
    URL, an in-memory one, a missing SQLite file or PostgreSQL database, one that cannot be
    reached or was never migrated) is an :class:`InputError`, and a database refused is left
    as it was: nothing is created or written."""
    parsed = checked_url(url)
    shown = shown_url(url)
    file = sqlite_file(parsed)
    if file is not None:
        header = _sqlite_header(file, shown)
        if header is None:
            raise InputError(f"{shown}: no such database file")
        revision = _sqlite_revision(file, shown) if header else None
        _check_revision(shown, revision)
    database = Database(url)
    try:
        revision = current_revision(database)
    except SQLAlchemyError as error:
        database.dispose()
        raise database_problem(url, error) from None
    try:
        _check_revision(shown, revision)
    except InputError:
        database.dispose()
        raise
    return database


def _check_revision(shown: str, revision: str | None) -> None:
    if revision is None:
        raise InputError(f"{shown} holds no Star Fever database")
    head = head_revision()
    if revision != head:
        raise InputError(f"{shown} is at schema revision {revision}, this version needs {head}: "
                         "starfever serve (or starfever operator create) migrates it")


def open_migrated(url: str) -> Database:
    """The database at ``url`` at the newest schema, created if need be: for the commands that
    keep data in it (``serve``, ``operator create``). A URL :func:`checked_url` refuses, a
    folder or a file that is not an SQLite database, or a database that cannot be reached or
    migrated is an :class:`InputError`; the first ones are refused before anything is
    opened."""
    parsed = checked_url(url)
    file = sqlite_file(parsed)
    if file is not None:
        shown = shown_url(url)
        if _sqlite_header(file, shown) is None:
            folder = os.path.dirname(os.path.abspath(file))
            if not os.path.isdir(folder):
                raise InputError(f"{shown}: no such folder {folder}")
    database = Database(url)
    try:
        migrate(database)
    except SQLAlchemyError as error:
        database.dispose()
        raise database_problem(url, error) from None
    return database


def head_revision() -> str | None:
    """The newest schema revision this version of Star Fever has."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
