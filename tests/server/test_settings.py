"""Settings the server refuses, and secrets it never prints (issue 13)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from starfever.engine.model import load_model
from starfever.server.settings import SettingsError, secrets_of, settings_from_env, shown_url
from tests.harness import SECRET, Databases, Server, audit_key_file, free_port, run_cli
from tests.server.conftest import skip_unless_available

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

PRODUCTION = {"STARFEVER_ENV": "production", "STARFEVER_SECRET_KEY": SECRET,
              "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
              "STARFEVER_APPROVED_MODELS": load_model("default").sha256}


@pytest.mark.parametrize(("env", "says"), [
    ({"STARFEVER_ENV": ""}, "STARFEVER_ENV is set but empty"),
    ({"STARFEVER_ENV": " "}, "STARFEVER_ENV is set but empty"),
    ({"STARFEVER_ENV": "prod"}, "STARFEVER_ENV must be one of"),
    ({"STARFEVER_LIMIT_INCREASE_DELAY_SECONDS": "-1"}, "must not be negative"),
    ({"STARFEVER_YOUNG_AGE": "-5"}, "STARFEVER_YOUNG_AGE must be 0..130"),
    ({"STARFEVER_YOUNG_AGE": "1000"}, "STARFEVER_YOUNG_AGE must be 0..130"),
    ({"STARFEVER_WEEKLY_DEPOSIT_LIMIT": str(10**12)}, "at most 1000000000"),
    ({"STARFEVER_YOUNG_WEEKLY_DEPOSIT_LIMIT": str(10**9 + 1)}, "at most 1000000000"),
    ({"STARFEVER_WEEKLY_DEPOSIT_LIMIT": "0"}, "must be positive"),
    ({"STARFEVER_REALITY_CHECK_SECONDS": "50000"}, "must not exceed STARFEVER_TOKEN_TTL"),
    ({"STARFEVER_REALITY_CHECK_SECONDS": "7200", "STARFEVER_TOKEN_TTL_SECONDS": "3600"},
     "must not exceed STARFEVER_TOKEN_TTL"),
    ({"STARFEVER_TOKEN_TTL_SECONDS": ""}, "set but empty"),
    ({"STARFEVER_DRAIN_GRACE_SECONDS": "-1"}, "STARFEVER_DRAIN_GRACE_SECONDS must be 0..300"),
    ({"STARFEVER_DRAIN_GRACE_SECONDS": "301"}, "STARFEVER_DRAIN_GRACE_SECONDS must be 0..300"),
])
def test_settings_refuse_nonsense_with_one_line_errors(env: dict[str, str], says: str) -> None:
    for base in ({}, PRODUCTION):
        with pytest.raises(SettingsError, match=says) as refused:
            settings_from_env({**base, **env})
        assert "\n" not in str(refused.value)
    ok = settings_from_env({"STARFEVER_LIMIT_INCREASE_DELAY_SECONDS": "0",
                            "STARFEVER_YOUNG_AGE": "18",
                            "STARFEVER_WEEKLY_DEPOSIT_LIMIT": str(10**9),
                            "STARFEVER_DRAIN_GRACE_SECONDS": "0"})
    assert ok.limit_increase_delay_seconds == 0 and ok.weekly_deposit_limit == 10**9
    assert ok.drain_grace_seconds == 0


def test_production_needs_an_audit_key_kept_outside_the_database(tmp_path: Path) -> None:
    without = {k: v for k, v in PRODUCTION.items() if k != "STARFEVER_AUDIT_KEY_FILE"}
    with pytest.raises(SettingsError, match="STARFEVER_AUDIT_KEY_FILE must be set"):
        settings_from_env(without)
    short = tmp_path / "short.key"
    short.write_text("too short")
    with pytest.raises(SettingsError, match="at least 32 bytes"):
        settings_from_env({**without, "STARFEVER_AUDIT_KEY_FILE": str(short)})
    with pytest.raises(SettingsError, match="cannot be read"):
        settings_from_env({**without, "STARFEVER_AUDIT_KEY_FILE": str(tmp_path / "none")})
    ok = settings_from_env(PRODUCTION)
    assert len(ok.chain_key()) >= 32
    assert settings_from_env({}).chain_key() != ok.chain_key()  # development: its own key


def test_serve_refuses_an_empty_environment_in_one_line(tmp_path: Path) -> None:
    done = run_cli("serve", "--port", str(free_port()), "--database-url",
                   f"sqlite:///{tmp_path}/x.db", env={"STARFEVER_ENV": ""})
    assert done.returncode == 2
    assert done.stderr.strip() == ("starfever serve: error: STARFEVER_ENV is set but empty: "
                                   "give it a value or unset it")


def test_serve_refuses_a_model_without_a_coin_on_every_reel(tmp_path: Path) -> None:
    """The conditions let Star Coins appear on every reel: a model file with none on reel 0
    is refused in one line before anything is created (the first low-volatility model had
    none; it stays in the archive only to replay its rounds)."""
    data = load_model("default").to_dict()
    data["reels"]["base"][0] = ["LEMON" if s == "COIN" else s for s in data["reels"]["base"][0]]
    model_file = tmp_path / "no-coin.json"
    model_file.write_text(json.dumps(data), encoding="utf-8")
    database = tmp_path / "x.db"
    done = run_cli("serve", "--port", str(free_port()), "--database-url", f"sqlite:///{database}",
                   "--model", str(model_file))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"starfever serve: error: model default {data['version']} cannot be offered: base reel 0 "
        "holds no COIN, "
        "and the conditions let Star Coins appear on every reel")
    assert not database.exists()


def test_shown_url_masks_every_password() -> None:
    for url, shown in (
            ("postgresql://u:pw@h/db", "postgresql://u:***@h/db"),
            ("postgresql://u@h/db?password=hunter2&sslmode=require",
             "postgresql://u@h/db?password=***&sslmode=require"),
            ("postgresql://u:a%40b@h:5432/db?sslpassword=x", "postgresql://u:***@h:5432/db?"
                                                             "sslpassword=***"),
            ("sqlite:///starfever.db", "sqlite:///starfever.db")):
        assert shown_url(url) == shown
    assert secrets_of("postgresql://u:pw@h/db?password=q") == ["pw", "q"]


def test_a_database_password_is_masked_in_start_up_output(databases: Databases,
                                                          tmp_path: Path) -> None:
    skip_unless_available(databases, "postgresql")
    url = databases.new("postgresql")  # trust authentication: any password is accepted
    secret_url = url.replace("postgres@", "postgres:hunter2-in-netloc@") + \
        "?password=hunter2-in-query"
    server = Server(secret_url, tmp_path / "server.log").start()
    try:
        assert server.call("GET", "/health").status_code == 200
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text()
    assert "database postgresql://postgres:***@" in log and "password=***" in log
    assert "hunter2" not in log
    # a database it cannot reach: one line, no traceback, no password
    unreachable = f"postgresql://postgres:hunter2@127.0.0.1:{free_port()}/x?password=hunter2"
    done = subprocess.run([sys.executable, "-m", "starfever.cli", "serve", "--port",
                           str(free_port()), "--database-url", unreachable],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "STARFEVER_SECRET_KEY": SECRET})
    assert done.returncode == 2, done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "cannot use the database postgresql://postgres:***@" in done.stderr


def _refused(env: dict[str, str]) -> str:
    with pytest.raises(SettingsError) as refused:
        settings_from_env(env)
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_production_refuses_a_key_file_that_is_not_a_regular_file(tmp_path: Path) -> None:
    """``/dev/zero`` once hung the start-up (read for ever); a FIFO would block the opening; a
    directory is no key. Each is refused in one line before anything is read."""
    fifo = tmp_path / "key.fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo), str(tmp_path)):
        for base in ({}, PRODUCTION):
            message = _refused({**base, "STARFEVER_AUDIT_KEY_FILE": path})
            assert message == f"STARFEVER_AUDIT_KEY_FILE {path!r} is not a regular file"
    huge = tmp_path / "huge.key"
    huge.write_bytes(os.urandom(70_000))
    assert "a key file holds at most 65536" in _refused(
        {**PRODUCTION, "STARFEVER_AUDIT_KEY_FILE": str(huge)})


def test_production_refuses_a_short_or_predictable_secret_and_key(tmp_path: Path) -> None:
    for secret, says in (("a" * 16, "must be at least 32 characters outside development"),
                         ("a" * 40, "too predictable (about 0 bits"),
                         ("password" * 4, "too predictable"),
                         ("0123456789abcdef" * 2, "too predictable")):
        assert says in _refused({**PRODUCTION, "STARFEVER_SECRET_KEY": secret})
        assert settings_from_env({"STARFEVER_SECRET_KEY": secret}).secret_key == secret  # dev
    weak = tmp_path / "weak.key"
    for content in (b"a" * 64, b"abcd" * 16, b"00000000000000001111111111111111"):
        weak.write_bytes(content)
        key_env = {**PRODUCTION, "STARFEVER_AUDIT_KEY_FILE": str(weak)}
        assert "STARFEVER_AUDIT_KEY_FILE: the key in" in _refused(key_env)
    strong = tmp_path / "strong.key"
    strong.write_text(secrets.token_hex(16))  # 128 random bits, the shortest that passes
    ok = settings_from_env({**PRODUCTION, "STARFEVER_AUDIT_KEY_FILE": str(strong),
                            "STARFEVER_SECRET_KEY": secrets.token_hex(16)})
    assert len(ok.chain_key()) == 32


@pytest.mark.parametrize("ttl", ["299", "86401", str(10 * 365 * 86400)])
def test_production_refuses_a_token_lifetime_outside_sane_bounds(ttl: str) -> None:
    env = {**PRODUCTION, "STARFEVER_TOKEN_TTL_SECONDS": ttl,
           "STARFEVER_REALITY_CHECK_SECONDS": "60"}
    assert _refused(env) == ("STARFEVER_TOKEN_TTL_SECONDS must be 300..86400 outside "
                             f"development, got {ttl}")
    assert settings_from_env({k: v for k, v in env.items()
                              if k != "STARFEVER_ENV"}).token_ttl_seconds == int(ttl)
    for fine in ("300", "86400"):
        assert settings_from_env({**env, "STARFEVER_TOKEN_TTL_SECONDS": fine})


def test_serve_refuses_an_unsafe_production_setting_in_one_line_and_starts_nothing(
        tmp_path: Path) -> None:
    for env, says in (({"STARFEVER_AUDIT_KEY_FILE": "/dev/zero"}, "is not a regular file"),
                      ({"STARFEVER_SECRET_KEY": "a" * 16}, "at least 32 characters"),
                      ({"STARFEVER_TOKEN_TTL_SECONDS": str(10 * 365 * 86400)}, "300..86400")):
        database = tmp_path / "x.db"
        done = run_cli("serve", "--port", str(free_port()), "--database-url",
                       f"sqlite:///{database}", env={**PRODUCTION, **env}, timeout=60)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0] and "Traceback" not in done.stderr
        assert not database.exists()
