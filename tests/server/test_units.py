"""In-process checks: settings, the frozen round hash, the OpenAPI document, the CLI."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from starfever.engine.model import load_model
from starfever.engine.rng import SeededSource, SystemRandomSource
from starfever.server.models import OPERATOR, Round
from starfever.server.services.chain import GENESIS_HASH, HASH_FIELDS, round_hash
from starfever.server.settings import DEVELOPMENT_SECRET, SettingsError, settings_from_env
from starfever.server.spin.draw import play_live_or_test
from starfever.sim.rng import KernelSource, chunk_state
from tests.harness import OPERATOR_PASSWORD, SECRET, audit_key_file, run_cli_in_process


def test_production_refuses_the_default_secret() -> None:
    with pytest.raises(SettingsError, match="SECRET_KEY"):
        settings_from_env({"STARFEVER_ENV": "production"})
    with pytest.raises(SettingsError, match="TEST_MODE"):
        settings_from_env({"STARFEVER_ENV": "production", "STARFEVER_SECRET_KEY": SECRET,
                           "STARFEVER_TEST_MODE": "1"})
    ok = settings_from_env({"STARFEVER_ENV": "production", "STARFEVER_SECRET_KEY": SECRET,
                            "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
                            "STARFEVER_APPROVED_MODELS": load_model("default").sha256})
    assert ok.secret_key != DEVELOPMENT_SECRET and not ok.test_mode
    with pytest.raises(SettingsError, match="integer"):
        settings_from_env({"STARFEVER_REALITY_CHECK_SECONDS": "soon"})


def _round() -> Round:
    return Round(id=1, prev_hash=GENESIS_HASH, account_id=7, idempotency_key="k",
                 request_hash="r", model_name="default", model_version="1.0", line_bet=1,
                 total_bet=20, contribution=0, base_win=0, star_wild_win=0,
                 hold_and_cash_win=0, progressive_win=0, total_win=0, feature=None,
                 pool_before=100000, pool_after=100000, pool_refill=0, balance_before=20,
                 balance_after=0, draws="[0,0,0,0,0]", events="[]", test=False,
                 created_at=datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC))


def test_round_hash_is_frozen() -> None:
    """Changing the hashed fields or their order breaks every stored chain: this pins them."""
    assert len(HASH_FIELDS) == 25
    assert round_hash(_round()) == GOLDEN_HASH
    tampered = _round()
    tampered.total_win = 1
    assert round_hash(tampered) != GOLDEN_HASH


GOLDEN_HASH = "276cb67143c6b401b4af850da5166329694758f299a7064078bf2359e8f0022f"


def test_cli_refuses_bad_operator_input(tmp_path: object) -> None:
    done = run_cli_in_process("operator", "create", "Bad Name", "--database-url",
                   "sqlite:///" + str(tmp_path) + "/x.db", stdin="password-1\n")
    assert done.returncode == 2 and "operator name" in done.stderr
    done = run_cli_in_process("operator", "create", "boss", "--database-url",
                   "sqlite:///" + str(tmp_path) + "/x.db", stdin="short\n")
    assert done.returncode == 2 and "12-128" in done.stderr
    missing = Path(str(tmp_path)) / "empty.db"
    done = run_cli_in_process("audit", "--database-url", f"sqlite:///{missing}")
    assert done.returncode == 2 and "no such database file" in done.stderr
    assert not missing.exists()  # checking a database never creates one
    sqlite3.connect(missing).close()  # a file, but not a Star Fever database
    done = run_cli_in_process("audit", "--database-url", f"sqlite:///{missing}")
    assert done.returncode == 2 and "no Star Fever database" in done.stderr


def test_live_play_fails_closed_on_a_source_not_marked_live() -> None:
    """Only a source marked ``live`` (the OS CSPRNG) plays a live round: a seeded source, a
    replay or the simulator's generator wired into the live path refuses to play."""
    model = load_model("default")
    assert play_live_or_test(model, 1, model.seed_cents, None).total_bet == 20
    live = play_live_or_test(model, 1, model.seed_cents, None, live_source=SystemRandomSource)
    assert len(live.draws) >= 5
    for wrong in (lambda: SeededSource(1), lambda: KernelSource(chunk_state(1, 0))):
        with pytest.raises(RuntimeError, match="not marked live"):
            play_live_or_test(model, 1, model.seed_cents, None, live_source=wrong)


def test_cli_creates_an_operator_once(tmp_path: Path) -> None:
    # the command's own run, in process (the server tests' harness calls the service)
    url = f"sqlite:///{tmp_path / 'operators.db'}"
    done = run_cli_in_process("operator", "create", "boss", "--database-url", url,
                   stdin=OPERATOR_PASSWORD + "\n")
    assert done.returncode == 0 and "operator 'boss' created" in done.stdout, done.stderr
    assert "secret:" in done.stdout and "otpauth://totp/" in done.stdout  # the second factor
    again = run_cli_in_process("operator", "create", "boss", "--database-url", url,
                    stdin="another-Orbit-7731\n")
    assert again.returncode == 2 and "is taken" in again.stderr
    engine = create_engine(url)
    with engine.connect() as conn:
        roles = conn.execute(text("SELECT role FROM accounts WHERE username = 'boss'")).all()
    engine.dispose()
    assert [role for (role,) in roles] == [OPERATOR]
