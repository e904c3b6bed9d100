"""``scripts/restore-drill``: a pg_dump backup of a live database restores into a copy that
audits clean and holds the same chain and wallet calls; a damaged database or copy fails the
drill, and the backup is readable by its owner only."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.harness import SECRET, Databases, Server, audit_key_file, start_server
from tests.server.conftest import skip_unless_available

DRILL = Path(__file__).resolve().parents[2] / "scripts" / "restore-drill"


def _drill(url: str, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DRILL), url, *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "STARFEVER_SECRET_KEY": SECRET,
                                            "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
                                            **({"PATH": path} if path else {})})


LOSSY_RESTORE = """#!/usr/bin/env bash
# pg_restore, then one wallet call of the copy changed: a restore that did not keep the calls
{real} "$@" || exit $?
while [ $# -gt 0 ]; do [ "$1" = -d ] && url=$2; shift; done
psql -q -X -d "$url" -c "UPDATE wallet_calls SET amount = amount + 1 \\
  WHERE id = (SELECT min(id) FROM wallet_calls)"
"""


def _calls(server: Server) -> None:
    """Two operator wallet calls (refused debits: they moved nothing and name no round)."""
    with server.engine().begin() as conn:
        account = conn.execute(text("SELECT min(id) FROM accounts")).scalar_one()
        for n in (1, 2):
            conn.execute(text(
                "INSERT INTO wallet_calls (transaction_id, kind, account_id, round_ref, amount, "
                "jackpot_amount, status, error, attempts, next_attempt_at, created_at, "
                "updated_at) VALUES (:t, 'debit', :a, :r, 20, 0, 'refused', 'player_blocked', "
                "0, now(), now(), now())"), {"t": f"sfd-drill-{n}", "a": account,
                                             "r": f"sfr-drill-{n}"})


@pytest.mark.postgres
def test_a_restored_backup_audits_clean_and_holds_the_same_chain(
        databases: Databases, tmp_path: Path) -> None:
    skip_unless_available(databases, "postgresql")
    with start_server(databases, "postgresql", tmp_path) as server:
        for _ in range(3):
            _, token = server.player(deposit=20_000)
            for line_bet in (1, 10, 50):
                assert server.spin(token, line_bet=line_bet).status_code == 201
        _calls(server)
        done = _drill(server.database_url, "--out", str(tmp_path / "backups"))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "restore drill passed" in done.stdout and "round 9," in done.stdout
        assert "rounds up to round 9: 9 in both" in done.stdout
        assert "wallet_calls up to call 2: 2 in both, the same" in done.stdout
        [backup] = (tmp_path / "backups").glob("*.dump")
        assert stat.S_IMODE(backup.stat().st_mode) == 0o600  # players' money and ids

        shims = tmp_path / "shims"
        shims.mkdir()
        (shims / "pg_restore").write_text(LOSSY_RESTORE.format(real=shutil.which("pg_restore")))
        (shims / "pg_restore").chmod(0o755)
        lossy = _drill(server.database_url, path=f"{shims}:{os.environ['PATH']}")
        assert lossy.returncode == 1 and "FAILED: wallet_calls up to call 2" in lossy.stderr, \
            lossy.stdout + lossy.stderr

        with server.engine().begin() as conn:  # an insider edits a stored win
            conn.execute(text("UPDATE rounds SET total_win = total_win + 500 WHERE id = 4"))
        failed = _drill(server.database_url)
        assert failed.returncode != 0 and "MISMATCH" in failed.stdout
    with server.engine().connect() as conn:  # no restored copy is left behind
        names = conn.execute(text("SELECT datname FROM pg_database WHERE datname LIKE :p"),
                             {"p": "%_drill_%"}).scalars().all()
    assert not [n for n in names if n.startswith(server.database_url.rsplit("/", 1)[1])]
    databases.drop(server.database_url)


def test_the_drill_refuses_what_is_not_a_postgresql_url() -> None:
    for url in ("sqlite:///starfever.db", "postgresql://host-only"):
        done = _drill(url)
        assert done.returncode == 2 and "not a postgresql:// URL" in done.stderr
