"""The server's one clock (ADR 0041): the time rules read it, a test moves it, and no
production server can be told what time it is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest

from starfever.engine.model import load_model
from starfever.server.services import pacing
from starfever.server.services.errors import TooManyRequests, utcnow
from starfever.server.settings import SettingsError, settings_from_env
from tests.harness import audit_key_file, free_port, run_cli


def test_a_test_moves_and_freezes_the_clock_in_process(clock: ModuleType) -> None:
    before = datetime.now(UTC)
    clock.advance(3600)
    moved = utcnow()
    assert timedelta(hours=1) <= moved - before < timedelta(hours=1, seconds=30)
    instant = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert clock.freeze(instant) == instant
    assert utcnow() == instant == clock.now()
    clock.advance(2.5)
    assert utcnow() == instant + timedelta(seconds=2.5)
    assert pacing.now_ms() == int(instant.timestamp() * 1000) + 2500
    with pytest.raises(ValueError, match="aware datetime"):
        clock.freeze(datetime(2030, 1, 1))
    clock.reset()
    assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=30)


def test_a_test_server_follows_its_clock_file(clock: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "clock"
    clock.follow_file(str(path))
    try:
        assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=30)  # no file: no shift
        clock.write_shift(path, 72 * 3600)
        assert utcnow() - datetime.now(UTC) > timedelta(hours=71, minutes=59)
        clock.write_shift(path, -90)
        assert datetime.now(UTC) - utcnow() > timedelta(seconds=89)
        assert not list(tmp_path.glob("*.tmp"))  # replaced in one step
    finally:
        clock.follow_file(None)
    assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=30)


def test_pacing_reads_the_clock(clock: ModuleType, tmp_path: Path) -> None:
    """The market's minimum round duration measured on the moved clock: a spin 100 ms too
    early is refused, one on time passes (the rule's own tests run on real servers)."""
    from starfever.server.db import Database, migrate
    from starfever.server.models import Account

    db = Database(f"sqlite:///{tmp_path}/pacing.db")
    try:
        migrate(db)
        with db.write() as session:
            account = Account(username="paced", password_hash="x", role="player",
                              created_at=clock.freeze())
            session.add(account)
            session.flush()
            account_id = account.id
        assert pacing.claim(db, account_id, "first", 2_500) is not None
        clock.advance(2.4)
        with pytest.raises(TooManyRequests) as early:
            pacing.claim(db, account_id, "second", 2_500)
        assert early.value.code == pacing.ROUND_TOO_SOON
        clock.advance(0.1)
        assert pacing.claim(db, account_id, "second", 2_500) is not None
    finally:
        db.dispose()


PRODUCTION = {"STARFEVER_ENV": "production", "STARFEVER_SECRET_KEY": "x" * 32,
              "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
              "STARFEVER_APPROVED_MODELS": load_model("default").sha256}


@pytest.mark.parametrize("env", [{}, {"STARFEVER_TEST_MODE": "0"}, PRODUCTION])
def test_the_clock_file_is_refused_outside_test_mode(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError) as refused:
        settings_from_env({"STARFEVER_TEST_CLOCK_FILE": "/tmp/clock", **env})
    assert str(refused.value) == ("STARFEVER_TEST_CLOCK_FILE is accepted only with "
                                  "STARFEVER_TEST_MODE=1 in development")
    with pytest.raises(SettingsError, match="STARFEVER_TEST_MODE is refused in production"):
        settings_from_env({"STARFEVER_TEST_CLOCK_FILE": "/tmp/clock", **PRODUCTION,
                           "STARFEVER_TEST_MODE": "1"})
    assert settings_from_env({"STARFEVER_TEST_CLOCK_FILE": "/tmp/clock",
                              "STARFEVER_TEST_MODE": "1"}).test_clock_file == "/tmp/clock"


def test_serve_refuses_a_clock_file_without_test_mode_in_one_line(tmp_path: Path) -> None:
    done = run_cli("serve", "--port", str(free_port()), "--database-url",
                   f"sqlite:///{tmp_path}/x.db",
                   env={"STARFEVER_TEST_CLOCK_FILE": str(tmp_path / "clock")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("starfever serve: error: STARFEVER_TEST_CLOCK_FILE is "
                                   "accepted only with STARFEVER_TEST_MODE=1 in development")
