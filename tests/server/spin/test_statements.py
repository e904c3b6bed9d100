"""A batch's bulk writes (``bulk``, ADR 0026, sent by ``batch``, ADR 0027) store exactly what one
statement per row stores, on real SQLite and PostgreSQL: the same values, awkward strings
included (bound on the client on PostgreSQL), ids in the rows' order, and a repeated key refused
before anything is sent."""

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
from starfever.server.spin import statements as bulk
from starfever.server.spin.transaction import among, begin
from tests.harness import DatabaseKind, Databases

AWKWARD = ['plain', 'a "quoted" word', "back\\slash", "", "NULL", "{,}", 'end\\', "ünï ☆",
           '{"json": [1, "x"]}', "new\nline", None, "it's", "100%s %(x)s", "a; DROP TABLE x; --"]
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
    with begin(db) as txn:
        txn.insert(bulk_rows, rows)
        txn.commit()
    with db.write_engine.begin() as conn:
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
    with db.write_engine.begin() as conn:
        conn.execute(insert(bulk_rows), rows)
        conn.execute(insert(core_rows), rows)
    later = datetime(2027, 1, 1, tzinfo=UTC)
    changes = [{"id": k, "amount": 10 * k, "body": AWKWARD[k % len(AWKWARD)], "at": later}
               for k in (2, 5, 11, 17, 23)]
    with begin(db) as txn:
        txn.update(bulk_rows, "id", changes,
                   {"amount": "coalesce(bulk_rows.amount, 0) + {amount}"})
        txn.commit()
    with db.write_engine.begin() as conn:
        conn.execute(update(core_rows).where(core_rows.c.id == bindparam("k")).values(
            amount=func.coalesce(core_rows.c.amount, 0) + bindparam("a"),
            body=bindparam("b"), at=bindparam("t")),
            [{"k": c["id"], "a": c["amount"], "b": c["body"], "t": c["at"]} for c in changes])
    assert _stored(db, bulk_rows) == _stored(db, core_rows)


def test_a_key_twice_is_refused_and_nothing_is_written(
        tables: tuple[Database, Table, Table]) -> None:
    db, bulk_rows, _ = tables
    with db.write_engine.begin() as conn:
        conn.execute(insert(bulk_rows), _rows())
    before = _stored(db, bulk_rows)
    with pytest.raises(ValueError, match=r"one bulk_rows\.id in two rows"), begin(db) as txn:
        txn.update(bulk_rows, "id", [{"id": 2, "small": 9}])
        txn.update(bulk_rows, "id", [{"id": 1, "small": 7}, {"id": 1, "small": 8}])
        txn.commit()
    assert _stored(db, bulk_rows) == before


@pytest.mark.parametrize("how", ["insert", "update"])
def test_a_value_too_long_for_its_column_is_refused_as_one_statement_a_row_refuses_it(
        tables: tuple[Database, Table, Table], db_kind: DatabaseKind, how: str) -> None:
    """Not cut to the column's length (an explicit cast to ``varchar(64)[]`` would cut it):
    PostgreSQL refuses it and nothing of the statement is stored; SQLite, which has no
    lengths, stores it whole both ways."""
    db, bulk_rows, core_rows = tables
    rows = _rows()
    with db.write_engine.begin() as conn:
        conn.execute(insert(bulk_rows), rows)
        conn.execute(insert(core_rows), rows)
    long = "x" * 65  # label is String(64)
    outcomes = []
    for table in (bulk_rows, core_rows):
        try:
            if table is bulk_rows:
                with begin(db) as txn:
                    if how == "insert":
                        txn.insert(table, [{**rows[0], "label": "short"},
                                           {**rows[1], "label": long}])
                    else:
                        txn.update(table, "id", [{"id": 1, "label": "short"},
                                                 {"id": 2, "label": long}])
                    txn.commit()
                outcomes.append("stored")
                continue
            with db.write_engine.begin() as conn:
                if how == "insert":
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
    with begin(db) as txn:  # the refused batch was rolled back and its connection goes on,
        if how == "insert":  # the same statement prepared again where it is needed
            txn.insert(bulk_rows, [{**rows[0], "label": "short"}, {**rows[1], "label": "after"}])
        else:
            txn.update(bulk_rows, "id", [{"id": 1, "label": "short"}, {"id": 2, "label": "after"}])
        txn.commit()
    assert [row[1] for row in _stored(db, bulk_rows)].count("after") == 1


def test_a_batch_reads_its_books_in_order_as_the_columns_read_them(
        tables: tuple[Database, Table, Table], db_kind: DatabaseKind) -> None:
    """``Batch.fetch``: every read's rows, in the order asked (one message on PostgreSQL),
    named by column, timestamps read back aware; a batch not committed writes nothing."""
    db, bulk_rows, _ = tables
    rows = _rows()
    with db.write_engine.begin() as conn:
        conn.execute(insert(bulk_rows), rows)
    postgres = db_kind == "postgresql"
    by_ids = select(bulk_rows.c.id, bulk_rows.c.label, bulk_rows.c.at).where(
        among(bulk_rows.c.id, "ids", postgres=postgres)).order_by(bulk_rows.c.id)
    by_label = select(bulk_rows.c.id).where(among(bulk_rows.c.label, "ids", postgres=postgres))
    with begin(db) as txn:
        found = txn.fetch([(by_ids, {"ids": [3, 1]}), (by_label, {"ids": ["it's", "none"]}),
                           (by_ids, {"ids": [99]})])
        txn.update(bulk_rows, "id", [{"id": 1, "label": "not committed"}])
    first, second, third = found
    assert [(r.id, r.label, r.at) for r in first] == [
        (1, rows[0]["label"], rows[0]["at"]), (3, rows[2]["label"], rows[2]["at"])]
    assert first[0].at.tzinfo is not None
    assert sorted(r.id for r in second) == [k + 1 for k, row in enumerate(rows)
                                            if row["label"] == "it's"]
    assert third == []
    assert _stored(db, bulk_rows)[0][1] == rows[0]["label"]


def test_array_literal_quotes_what_the_array_syntax_needs() -> None:
    assert bulk.array_literal([1, None, -3]) == "{1,NULL,-3}"
    assert bulk.array_literal([True, False, None]) == "{t,f,NULL}"
    assert bulk.array_literal(['a "b"', "c\\d", "", "NULL", None]) == \
        '{"a \\"b\\"","c\\\\d","","NULL",NULL}'
    assert bulk.array_literal([datetime(2026, 1, 2, 3, 4, 5, 6)]) == \
        '{"2026-01-02 03:04:05.000006"}'
    assert bulk.array_literal([]) == "{}"

    class Code(str):
        pass

    class Count(int):
        pass

    assert bulk.array_literal([Count(7), Code('x"y')]) == '{7,"x\\"y"}'  # subclasses as theirs
    with pytest.raises(TypeError, match="no literal for float"):
        bulk.array_literal([1.5])
    with pytest.raises(TypeError, match="no literal for datetime"):  # aware: not bound yet
        bulk.array_literal([datetime(2026, 1, 2, tzinfo=UTC)])
