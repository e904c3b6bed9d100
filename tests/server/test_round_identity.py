"""Every round names its build and its model (migration 0012, hash scheme 3, ADR 0020; the
build as the running build hash of the package and its environment, ADR 0051), rounds
stored before without them still audit, a changed build or model hash breaks the chain, and a
change of the approved models is a significant event."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from starfever.certify import software
from starfever.certify.environment import running_sha256
from starfever.engine.model import load_model
from starfever.server.db import Database
from starfever.server.models import Round
from starfever.server.services import events
from starfever.server.services.chain import (
    HASH_FIELDS,
    IDENTIFIED,
    KEYED,
    KEYED_VERSION,
    canonical_json,
    instant,
    mac,
    round_hash,
)
from starfever.server.settings import SettingsError, settings_from_env
from tests.harness import Server, run_cli, run_cli_in_process
from tests.server.test_pre_rule_change import OLD_DB, _player_with

KEY = b"k" * 32


def _round(**values: object) -> Round:
    fields: dict[str, object] = {name: 0 for name in HASH_FIELDS}
    fields.update(prev_hash="0" * 64, idempotency_key="k", request_hash="r",
                  model_name="default", model_version="2.0", feature=None, draws="[1,2]",
                  events="[]", test=False, created_at=datetime(2026, 12, 1, tzinfo=UTC))
    fields.update(values)
    return Round(**fields)


def test_scheme_2_hashes_are_unchanged_and_scheme_3_covers_build_and_model() -> None:
    old = _round(hash_scheme=KEYED)
    frozen = mac(KEY, KEYED_VERSION + "\n" + canonical_json(
        [instant(v) if isinstance(v, datetime) else v
         for v in (getattr(old, n) for n in HASH_FIELDS)]))
    assert round_hash(old, KEY) == frozen  # a round stored before 0012 hashes as it did
    assert round_hash(_round(hash_scheme=KEYED, build_sha256="b" * 64), KEY) == frozen
    new = _round(hash_scheme=IDENTIFIED, build_sha256="b" * 64, model_sha256="m" * 64)
    assert round_hash(new, KEY) != frozen
    for changed in ({"build_sha256": "c" * 64}, {"model_sha256": "n" * 64}):
        assert round_hash(_round(hash_scheme=IDENTIFIED, **{
            "build_sha256": "b" * 64, "model_sha256": "m" * 64, **changed}), KEY) \
            != round_hash(new, KEY)


def test_approved_models_must_be_hashes() -> None:
    with pytest.raises(SettingsError, match="is not a SHA-256 in hex") as refused:
        settings_from_env({"STARFEVER_APPROVED_MODELS": "default"})
    assert "\n" not in str(refused.value)
    sha = load_model("default").sha256
    ok = settings_from_env({"STARFEVER_APPROVED_MODELS": f" {sha.upper()},{sha} "})
    assert ok.approved_model_hashes == (sha,)


def _rounds(url: str) -> list[dict[str, object]]:
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(text(
            "SELECT id, hash_scheme, build_sha256, model_sha256 FROM rounds ORDER BY id"))]
    engine.dispose()
    return rows


@pytest.mark.slow
def test_old_rounds_audit_and_new_ones_name_their_build(tmp_path: Path) -> None:
    db_file = tmp_path / "old.sqlite"
    shutil.copy(OLD_DB, db_file)  # ten rounds played before migration 0012
    url = f"sqlite:///{db_file}"
    model = load_model("default")
    server = Server(url, tmp_path / "server.log").start()
    try:
        token = _player_with(server, url, 5000)
        played = server.spin(token, line_bet=2).json()["round"]
        recalled = server.call("GET", f"/rounds/{played['id']}", token).json()
    finally:
        server.stop()
    # the files this server ran (editable or built) and its environment, as the same command
    # line finds them (``verify`` runs as the server does: same interpreter, path, variables)
    # (a process: the environment hash is of the interpreter, path and start-up hooks a command
    # line gets, which the test process's own differ from)
    shown = json.loads(run_cli("verify", "--json").stdout)
    assert shown["build_sha256"] == software.check().build_sha256
    build = running_sha256(shown["build_sha256"], shown["environment"]["environment_sha256"])
    assert recalled["build_sha256"] == build and recalled["model_sha256"] == model.sha256
    rows = _rounds(url)
    assert [r["build_sha256"] for r in rows[:10]] == [None] * 10
    assert rows[10] == {"id": 11, "hash_scheme": IDENTIFIED, "build_sha256": build,
                        "model_sha256": model.sha256}
    done = run_cli_in_process("audit", "--database-url", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit OK: 11 rounds" in done.stdout
    # the build a round names is chained: changing it (without the key) breaks the chain
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE rounds SET build_sha256 = :b WHERE id = 11"), {"b": "0" * 64})
    engine.dispose()
    broken = run_cli_in_process("audit", "--database-url", url)
    assert broken.returncode == 1 and "round 11: stored hash does not match" in broken.stdout


@pytest.mark.slow
def test_a_change_of_the_approved_models_is_a_significant_event(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    default, rtp94 = load_model("default").sha256, load_model("rtp94").sha256
    log = tmp_path / "server.log"
    for approved in (default, default, f"{default},{rtp94}"):
        Server(url, log, {"STARFEVER_APPROVED_MODELS": approved}).start().stop()
    db = Database(url)
    try:
        logged = events.query(db, kinds=["approved_models_changed"])
    finally:
        db.dispose()
    assert [e.detail for e in logged] == [  # newest first; the unchanged restart logs nothing
        {"approved": sorted([default, rtp94]), "previous": [default]},
        {"approved": [default], "previous": None}]
    assert all(e.actor is None for e in logged)


@pytest.mark.slow
def test_a_change_of_the_running_build_is_a_significant_event(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    log = tmp_path / "server.log"
    # the same build twice, then one started with a variable that changes what Python runs
    for more in ({}, {}, {"PYTHONWARNINGS": "ignore"}):
        Server(url, log, more).start().stop()
    db = Database(url)
    try:
        logged = events.query(db, kinds=["software_changed"])
    finally:
        db.dispose()
    assert len(logged) == 2  # newest first; the unchanged restart logs nothing
    changed, first = (e.detail for e in logged)
    assert first["previous"] is None and changed["previous"] == first["running_sha256"]
    assert changed["build_sha256"] == first["build_sha256"]  # the package did not change
    assert changed["environment_sha256"] != first["environment_sha256"]
    for detail in (first, changed):
        assert detail["running_sha256"] == running_sha256(detail["build_sha256"],
                                                          detail["environment_sha256"])
    assert all(e.actor is None for e in logged)
