"""``scripts/failover-drill`` (ADR 0070, 0071): a primary SIGKILLed under load in both wallet
modes, the standby promoted by Patroni, the old primary back as its standby; nothing lost,
nothing doubled, the books and the operator's calls exact, audit and reconcile clean, and a
server left pointing at the old primary settles nothing there.

Patroni and etcd are Debian's ``patroni`` and ``etcd-server``: ``scripts/test`` installs them
for the full run and sets ``STARFEVER_FULL_RUN=1``, where their absence is a failure; elsewhere
the test is skipped without them. The drill's longer form: ``scripts/failover-drill --long``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.failover_cluster import missing_programs

pytestmark = pytest.mark.slow
DRILL = Path(__file__).resolve().parents[2] / "scripts" / "failover-drill"


def test_the_failover_drill_loses_and_doubles_nothing(tmp_path: Path) -> None:
    missing = missing_programs()
    if missing:
        if os.environ.get("STARFEVER_FULL_RUN") == "1":
            pytest.fail(f"the full run needs Debian's {' '.join(missing)} (scripts/test "
                        "installs them when run as root)")
        pytest.skip(f"needs Debian's {' '.join(missing)} (the full run installs them)")
    done = subprocess.run([str(DRILL), "--json", "--logs", str(tmp_path)], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-4000:]
    report = json.loads(done.stdout)
    print(json.dumps(report, indent=2))  # the figures of docs/assurance.md §2b
    for name in ("ledger", "operator", "stale"):
        side = report[name]
        assert side["lost"] == 0 and side["doubled"] == 0, (name, side)
        assert side["errors"] == {}, (name, side)  # no 500, no other refusal
        assert side["acknowledged"] > 0 and side["refused_after_kill"] > 0, (name, side)
        assert set(side["refusals"]) <= {"503 database_unavailable", "503 commit_unknown",
                                         "ConnectionResetError", "IncompleteReadError"}, side
    for name in ("ledger", "operator"):  # back on the new primary, by themselves
        assert report[name]["unavailable_s"] is not None, report[name]
    assert report["stale"]["settled_after_kill"] == 0  # never on the old primary
    assert report["stale_readyz_while_standby"] == 503
    assert report["standby"] == {"in_recovery": True, "same_rounds": True}
    assert report["ledger_books"]["conserved"] == 1
    assert report["operator_books"]["agree"] == 1
    assert report["operator_calls"]["calls_wrong"] == 0
    assert report["reconcile"]["reconcile_ok"] is True
    assert all(audit["ok"] for audit in report["audit"].values()), report["audit"]
    assert report["passed"] is True and done.returncode == 0
