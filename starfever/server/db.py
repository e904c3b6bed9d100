"""Database engines and transactions.

Every service call runs in exactly one transaction from :meth:`Database.write` or
:meth:`Database.read`. On SQLite a write transaction starts with ``BEGIN IMMEDIATE`` (the
database's write lock, taken up front, so two writers never interleave and never deadlock);
reads use a second engine with plain deferred transactions (WAL lets them run beside a writer).
On PostgreSQL both are the same engine, and services lock the rows they change with
``SELECT ... FOR UPDATE`` in a fixed order: wallet, then pool, then chain head.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

SQLITE_BUSY_TIMEOUT_S = 30
MIGRATION_LOCK_KEY = 0x5374_4665  # pg_advisory_lock key: "StFe"


def sqlalchemy_url(url: str) -> str:
    """The URL SQLAlchemy needs: ``postgresql://`` is driven by psycopg 3."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


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


class Database:
    """The engines of one database URL and its transactions."""

    def __init__(self, url: str) -> None:
        self.url = sqlalchemy_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        if self.is_sqlite:
            self.write_engine = _sqlite_engine(self.url, immediate=True)
            self.read_engine = _sqlite_engine(self.url, immediate=False)
        else:
            self.write_engine = create_engine(self.url, pool_size=10, max_overflow=20,
                                              pool_pre_ping=True)
            self.read_engine = self.write_engine
        self._writer = sessionmaker(self.write_engine, expire_on_commit=False)
        self._reader = sessionmaker(self.read_engine, expire_on_commit=False)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One write transaction: committed when the block ends, rolled back on any error."""
        with self._writer() as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """One transaction for reading (nothing is written in it; loaded rows stay usable
        after it ends)."""
        with self._reader() as session, session.begin():
            yield session

    def dispose(self) -> None:
        """Close every pooled connection."""
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
    PostgreSQL: an advisory lock lets one migrate while the others wait."""
    from alembic import command

    config = alembic_config(database.url)
    with database.write_engine.connect() as connection:
        if not database.is_sqlite:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            connection.commit()
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
        finally:
            if not database.is_sqlite:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"),
                                   {"key": MIGRATION_LOCK_KEY})
                connection.commit()


def current_revision(database: Database) -> str | None:
    """The schema revision the database is at (``None`` if it was never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with database.read_engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
