"""The reference operator wallet (tests/harness.py's :class:`OperatorWallet`) for a module, and
operator mode's fixtures for the test_operator_mode*.py modules (a module that defines its own
``wallet``, ``databases`` or ``server`` uses its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import (
    DATABASE_KINDS,
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    operator_mode_args,
    operator_mode_env,
    start_server,
)
from tests.harness import OPERATOR_SECRET as SECRET
from tests.seamless.operator_mode import TIMEOUT_S

__all__ = ["SECRET", "OperatorWallet"]


@pytest.fixture(scope="module")
def operator_wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    """A reference wallet for the module."""
    wallet = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield wallet
    wallet.stop()


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    """The module's reference wallet for operator mode's tests."""
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    with Databases(tmp_path_factory.mktemp("db")) as made:
        yield made


@pytest.fixture(params=DATABASE_KINDS)
def kind(request: pytest.FixtureRequest, databases: Databases) -> DatabaseKind:
    """A database kind, for tests that start their own server."""
    chosen: DatabaseKind = request.param
    if chosen == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    return chosen


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server in operator mode on a fresh database of each kind, for the module."""
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"operator-{kind}"),
                           operator_mode_env(wallet, timeout=TIMEOUT_S),
                           args=operator_mode_args(wallet))
    with started:
        yield started
    databases.drop(started.database_url)
