"""Rolling upgrades (issue 35 item 4, ADR 0063): an old and a new server on one database while
an installation is upgraded node by node. Every migration since ``EXPAND_ONLY_SINCE`` only
adds (no table, column or index of the revision before it dropped or renamed, no column made
NOT NULL, no NOT NULL column added without a default), on SQLite and on PostgreSQL; a server
of the previous release keeps serving on a database migrated under it to this version's head;
and a server of this version starts on a database a newer release migrated."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from starfever.server.db import alembic_config, head_revision, open_migrated, sqlalchemy_url
from tests.harness import (
    DATABASE_KINDS,
    DatabaseKind,
    Databases,
    Server,
    create_operator,
    expect,
)

EXPAND_ONLY_SINCE = "0017"
"""The first migration written under the expand/contract rule; those before it may drop."""
REPOSITORY = Path(__file__).resolve().parents[2]
MIGRATIONS = "starfever/server/migrations/versions"


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with Databases(tmp_path_factory.mktemp("db")) as made:
        yield made


@pytest.fixture(params=DATABASE_KINDS)
def kind(request: pytest.FixtureRequest, databases: Databases) -> DatabaseKind:
    chosen: DatabaseKind = request.param
    if chosen == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    return chosen


def _schema(url: str) -> dict[str, dict[str, Any]]:
    """Each table's columns (nullable, has a default) and index names."""
    engine = create_engine(sqlalchemy_url(url))
    try:
        found = inspect(engine)
        return {table: {
            "columns": {c["name"]: (c["nullable"], c.get("default") is not None)
                        for c in found.get_columns(table)},
            "indexes": {i["name"] for i in found.get_indexes(table)}}
            for table in found.get_table_names() if table != "alembic_version"}
    finally:
        engine.dispose()


def _only_adds(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """What ``after`` takes away from ``before`` or demands of a writer that knows only
    ``before``."""
    wrong = [f"table {t} dropped" for t in before if t not in after]
    for table, old in before.items():
        new = after.get(table)
        if new is None:
            continue
        for column, (nullable, _) in old["columns"].items():
            if column not in new["columns"]:
                wrong.append(f"column {table}.{column} dropped or renamed")
            elif nullable and not new["columns"][column][0]:
                wrong.append(f"column {table}.{column} made NOT NULL")
        for column, (nullable, default) in new["columns"].items():
            if column not in old["columns"] and not nullable and not default:
                wrong.append(f"column {table}.{column} added NOT NULL without a default")
        wrong += [f"index {i} on {table} dropped" for i in old["indexes"] - new["indexes"]]
    return wrong


def test_every_migration_since_the_rule_only_adds(kind: DatabaseKind,
                                                  databases: Databases) -> None:
    """Each revision from ``EXPAND_ONLY_SINCE`` to head against the one before it: a server
    of the revision before can still write and read everything it knows."""
    url = databases.new(kind)
    config = alembic_config(url)
    script = ScriptDirectory.from_config(config)
    chain = [r.revision for r in reversed(list(script.walk_revisions()))]
    start = chain.index(EXPAND_ONLY_SINCE)
    try:
        command.upgrade(config, chain[start - 1])
        before = _schema(url)
        for revision in chain[start:]:
            command.upgrade(config, revision)
            after = _schema(url)
            assert _only_adds(before, after) == [], revision
            before = after
        assert chain[-1] == head_revision()
    finally:
        databases.drop(url)


def _previous_release(directory: Path) -> Path:
    """The package as it was when the revision before head was added (git), unpacked into
    ``directory``: code written for the previous schema."""
    if shutil.which("git") is None or not (REPOSITORY / ".git").exists():
        pytest.skip("needs the git history of the repository")
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    previous = script.get_revision(head_revision()).down_revision
    path = script.get_revision(str(previous)).path
    relative = Path(path).resolve().relative_to(REPOSITORY)
    commit = subprocess.run(["git", "log", "-1", "--format=%H", "--diff-filter=A", "--",
                             str(relative)], cwd=REPOSITORY, capture_output=True, text=True,
                            check=True).stdout.strip()
    if not commit:
        pytest.skip(f"{relative} is not committed yet")
    archive = subprocess.run(["git", "archive", commit, "starfever"], cwd=REPOSITORY,
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(directory, filter="data")
    return directory


@pytest.mark.slow
def test_a_previous_release_server_serves_on_through_the_upgrade(
        databases: Databases, tmp_path: Path) -> None:
    """The rolling upgrade's order: a server of the previous release runs on its schema; the
    new release migrates the database under it (its first node's start); the old server goes
    on playing, showing rounds and being ready. On PostgreSQL only: an installation of
    several nodes shares one (the schema check above covers SQLite too)."""
    if not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    old_code = _previous_release(tmp_path / "previous")
    url = databases.new("postgresql")
    secret = create_operator(url)  # (migrates with this version's code: to head)
    # start again from the previous schema: down to the revision before head
    config = alembic_config(url)
    previous = ScriptDirectory.from_config(config).get_revision(head_revision()).down_revision
    command.downgrade(config, str(previous))
    old = Server(url, tmp_path / "old.log", {"PYTHONPATH": str(old_code)})
    old.operator_totp = secret
    try:
        with old.start():
            _name, token = old.player(deposit=1_000)
            expect(old.spin(token), 201)
            open_migrated(url).dispose()  # the new release's first node migrates to head
            engine = create_engine(sqlalchemy_url(url))
            with engine.connect() as conn:
                assert conn.execute(text("SELECT version_num FROM alembic_version")
                                    ).scalar_one() == head_revision()
            engine.dispose()
            for _ in range(3):
                expect(old.spin(token), 201)  # the old node plays on the new schema
            rounds = expect(old.call("GET", "/rounds", token), 200).json()["rounds"]
            assert len(rounds) == 4
            assert old.http.get(f"{old.url}/readyz").status_code == 200
    finally:
        databases.drop(url)


def test_a_database_a_newer_release_migrated_is_served_unchanged(
        databases: Databases) -> None:
    """During a rolling upgrade a node of this version may restart after a newer one
    migrated: it starts, leaves the schema as it is, and says so."""
    url = databases.new("sqlite")
    try:
        open_migrated(url).dispose()
        engine = create_engine(sqlalchemy_url(url))
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        open_migrated(url).dispose()
        with engine.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")
                                ).scalar_one() == "9999"
        engine.dispose()
    finally:
        databases.drop(url)
