"""A password hash costs 64 MiB and three passes of argon2id (``services.auth``) unless a test
server asks for cheap ones (``STARFEVER_TEST_CHEAP_PASSWORD_HASHES``, ADR 0045), which nothing
but test mode in development accepts. In process: the stored hash records its own cost."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
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


@pytest.mark.parametrize(("env", "deferred"), [
    ({}, False),
    ({"STARFEVER_TEST_MODE": "1"}, False),
    ({"STARFEVER_TEST_CHEAP_PASSWORD_HASHES": "1"}, False),
    ({**CHEAP, "STARFEVER_ENV": "production"}, False),
    (CHEAP, True),
])
def test_only_a_cheap_test_server_makes_its_unknown_name_hash_on_first_use(
        env: dict[str, str], deferred: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any other process makes the full-cost hash an unknown name is checked against when it
    imports ``services.auth``, so no request waits for it (a test server saves 0.3 CPU s)."""
    for name in ("STARFEVER_ENV", *CHEAP):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert auth._cheap_test_process() is deferred
