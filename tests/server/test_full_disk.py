"""A full disk is ``503 storage_full`` with ``Retry-After``, never ``500 internal_error``, and
nothing of the refused request is saved; once there is room again the same server serves on.

In process, on a real database of each kind (a real server process would add nothing: the
answer is the app's). SQLite's disk is made full by SQLite itself: every connection the app
takes is capped at the pages the file already has (``PRAGMA max_page_count``), so a write that
needs a new page fails with SQLite's own ``SQLITE_FULL`` ("database or disk is full").
PostgreSQL's disk cannot be filled by a test: the database raises its own ``disk_full`` error
(SQLSTATE 53100, what it raises when it cannot extend a file) on every new ledger row."""

from __future__ import annotations

import errno
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from starfever.server.api.errors import answer, storage_full
from starfever.server.app import create_app
from starfever.server.db import CommitUnknown
from tests.harness import (
    ADULT_BIRTH_DATE,
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    PLAYER_PASSWORD,
    DatabaseKind,
    Databases,
    create_operator,
    expect,
    operator_log_in,
    settings_like_servers,
    unique_name,
)
from tests.server.helpers import books

API = "http://testserver/api/v1"


def _cap_sqlite(engine: Engine) -> Any:
    """Cap every connection the engine hands out at the file's present size."""

    def cap(dbapi_connection: Any, *_: Any) -> None:
        dbapi_connection.execute("PRAGMA max_page_count = 1")  # = the present page count

    event.listen(engine, "checkout", cap)
    return cap


def _fill(kind: DatabaseKind, url: str, engine: Engine) -> Any:
    if kind == "sqlite":
        return _cap_sqlite(engine)
    with engine.begin() as conn:
        conn.execute(text(
            "CREATE FUNCTION starfever_test_disk_full() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'could not extend file: No space left on device' "
            "USING ERRCODE = 'disk_full'; END $$ LANGUAGE plpgsql"))
        conn.execute(text("CREATE TRIGGER starfever_test_disk_full BEFORE INSERT ON "
                          "ledger_entries FOR EACH ROW EXECUTE FUNCTION "
                          "starfever_test_disk_full()"))
    return None


def _free(kind: DatabaseKind, engine: Engine, cap: Any) -> None:
    if kind == "sqlite":
        event.remove(engine, "checkout", cap)
        engine.dispose()  # new connections: no cap
        return
    with engine.begin() as conn:
        conn.execute(text("DROP TRIGGER starfever_test_disk_full ON ledger_entries"))
        conn.execute(text("DROP FUNCTION starfever_test_disk_full()"))


@pytest.fixture
def app_client(db_kind: DatabaseKind, databases: Databases) -> Iterator[tuple[TestClient, str]]:
    url = databases.new(db_kind)
    totp = create_operator(url)
    app = create_app(replace(settings_like_servers(url), registrations_per_address=1_000))
    with TestClient(app, raise_server_exceptions=False) as client:
        operator = expect(operator_log_in(client, API, OPERATOR_USERNAME, OPERATOR_PASSWORD,
                                          totp), 201).json()["token"]
        yield client, operator
    databases.drop(url)


def _refused_as_full(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "storage_full"
    assert "storage is full" in response.json()["error"]["message"]
    assert response.headers["Retry-After"] == "60"


def test_a_full_disk_is_503_storage_full_never_500_and_saves_nothing(
        db_kind: DatabaseKind, app_client: tuple[TestClient, str]) -> None:
    client, operator = app_client
    context = client.app.state.context  # type: ignore[attr-defined]
    name = unique_name("full")
    expect(client.post(f"{API}/players", json={
        "username": name, "password": PLAYER_PASSWORD, "birth_date": ADULT_BIRTH_DATE}), 201)
    op = {"Authorization": f"Bearer {operator}"}
    expect(client.post(f"{API}/players/{name}/deposits", json={"amount": 10_000},
                       headers={**op, "Idempotency-Key": uuid.uuid4().hex}), 201)
    token = expect(client.post(f"{API}/sessions", json={
        "username": name, "password": PLAYER_PASSWORD}), 201).json()["token"]
    me = {"Authorization": f"Bearer {token}"}

    def spin() -> httpx.Response:
        return client.post(f"{API}/spins", json={"line_bet": 1},
                           headers={**me, "Idempotency-Key": uuid.uuid4().hex})

    def balance() -> int:
        return int(expect(client.get(f"{API}/wallet", headers=me), 200).json()["balance"])

    expect(spin(), 201)
    engine = context.db.write_engine
    cap = _fill(db_kind, context.settings.database_url, engine)
    try:
        for _ in range(300):  # SQLite: until the free room in the file's pages is used up
            before = balance()
            answered = spin()
            if answered.status_code != 201:
                break
        _refused_as_full(answered)
        assert balance() == before  # the refused spin took no bet
        for _ in range(300):
            key = uuid.uuid4().hex
            deposit = client.post(f"{API}/players/{name}/deposits", json={"amount": 100},
                                  headers={**op, "Idempotency-Key": key})
            if deposit.status_code != 201:
                break
        _refused_as_full(deposit)
        expect(client.get(f"{API}/players/{name}/deposits/{key}", headers=op), 404)
    finally:
        _free(db_kind, engine, cap)
    expect(spin(), 201)  # room again: the same server serves on
    sums = books(engine)
    assert sums["wallets_stored"] == sums["wallet"]


def test_storage_full_is_told_from_the_error_or_its_causes() -> None:
    import sqlite3

    full = sqlite3.connect(":memory:")
    full.execute("CREATE TABLE t (x BLOB)")
    full.execute("PRAGMA max_page_count = 1")
    with pytest.raises(sqlite3.OperationalError) as raised:
        full.execute("INSERT INTO t VALUES (zeroblob(100000))")
    assert storage_full(raised.value)
    try:
        raise CommitUnknown("the database failed during COMMIT") from raised.value
    except CommitUnknown as wrapped:
        assert storage_full(wrapped) and answer(wrapped).status_code == 503
    assert storage_full(OSError(errno.ENOSPC, "No space left on device"))
    assert not storage_full(OSError(errno.EACCES, "Permission denied"))
    assert not storage_full(sqlite3.OperationalError("database is locked"))
    assert answer(RuntimeError("something else")).status_code == 500
