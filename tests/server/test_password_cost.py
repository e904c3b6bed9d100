"""A password hash costs 64 MiB and three passes of argon2id (``services.auth``) unless a test
server asks for cheap ones (``STARFEVER_TEST_CHEAP_PASSWORD_HASHES``, ADR 0045), which nothing
but test mode in development accepts. In process: the stored hash records its own cost."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import argon2
import pytest
from argon2.exceptions import VerifyMismatchError
from sqlalchemy import select

from starfever.server.db import Database, migrate
from starfever.server.models import Account
from starfever.server.services import auth
from starfever.server.settings import Settings, SettingsError, settings_from_env
from starfever.server.spin.wallets import LedgerWallet
from tests.harness import SECRET, audit_key_file

PRODUCTION_COST = "$argon2id$v=19$m=65536,t=3,p=4$"
CHEAP_COST = "$argon2id$v=19$m=1024,t=1,p=1$"
CHEAP = {"STARFEVER_TEST_MODE": "1", "STARFEVER_TEST_CHEAP_PASSWORD_HASHES": "1"}


def test_cheap_password_hashes_are_refused_outside_test_mode_in_development() -> None:
    says = ("STARFEVER_TEST_CHEAP_PASSWORD_HASHES is accepted only with STARFEVER_TEST_MODE=1 "
            "in development")
    production = {"STARFEVER_ENV": "production", "STARFEVER_SECRET_KEY": SECRET,
                  "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
                  "STARFEVER_APPROVED_MODELS": "0" * 64}
    for env in ({"STARFEVER_TEST_CHEAP_PASSWORD_HASHES": "1"},
                {**production, "STARFEVER_TEST_CHEAP_PASSWORD_HASHES": "1"},
                {**production, "STARFEVER_TEST_MODE": "0",
                 "STARFEVER_TEST_CHEAP_PASSWORD_HASHES": "1"}):
        with pytest.raises(SettingsError) as refused:
            settings_from_env(env)
        assert str(refused.value) == says
    assert settings_from_env(CHEAP).test_cheap_password_hashes is True
    assert settings_from_env({}).test_cheap_password_hashes is False  # the default


def _stored_hash(db: Database, settings: Settings, name: str) -> str:
    auth.register(db, LedgerWallet(), name, "password-1", settings=settings,
                  birth_date=date(1990, 1, 1))
    with db.read() as session:
        return str(session.scalar(select(Account.password_hash)
                                  .where(Account.username == name)))


@pytest.mark.slow  # seconds: eight hashes and checks at the full cost
def test_a_password_hash_costs_64_mib_and_three_passes_unless_a_test_server_asks(
        tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'cost.db'}")
    try:
        migrate(db)
        cheap = settings_from_env(CHEAP)
        assert _stored_hash(db, Settings(), "real").startswith(PRODUCTION_COST)
        assert _stored_hash(db, cheap, "test").startswith(CHEAP_COST)
        # the setting without test mode in development (made unchecked) changes nothing
        for unchecked in (Settings(test_cheap_password_hashes=True),
                          Settings(test_cheap_password_hashes=True, test_mode=True,
                                   environment="production")):
            assert _stored_hash(db, unchecked, f"u{len(unchecked.environment)}").startswith(
                PRODUCTION_COST)
        # each hash is checked at its own cost, whichever setting checks it
        for settings in (Settings(), cheap):
            for name in ("real", "test"):
                assert auth.check_password(db, name, "password-1", settings)[0] is not None
                assert auth.check_password(db, name, "password-2", settings) == (None, None)
            assert auth.check_password(db, "nobody", "password-1", settings) == (None, None)
    finally:
        db.dispose()


def test_the_unknown_name_hashes_record_their_hashers_cost() -> None:
    """An unknown name is checked against a written-down hash (no import pays for one), which
    must record the cost of the hasher of its settings, so that it costs what a known name's
    check costs; and it must be a well-formed hash that no password opens by accident."""
    for hasher, stored, cost in ((auth._hasher, auth._DUMMY_HASH, PRODUCTION_COST),
                                 (auth._cheap_hasher, auth._CHEAP_DUMMY_HASH, CHEAP_COST)):
        assert stored.startswith(cost)
        recorded = argon2.extract_parameters(stored)
        assert (recorded.type, recorded.version, recorded.time_cost, recorded.memory_cost,
                recorded.parallelism, recorded.hash_len, recorded.salt_len) == (
            hasher.type, argon2.low_level.ARGON2_VERSION, hasher.time_cost,
            hasher.memory_cost, hasher.parallelism, hasher.hash_len, hasher.salt_len)
        assert not hasher.check_needs_rehash(stored)
    assert auth._hasher_of(Settings())[1] == auth._DUMMY_HASH
    assert auth._hasher_of(settings_from_env(CHEAP))[1] == auth._CHEAP_DUMMY_HASH
    with pytest.raises(VerifyMismatchError):  # well formed: checked, and no match
        auth._cheap_hasher.verify(auth._CHEAP_DUMMY_HASH, "password-1")
