"""Many rows in one statement (ADR 0026): the settler's and the wallet books' writes.

psycopg's ``executemany`` sends one Bind/Execute per row and, in pipeline mode, polls the
socket after each: a batch of 40 spins wrote about 250 rows that way (rounds, ledger entries,
wallet and net-result updates), and that per-row traffic was the largest part of the settler's
CPU. On PostgreSQL the rows go instead as one array per column, in ONE statement each:

- :func:`insert_sql`: ``INSERT ... SELECT ... FROM unnest(arrays) WITH ORDINALITY ORDER BY``
  the row's position, so ids from a sequence follow the rows' order, as with one ``INSERT``
  per row (the ledger's continuity check reads entries in id order);
- :func:`update_sql`: ``UPDATE ... FROM unnest(arrays)`` matched on a key that must be
  unique among the rows (each target row is changed once, by its own row; a repeated key is
  refused before anything is sent).

``transaction`` sends them (ADR 0027: all of a batch's writes and its ``COMMIT`` in one message).

The same values are stored: each column's values are converted as its type binds them
(``UtcDateTime``), written as one PostgreSQL array literal (:func:`array_literal`: a join in C,
where psycopg's list dumper escapes each element with a regular expression) and cast to an
array of the column's type, strings to ``text[]``: an explicit cast to ``varchar(n)[]`` would
cut a value that is too long, where storing it in the column refuses it, as before. On
SQLite, which has no round trips, the rows go one statement each (:func:`insert_rows`,
:func:`update_rows`: ``executemany``), as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Dialect, String, Table, TypeDecorator, insert

_VALUE = re.compile(r"\{(\w+)\}")
"""``{name}`` in an assignment: the row's value of column ``name``."""


def _quoted(value: str) -> str:
    """A string as an element of an array literal: double-quoted, ``\\`` and ``"`` escaped."""
    if "\\" in value or '"' in value:
        value = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + value + '"'


def _element(value: Any) -> str:
    """One element of an array literal (see :func:`array_literal`)."""
    kind = type(value)
    if kind is str:
        return _quoted(value)
    if kind is int:
        return str(value)
    if value is None:
        return "NULL"
    if kind is bool:
        return "t" if value else "f"
    if kind is datetime and value.tzinfo is None:
        return '"' + value.isoformat(" ") + '"'
    if isinstance(value, int):  # a subclass of int (bool is handled above)
        return str(int(value))
    if isinstance(value, str):
        return _quoted(str(value))
    raise TypeError(f"array_literal: no literal for {kind.__name__}")


def array_literal(values: Iterable[Any]) -> str:
    """``values`` (ints, strs, bools, naive datetimes or None) as a PostgreSQL array literal:
    ints bare, booleans ``t``/``f``, None ``NULL``, strings and timestamps double-quoted with
    ``\\`` and ``"`` escaped (``{1,NULL}``, ``{"a \\"b\\"","NULL",""}``)."""
    return "{" + ",".join(map(_element, values)) + "}"


def sql_literal(value: Any) -> str:
    """``value`` as a PostgreSQL literal, for a statement's text: ``NULL``, ``TRUE``/``FALSE``,
    an integer, a string in single quotes with each single quote doubled (with
    ``standard_conforming_strings`` on, PostgreSQL's default since 9.1, which ``transaction``
    requires of the server, that is the only character a string literal escapes), or a list
    as its :func:`array_literal` so quoted. Nothing else is taken."""
    if value is None:
        return "NULL"
    if value is True or value is False:
        return "TRUE" if value else "FALSE"
    if type(value) is int:
        return str(value)
    if isinstance(value, str):  # a StrEnum (a call's state) is its value
        if "\x00" in value:
            raise ValueError("sql_literal: a NUL character cannot be stored")
        return "'" + value.replace("'", "''") + "'"
    if type(value) is list:
        return sql_literal(array_literal(value))
    raise TypeError(f"sql_literal: no literal for {type(value).__name__}")


@lru_cache(maxsize=256)
def _processors(table: Table, names: tuple[str, ...],
                dialect: Dialect) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """Per column of ``names``, how it converts a value before binding it (made once per
    table and set of columns, not per batch)."""
    return tuple((name, table.c[name].type.bind_processor(dialect)) for name in names)


def _bound(dialect: Dialect, table: Table, rows: Sequence[Mapping[str, Any]],
           names: tuple[str, ...]) -> list[list[Any]]:
    """Per column of ``names``, the values of ``rows`` as the column binds them."""
    columns = []
    for name, process in _processors(table, names, dialect):
        values = [row[name] for row in rows]
        columns.append(values if process is None else [process(value) for value in values])
    return columns


