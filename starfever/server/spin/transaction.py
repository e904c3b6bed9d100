"""A group commit's transaction in two round trips (ADR 0027): the settler's and the wallet
books' batches read their books, then write what they settled and commit.

On PostgreSQL each round trip to the database costs both sides more CPU than the statements in
it: psycopg's extended protocol sends a Parse/Bind/Describe/Execute per statement and polls
the socket after each, even in pipeline mode (measured: four prepared reads in one pipeline
~420 µs of client CPU and ~300 µs of PostgreSQL's, against ~140 and ~170 as one message). So a
:class:`Batch` sends each phase as ONE simple-protocol message of several statements (through
psycopg's ``ClientCursor``, which sends a text without parameters that way). Each statement is
an SQL-level prepared statement, ``PREPARE``d in the same message the first time it is used on
a connection and then run as ``EXECUTE name(values)``, the values written as literals by
``statements.sql_literal``:

1. ``BEGIN`` and every read (:meth:`Batch.fetch`), answered by one result set each;
2. every write (:meth:`Batch.insert`, :meth:`Batch.update`: one statement per table, the rows
   as arrays, ``statements``) and ``COMMIT`` (:meth:`Batch.commit`).

The connection runs in autocommit mode at the driver, so psycopg sends no ``BEGIN`` of its own;
the transaction is the one these messages open and close. A statement that fails aborts the
transaction: the batch then sends ``ROLLBACK`` (the connection still lives) or drops every
pooled connection (it died), and raises the error as SQLAlchemy's (an ``IntegrityError`` as
:class:`sqlalchemy.exc.IntegrityError`, ``connection_invalidated`` set when the connection
died), so the callers' retry rules are the same on both databases. An error in ``COMMIT``'s
message leaves it unknown whether it committed: the settler's retry then finds the rounds by
their keys, as before.

On SQLite, which has no round trips, a batch is a SQLAlchemy transaction under the write lock
(``db.WriteLock``) whose statements run as they come.
"""

from __future__ import annotations

import hashlib
import re
import weakref
from abc import ABC, abstractmethod
from collections import namedtuple
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import ColumnElement, Connection, Dialect, Select, Table, any_, bindparam
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from starfever.server.db import Database
from starfever.server.spin import statements

Query = tuple[Select[Any], Mapping[str, Any]]
"""A read and its parameters (plain values: ids, keys, lists of them)."""


class UnsuitableDatabase(SQLAlchemyError):
    """A database the batches cannot write to as they do."""


def check(db: Database) -> None:
    """Refuse, at start-up, a database the batches cannot use (:class:`UnsuitableDatabase`):
    a batch opened and rolled back, which checks the server's settings."""
    with begin(db):
        pass


def among(column: ColumnElement[Any], name: str, *, postgres: bool) -> ColumnElement[bool]:
    """``column`` is one of the values of the list parameter ``name``: ``= ANY(array)`` on
    PostgreSQL (one statement text whatever the number of values), an expanding ``IN (...)``
    elsewhere."""
    if postgres:
        return column == any_(bindparam(name))
    return column.in_(bindparam(name, expanding=True))


