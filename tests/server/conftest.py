"""Fixtures: a real ``starfever serve`` process (tests/harness.py) on a real database, once on
SQLite and once on PostgreSQL (skipped only when no PostgreSQL answers at ``STARFEVER_TEST_PG``).
Each test module gets its own server on its own fresh database, dropped when the module ends, so
that no module's state can hide or cause another's failure."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import DATABASE_KINDS, DatabaseKind, Databases, Server, start_server


@pytest.fixture(scope="session")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    """This session's databases (any left at the end are dropped)."""
    with Databases(tmp_path_factory.mktemp("db")) as made:
        yield made


def skip_unless_available(databases: Databases, kind: DatabaseKind) -> None:
    """Skip the test when ``kind`` is PostgreSQL and none answers."""
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url} (STARFEVER_TEST_PG)")


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(request: pytest.FixtureRequest, databases: Databases,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The module's server of a database kind, in test mode, on a database of its own (the
    reality check's own test starts a server with a short interval: a due check stops
    spins)."""
    kind: DatabaseKind = request.param
    skip_unless_available(databases, kind)
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"server-{kind}"))
    with started:
        yield started
    databases.drop(started.database_url)


@pytest.fixture(params=DATABASE_KINDS)
def db_kind(request: pytest.FixtureRequest, databases: Databases) -> DatabaseKind:
    """A database kind, for tests that start their own server."""
    kind: DatabaseKind = request.param
    skip_unless_available(databases, kind)
    return kind