def _arrays(dialect: Dialect, table: Table, rows: Sequence[Mapping[str, Any]],
            names: tuple[str, ...]) -> dict[str, str]:
    """Per column ``name`` of ``rows``, its values as the column binds them, as one literal."""
    return {name: array_literal(values)
            for name, values in zip(names, _bound(dialect, table, rows, names), strict=True)}


def _array_type(table: Table, name: str, dialect: Dialect) -> str:
    """The array type column ``name``'s values are cast to: the column's type, a string's
    without its length (the column's own length check then applies, with its error)."""
    column_type = table.c[name].type
    base = column_type.impl_instance if isinstance(column_type, TypeDecorator) else column_type
    if isinstance(base, String):
        return "TEXT[]"
    return f"{column_type.compile(dialect=dialect)}[]"


@lru_cache(maxsize=64)
def _insert_sql(table: Table, names: tuple[str, ...], dialect: Dialect) -> str:
    casts = ", ".join(f"%({name})s::{_array_type(table, name, dialect)}" for name in names)
    columns = ", ".join(names)
    return (f"INSERT INTO {table.name} ({columns}) SELECT {columns} FROM unnest({casts}) "
            f"WITH ORDINALITY AS bulk ({columns}, bulk_position) ORDER BY bulk_position")


@lru_cache(maxsize=64)
def _update_sql(table: Table, key: str, names: tuple[str, ...],
                assignments: tuple[tuple[str, str], ...], dialect: Dialect) -> str:
    postgres = dialect.name == "postgresql"
    value = "bulk.{}" if postgres else ":{}"
    sets = {name: value.format(name) for name in names if name != key}
    for column, expression in assignments:
        sets[column] = _VALUE.sub(lambda found: value.format(found.group(1)), expression)
    set_clause = ", ".join(f"{column} = {expression}" for column, expression in sets.items())
    if not postgres:
        return f"UPDATE {table.name} SET {set_clause} WHERE {key} = :{key}"
    casts = ", ".join(f"%({name})s::{_array_type(table, name, dialect)}" for name in names)
    return (f"UPDATE {table.name} SET {set_clause} FROM unnest({casts}) AS bulk "
            f"({', '.join(names)}) WHERE {table.name}.{key} = bulk.{key}")


def _checked_keys(table: Table, key: str, rows: Sequence[Mapping[str, Any]]) -> None:
    keys = [row[key] for row in rows]
    if len(set(keys)) != len(keys):
        raise ValueError(f"update_rows: one {table.name}.{key} in two rows")


def insert_sql(dialect: Dialect, table: Table,
               rows: Sequence[Mapping[str, Any]]) -> tuple[str, dict[str, str]]:
    """PostgreSQL: the one statement that inserts ``rows`` (dicts of column -> value, all with
    the same columns) in their order, and its parameters (one array literal per column)."""
    names = tuple(rows[0])
    return _insert_sql(table, names, dialect), _arrays(dialect, table, rows, names)


def update_sql(dialect: Dialect, table: Table, key: str, rows: Sequence[Mapping[str, Any]],
               assignments: Mapping[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """PostgreSQL: the one statement that updates, per row, the row of ``table`` whose column
    ``key`` equals the row's ``key``, and its parameters.

    ``rows`` are dicts of column -> value, all with the same columns. Each column of a row but
    ``key`` is set to the row's value, unless ``assignments`` gives it an SQL expression, in
    which ``{name}`` is the row's value of column ``name`` and the table's own columns are
    named with the table, e.g. ``{"net_result": "accounts.net_result + {net_result}"}``. A
    key repeated among the rows is refused (:class:`ValueError`) before anything is sent.
    """
    _checked_keys(table, key, rows)
    names = tuple(rows[0])
    return (_update_sql(table, key, names, tuple((assignments or {}).items()), dialect),
            _arrays(dialect, table, rows, names))


def insert_rows(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """SQLite (no round trips): insert ``rows`` in their order, one statement a row."""
    if rows:
        conn.execute(insert(table), list(rows))


def update_rows(conn: Connection, table: Table, key: str, rows: Sequence[Mapping[str, Any]],
                assignments: Mapping[str, str] | None = None) -> None:
    """SQLite (no round trips): :func:`update_sql`'s change, one statement a row."""
    if not rows:
        return
    _checked_keys(table, key, rows)
    names = tuple(rows[0])
    sql = _update_sql(table, key, names, tuple((assignments or {}).items()), conn.dialect)
    columns = _bound(conn.dialect, table, rows, names)
    conn.exec_driver_sql(sql, [dict(zip(names, values, strict=True))
                               for values in zip(*columns, strict=True)])


__all__ = ["array_literal", "insert_rows", "insert_sql", "sql_literal", "update_rows", "update_sql"]
