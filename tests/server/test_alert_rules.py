"""The shipped alert rules and dashboard (deploy/): the rules pass ``promtool check rules``
and their own unit tests (``promtool test rules deploy/prometheus/alerts.test.yml``, every
rule tested), and every metric that a rule or a dashboard panel names is one the server
exports (here from the metrics module; test_operations.py checks them against a real scrape).

promtool is Debian's ``prometheus`` package: ``scripts/test`` installs it for the full run and
sets ``STARFEVER_FULL_RUN=1``, where its absence is a failure; a quick run without it skips."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from starfever.server import metrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
ALERT_TESTS = DEPLOY / "prometheus" / "alerts.test.yml"
DASHBOARD = DEPLOY / "grafana" / "starfever.json"
PROCESS = ("process_cpu_seconds_total", "process_resident_memory_bytes",
           "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
           "process_start_time_seconds", "python_info")
"""What the process and platform collectors export (prometheus_client, on Linux)."""
NAME = re.compile(r"\b((?:starfever|process|python)_[a-z0-9_]+)")


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("STARFEVER_FULL_RUN") == "1":
            pytest.fail("promtool is missing: the full run needs Debian's prometheus package "
                        "(scripts/test installs it when run as root)")
        pytest.skip("promtool is not installed (apt-get install prometheus; the full run "
                    "installs it)")
    return found


def exported() -> set[str]:
    """Every sample name /metrics can carry, from the metrics module's own definitions."""
    names = set(metrics.DATABASE_METRICS) | set(metrics.WALLET_METRICS) | set(PROCESS)
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}
    for metric in metrics.PROCESS_METRICS:
        for family in metric.describe():
            names.update(family.name + s for s in suffixes.get(family.type, ("",)))
    return names


def alert_rules() -> list[dict[str, Any]]:
    rules = yaml.safe_load(ALERTS.read_text())
    return [rule for group in rules["groups"] for rule in group["rules"]]


def dashboard_queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in board["panels"] for target in panel["targets"]]


def test_alert_rules_pass_promtool_check_and_their_unit_tests() -> None:
    tool = promtool()
    checked = subprocess.run([tool, "check", "rules", str(ALERTS)], capture_output=True,
                             text=True, timeout=60, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in checked.stdout
    tested = subprocess.run([tool, "test", "rules", str(ALERT_TESTS)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_promtool_fails_a_rule_test_that_expects_the_wrong_alert(tmp_path: Path) -> None:
    """The unit tests can fail: the same file with one expectation changed is refused."""
    tool = promtool()
    (tmp_path / "alerts.yml").write_text(ALERTS.read_text())
    wrong = ALERT_TESTS.read_text().replace('summary: "a:8000 gets no answer',
                                            'summary: "b:8000 gets no answer', 1)
    assert wrong != ALERT_TESTS.read_text()
    (tmp_path / "alerts.test.yml").write_text(wrong)
    tested = subprocess.run([tool, "test", "rules", str(tmp_path / "alerts.test.yml")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert tested.returncode != 0 and "StarFeverWalletDown" in tested.stdout + tested.stderr


def test_every_alert_rule_has_a_promtool_test_that_fires_it() -> None:
    tests = yaml.safe_load(ALERT_TESTS.read_text())["tests"]
    fired = {case["alertname"] for test in tests for case in test["alert_rule_test"]
             if case["exp_alerts"]}
    quiet = {case["alertname"] for test in tests for case in test["alert_rule_test"]
             if not case["exp_alerts"]}
    names = {rule["alert"] for rule in alert_rules()}
    assert names - fired == set(), "rules never shown to fire"
    assert names - quiet == set(), "rules never shown to stay quiet on a near miss"
    for rule in alert_rules():
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"]


def test_alerts_and_dashboard_name_only_metrics_the_server_exports() -> None:
    known = exported()
    assert "starfever_wallet_up" in known and "process_open_fds" in known
    for rule in alert_rules():
        for name in NAME.findall(rule["expr"]):
            assert name in known, f"{rule['alert']}: {name} is not exported"
    queries = dashboard_queries()
    assert len(queries) >= 15
    used = {name for query in queries for name in NAME.findall(query)}
    assert used - known == set(), "the dashboard queries metrics nobody exports"
    # the dashboard shows what an operator is paged for
    for name in ("starfever_pending_credits", "starfever_wallet_up", "process_open_fds",
                 "starfever_drain_refusals_total", "starfever_gc_pause_seconds_bucket"):
        assert name in used


def test_a_misspelt_metric_is_caught_by_the_name_check() -> None:
    assert "starfever_wallet_upp" not in exported()
    assert "starfever_pending_credits_total" not in exported()
