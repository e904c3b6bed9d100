"""Rounds stored before the €€€ rule changed still replay and audit, under the rule they were
played by (the rule is part of the model version: default 1.0 is archived).

``tests/data/pre_rule_change.sqlite`` was played by the code from before the change
(``tests/data/make_pre_rule_change_db.py``): ten rounds of model default 1.0, among them a
spin at EUR 0.50 and one at EUR 1.00 whose two €€€ lines were each paid from what the other
left.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from starfever.engine.model import load_model, load_model_version
from starfever.engine.round import replay_round
from starfever.server.db import Database
from starfever.server.services import cashier
from starfever.server.spin.wallets import LedgerWallet
from tests.harness import Server, run_cli_in_process, settings_like_servers

OLD_DB = Path(__file__).parent.parent / "data" / "pre_rule_change.sqlite"


def _copy(tmp_path: Path) -> str:
    db = tmp_path / "old.sqlite"
    shutil.copy(OLD_DB, db)
    return f"sqlite:///{db}"


def _rows(url: str) -> list[dict[str, object]]:
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(text("SELECT * FROM rounds ORDER BY id"))]
    engine.dispose()
    return rows


def _player_with(server: Server, url: str, cents: int) -> str:
    """A new player with ``cents`` deposited through the cashier service: the old database's
    operator predates operators' second factor, so it cannot log in to the cashier API."""
    name, token = server.player()
    db = Database(url)
    try:
        cashier.deposit(db, settings_like_servers(url), LedgerWallet(), name, cents)
    finally:
        db.dispose()
    return token


@pytest.mark.slow
def test_old_rounds_audit_under_the_rule_they_were_played_by(tmp_path: Path) -> None:
    url = _copy(tmp_path)
    # the audit only reads: it says why
    unmigrated = run_cli_in_process("audit", "--database-url", url)
    assert unmigrated.returncode == 2 and "schema revision 0003" in unmigrated.stderr
    Server(url, tmp_path / "server.log").start().stop()  # the new server migrates it on start
    done = run_cli_in_process("audit", "--database-url", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit OK: 10 rounds" in done.stdout
    two_lines = [r for r in _rows(url) if r["line_bet"] == 50 and r["progressive_win"]]
    (stored,) = two_lines
    assert stored["model_version"] == "1.0"
    draws = json.loads(str(stored["draws"]))
    old = load_model_version("default", "1.0")
    assert old is not None
    then = replay_round(old, 50, draws, pool=int(str(stored["pool_before"])))
    now = replay_round(load_model("default"), 50, draws, pool=int(str(stored["pool_before"])))
    assert then.progressive_win == stored["progressive_win"]
    # the current rule would pay one share: the audit passed only because it used the old one
    assert now.progressive_win == int(str(stored["pool_before"])) // 2 < then.progressive_win


@pytest.mark.slow
def test_a_server_carries_on_with_the_new_version_on_an_old_database(tmp_path: Path) -> None:
    url = _copy(tmp_path)
    server = Server(url, tmp_path / "server.log").start()
    try:
        token = _player_with(server, url, 20_000)
        two_lines = [r for r in _rows(url) if r["line_bet"] == 50 and r["progressive_win"]]
        draws = json.loads(str(two_lines[0]["draws"]))
        played = server.spin(token, line_bet=50, draws=draws).json()["round"]
    finally:
        server.stop()
    current = load_model("default")
    assert played["model_version"] == current.version != "1.0"
    assert played["progressive_win"] == played["pool_before"] // 2  # one share, two lines
    done = run_cli_in_process("audit", "--database-url", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit OK: 11 rounds" in done.stdout


@pytest.mark.slow
def test_a_capped_model_settles_and_audits(tmp_path: Path) -> None:
    """The capped variant through the server: rounds name it, replay under it, audit clean."""
    url = _copy(tmp_path)
    server = Server(url, tmp_path / "server.log", {"STARFEVER_MODEL": "capped"}).start()
    try:
        token = _player_with(server, url, 5_000)
        played = [server.spin(token, line_bet=1).json()["round"] for _ in range(5)]
    finally:
        server.stop()
    assert {r["model_name"] for r in played} == {"capped"}
    done = run_cli_in_process("audit", "--database-url", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit OK: 15 rounds" in done.stdout