class Batch(ABC):
    """One write transaction of a group commit (see the module docstring)."""

    @abstractmethod
    def fetch(self, queries: Sequence[Query]) -> list[list[Any]]:
        """Each query's rows, in order: tuples with the selected columns' names, the values
        read back as the columns' types read them."""

    @abstractmethod
    def insert(self, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert ``rows`` in their order (``statements.insert_sql``)."""

    @abstractmethod
    def update(self, table: Table, key: str, rows: Sequence[Mapping[str, Any]],
               assignments: Mapping[str, str] | None = None) -> None:
        """Update the row of ``table`` keyed by each row's ``key`` (``statements.update_sql``)."""

    @abstractmethod
    def commit(self) -> None:
        """Send what is left and commit."""


@contextmanager
def begin(db: Database) -> Iterator[Batch]:
    """A :class:`Batch` for the block; rolled back unless the block called ``commit``."""
    if db.is_sqlite:
        with db.write_turn(), db.write_engine.connect() as connection, \
                connection.begin() as transaction:
            sqlite = _SqliteBatch(connection)
            yield sqlite
            if not sqlite.committed:
                transaction.rollback()
        return
    with _postgres_batch(db) as postgres:
        yield postgres


class _SqliteBatch(Batch):
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.committed = False

    def fetch(self, queries: Sequence[Query]) -> list[list[Any]]:
        return [list(self.connection.execute(query, params)) for query, params in queries]

    def insert(self, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
        statements.insert_rows(self.connection, table, rows)

    def update(self, table: Table, key: str, rows: Sequence[Mapping[str, Any]],
               assignments: Mapping[str, str] | None = None) -> None:
        statements.update_rows(self.connection, table, key, rows, assignments)

    def commit(self) -> None:
        """The statements ran as they came; the transaction commits as the block ends."""
        self.committed = True


@dataclass(frozen=True)
class _Plan:
    """A read compiled for PostgreSQL, and how its raw rows are read back."""

    sql: str
    defaults: dict[str, Any]
    """The values bound in the statement itself (``id = 1``), by parameter name."""
    row: type[tuple[Any, ...]]
    processors: tuple[tuple[int, Callable[[Any], Any]], ...]

    def rows(self, raw: Sequence[Sequence[Any]]) -> list[Any]:
        found = []
        for values in raw:
            if self.processors:
                values = list(values)
                for index, process in self.processors:
                    values[index] = process(values[index])
            found.append(self.row(*values))
        return found


_plans: dict[int, tuple[Select[Any], _Plan]] = {}


def _plan(query: Select[Any], dialect: Dialect) -> _Plan:
    """``query`` compiled for PostgreSQL, once (the reads are module constants)."""
    known = _plans.get(id(query))
    if known is not None and known[0] is query:
        return known[1]
    columns = list(query.selected_columns)
    processors = [(index, column.type.result_processor(dialect, None))
                  for index, column in enumerate(columns)]
    compiled = query.compile(dialect=dialect)
    plan = _Plan(sql=str(compiled), defaults=dict(compiled.params),
                 row=namedtuple("Row", [column.key for column in columns]),  # type: ignore[misc]
                 processors=tuple((i, p) for i, p in processors if p is not None))
    _plans[id(query)] = (query, plan)
    return plan


_NAMED = re.compile(r"%\((\w+)\)s")
"""A named parameter of a statement's text (psycopg's ``pyformat``)."""


@dataclass(frozen=True)
class _Prepared:
    """A statement as an SQL-level prepared statement: parsed and planned once per
    connection, then run by name with its parameters written as literals."""

    name: str
    prepare: str
    parameters: tuple[str, ...]
    """The parameters' names, in the order ``EXECUTE`` takes their values."""

    def execute(self, params: Mapping[str, Any]) -> str:
        if not self.parameters:
            return f"EXECUTE {self.name}"
        values = ", ".join(statements.sql_literal(params[name]) for name in self.parameters)
        return f"EXECUTE {self.name}({values})"


@lru_cache(maxsize=256)
def _prepared(sql: str) -> _Prepared:
    order: list[str] = []

    def number(found: re.Match[str]) -> str:
        if found.group(1) not in order:
            order.append(found.group(1))
        return f"${order.index(found.group(1)) + 1}"

    body = _NAMED.sub(number, sql).replace("%%", "%")
    name = "sf_" + hashlib.sha256(sql.encode()).hexdigest()[:24]
    return _Prepared(name=name, prepare=f"PREPARE {name} AS {body}", parameters=tuple(order))


_ROWS = 2
"""``PGRES_TUPLES_OK``: a result with rows (``psycopg.pq.ExecStatus.TUPLES_OK``)."""
_known: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
"""Per psycopg connection, the statements prepared on it (only ever by a batch: the bulk
engine's connections serve nothing else)."""


class _PostgresBatch(Batch):
    def __init__(self, driver: Any, dialect: Dialect) -> None:
        import psycopg

        if driver.info.parameter_status("standard_conforming_strings") != "on":
            raise UnsuitableDatabase("standard_conforming_strings must be on (PostgreSQL's "
                                     "default): the settler writes its values as literals")
        self.dialect = dialect
        self.cursor = psycopg.ClientCursor(driver)
        self.known = _known.setdefault(driver, set())
        self.begun = False
        self.committed = False
        self.writes: list[str] = []
        self.preparing: set[str] = set()
        """The statements the next message prepares (known once it went through)."""

    def _statement(self, sql: str, params: Mapping[str, Any]) -> str:
        """``sql`` with ``params``, as the execution of its prepared statement (prepared first
        in the same message, the first time on this connection)."""
        prepared = _prepared(sql)
        execute = prepared.execute(params)
        if prepared.name in self.known or prepared.name in self.preparing:
            return execute
        self.preparing.add(prepared.name)
        return f"{prepared.prepare}; {execute}"

    def _send(self, parts: list[str]) -> None:
        if not self.begun:
            parts.insert(0, "BEGIN")
            self.begun = True
        self.cursor.execute("; ".join(parts))
        self.known |= self.preparing
        self.preparing.clear()

    def fetch(self, queries: Sequence[Query]) -> list[list[Any]]:
        plans = [_plan(query, self.dialect) for query, _ in queries]
        self._send([self._statement(plan.sql, {**plan.defaults, **params})
                    for plan, (_, params) in zip(plans, queries, strict=True)])
        found: list[list[Any]] = []
        while True:  # a result per statement sent: only the reads' have rows
            result = self.cursor.pgresult
            if result is not None and result.status == _ROWS:
                found.append(plans[len(found)].rows(self.cursor.fetchall()))
            if not self.cursor.nextset():
                break
        return found

    def insert(self, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            self.writes.append(self._statement(*statements.insert_sql(self.dialect, table, rows)))

    def update(self, table: Table, key: str, rows: Sequence[Mapping[str, Any]],
               assignments: Mapping[str, str] | None = None) -> None:
        if rows:
            self.writes.append(self._statement(
                *statements.update_sql(self.dialect, table, key, rows, assignments)))

    def commit(self) -> None:
        self.writes.append("COMMIT")
        writes, self.writes = self.writes, []
        self._send(writes)
        self.committed = True


@contextmanager
def _postgres_batch(db: Database) -> Iterator[Batch]:
    import psycopg

    engine = db.bulk_engine
    assert engine is not None
    pooled = engine.raw_connection()
    driver = pooled.driver_connection
    assert isinstance(driver, psycopg.Connection)
    try:
        found = _PostgresBatch(driver, engine.dialect)
        try:
            yield found
        finally:
            if found.begun and not found.committed and not (driver.closed or driver.broken):
                # which statements a failed message prepared is unknown: forget them all
                found.known.clear()
                with suppress(psycopg.Error):  # the error that ended the block is the one
                    found.cursor.execute("ROLLBACK; DEALLOCATE ALL")  # to raise
    except psycopg.Error as error:
        dead = driver.closed or driver.broken
        if dead:  # as SQLAlchemy does for a statement: drop this pool's connections
            pooled.invalidate(error)
            engine.pool.dispose()
        raise DBAPIError.instance(None, None, error, psycopg.Error,
                                  connection_invalidated=dead) from error
    finally:
        pooled.close()


__all__ = ["Batch", "Query", "UnsuitableDatabase", "among", "begin", "check"]
