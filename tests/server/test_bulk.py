"""``bulk.insert_rows`` and ``bulk.update_rows`` (ADR 0026) store exactly what one statement per
row stores, on real SQLite and PostgreSQL: the same values, awkward strings included, ids in the
rows' order, and a repeated key refused before anything is sent."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    bindparam,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError

from starfever.server.db import Database
from starfever.server.models import UtcDateTime
from starfever.server.services import bulk
from tests.harness import DatabaseKind, Databases

AWKWARD = ['plain', 'a "quoted" word', "back\\slash", "", "NULL", "{,}", 'end\\', "ünï ☆",
           '{"json": [1, "x"]}', "new\nline", None]
"""Strings that an array literal must quote or escape (and a None)."""


def _table(metadata: MetaData, name: str) -> Table:
    return Table(name, metadata,
                 Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
                 Column("label", String(64)), Column("body", Text), Column("amount", BigInteger),
                 Column("small", SmallInteger), Column("flag", Boolean),
                 Column("at", UtcDateTime))


@pytest.fixture
def tables(databases: Databases, db_kind: DatabaseKind) -> Iterator[tuple[Database, Table, Table]]:
    url = databases.new(db_kind)
    db = Database(url)
    metadata = MetaData()
    made = _table(metadata, "bulk_rows"), _table(metadata, "core_rows")
    metadata.create_all(db.write_engine)
    try:
        yield db, *made
    finally:
        db.dispose()
        databases.drop(url)


def _rows() -> list[dict[str, Any]]:
    at = datetime(2026, 12, 2, 1, 2, 3, 456789, tzinfo=UTC)
    return [{"label": AWKWARD[k % len(AWKWARD)], "body": AWKWARD[(3 * k) % len(AWKWARD)],
             "amount": None if k % 7 == 3 else (-1) ** k * 2 ** (k + 20),
             "small": k, "flag": None if k % 5 == 4 else k % 2 == 0,
             "at": at + timedelta(microseconds=k)} for k in range(23)]


def _stored(db: Database, table: Table) -> list[tuple[Any, ...]]:
    with db.read_engine.connect() as conn:
        return [tuple(row) for row in conn.execute(select(table).order_by(table.c.id))]


def test_insert_rows_stores_what_one_insert_a_row_stores(
        tables: tuple[Database, Table, Table]) -> None:
    db, bulk_rows, core_rows = tables
    rows = _rows()
    with db.write_connection() as conn, db.pipelined(conn):
        bulk.insert_rows(conn, bulk_rows, rows)
    with db.write_connection() as conn:
        for row in rows:
            conn.execute(insert(core_rows), row)
    stored = _stored(db, bulk_rows)
    assert stored == _stored(db, core_rows)
    assert [row[0] for row in stored] == list(range(1, len(rows) + 1))  # ids in the rows' order
    assert [row[1] for row in stored] == [row["label"] for row in rows]
    assert stored[0][6] == rows[0]["at"]  # the microseconds, read back aware


def test_update_rows_changes_each_keyed_row_as_one_update_a_row_does(
        tables: tuple[Database, Table, Table]) -> None:
    db, bulk_rows, core_rows = tables
    rows = _rows()
    with db.write_connection() as conn:
        conn.execute(insert(bulk_rows), rows)
        conn.execute(insert(core_rows), rows)
    later = datetime(2027, 1, 1, tzinfo=UTC)
    changes = [{"id": k, "amount": 10 * k, "body": AWKWARD[k % len(AWKWARD)], "at": later}
               for k in (2, 5, 11, 17, 23)]
    with db.write_connection() as conn, db.pipelined(conn):
        bulk.update_rows(conn, bulk_rows, "id", changes,
                         {"amount": "coalesce(bulk_rows.amount, 0) + {amount}"})
    with db.write_connection() as conn:
        conn.execute(update(core_rows).where(core_rows.c.id == bindparam("k")).values(
            amount=func.coalesce(core_rows.c.amount, 0) + bindparam("a"),
            body=bindparam("b"), at=bindparam("t")),
            [{"k": c["id"], "a": c["amount"], "b": c["body"], "t": c["at"]} for c in changes])
    assert _stored(db, bulk_rows) == _stored(db, core_rows)


def test_a_key_twice_is_refused_and_nothing_is_written(
        tables: tuple[Database, Table, Table]) -> None:
    db, bulk_rows, _ = tables
    with db.write_connection() as conn:
        conn.execute(insert(bulk_rows), _rows())
    before = _stored(db, bulk_rows)
    with pytest.raises(ValueError, match=r"one bulk_rows\.id in two rows"), \
            db.write_connection() as conn:
        bulk.update_rows(conn, bulk_rows, "id", [{"id": 1, "small": 7}, {"id": 1, "small": 8}])
    assert _stored(db, bulk_rows) == before


@pytest.mark.parametrize("how", ["insert", "update"])
def test_a_value_too_long_for_its_column_is_refused_as_one_statement_a_row_refuses_it(
        tables: tuple[Database, Table, Table], db_kind: DatabaseKind, how: str) -> None:
    """Not cut to the column's length (an explicit cast to ``varchar(64)[]`` would cut it):
    PostgreSQL refuses it and nothing of the statement is stored; SQLite, which has no
    lengths, stores it whole both ways."""
    db, bulk_rows, core_rows = tables
    rows = _rows()
    with db.write_connection() as conn:
        conn.execute(insert(bulk_rows), rows)
        conn.execute(insert(core_rows), rows)
    long = "x" * 65  # label is String(64)
    outcomes = []
    for table in (bulk_rows, core_rows):
        try:
            with db.write_connection() as conn, db.pipelined(conn):
                if table is bulk_rows and how == "insert":
                    bulk.insert_rows(conn, table, [{**rows[0], "label": "short"},
                                                   {**rows[1], "label": long}])
                elif table is bulk_rows:
                    bulk.update_rows(conn, table, "id", [{"id": 1, "label": "short"},
                                                         {"id": 2, "label": long}])
                elif how == "insert":
                    conn.execute(insert(table), [{**rows[0], "label": "short"},
                                                 {**rows[1], "label": long}])
                else:
                    conn.execute(update(table).where(table.c.id == bindparam("k"))
                                 .values(label=bindparam("v")),
                                 [{"k": 1, "v": "short"}, {"k": 2, "v": long}])
            outcomes.append("stored")
        except DBAPIError as error:
            assert "too long" in str(error)
            outcomes.append("refused")
    assert outcomes == (["refused"] * 2 if db_kind == "postgresql" else ["stored"] * 2)
    assert _stored(db, bulk_rows) == _stored(db, core_rows)


def test_array_literal_quotes_what_the_array_syntax_needs() -> None:
    assert bulk.array_literal([1, None, -3]) == "{1,NULL,-3}"
    assert bulk.array_literal([True, False, None]) == "{t,f,NULL}"
    assert bulk.array_literal(['a "b"', "c\\d", "", "NULL", None]) == \
        '{"a \\"b\\"","c\\\\d","","NULL",NULL}'
    assert bulk.array_literal([datetime(2026, 1, 2, 3, 4, 5, 6)]) == \
        '{"2026-01-02 03:04:05.000006"}'
    with pytest.raises(TypeError, match="no literal for float"):
        bulk.array_literal([1.5])
    with pytest.raises(TypeError, match="no literal for datetime"):  # aware: not bound yet
        bulk.array_literal([datetime(2026, 1, 2, tzinfo=UTC)])
