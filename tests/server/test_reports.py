"""``starfever report``: the daily and monthly figures are the database's own, row for row."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from starfever.engine.model import load_model
from starfever.server.models import WALLET, LedgerEntry, Round
from tests.harness import Server, run_cli_in_process
from tests.web.forcing import find_stops

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def _expected(server: Server, start: datetime, end: datetime, *,
              include_test: bool) -> dict[Any, dict[str, int]]:
    """The same figures summed round by round in Python (not by the report's SQL)."""
    sums: dict[Any, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    with server.engine().connect() as conn:
        for r in conn.execute(select(Round).where(Round.created_at >= start,
                                                  Round.created_at < end)):
            if r.test and not include_test:
                continue
            for key in (r.line_bet, "total"):
                row = sums[key]
                row["rounds"] += 1
                row["bets"] += r.total_bet
                row["wins"] += r.total_win
                row["jackpot_wins"] += r.progressive_win
                row["refills"] += r.pool_refill
                row["contributions"] += r.contribution
                row["jackpot_hits"] += r.progressive_win > 0
    return sums


def _report(server: Server, *args: str) -> Any:
    out = run_cli_in_process("report", *args, "--database-url", server.database_url)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_pool_line_adds_up_from_the_pool_before_the_first_round(server: Server) -> None:
    """start + contributions - wins + refills = end: the start is the pool before the
    period's first round took its contribution (a round's ``pool_before`` is after it), and
    start and end are the pool's own states, test rounds or not (they play the same pool).
    First in the module: its rounds are the day's first on the module's fresh database, so
    the first round's contribution is 20 cents, not a carry."""
    _, token = server.player(deposit=10_000)
    for line_bet in (100, 10, 1):
        assert server.spin(token, line_bet=line_bet).status_code == 201
    stops = find_stops(load_model("default").base_reels,
                       lambda _, ev: bool(ev.jackpot_lines) and ev.star_coins < 4)
    forced = server.spin(token, line_bet=50, draws=stops)  # a €€€ hit, in test mode
    assert forced.status_code == 201 and forced.json()["round"]["progressive_win"] > 0
    day = forced.json()["round"]["created_at"][:10]
    start = datetime.fromisoformat(f"{day}T00:00:00+00:00")
    with server.engine().connect() as conn:
        first = conn.execute(select(Round).where(Round.created_at >= start)
                             .order_by(Round.id).limit(1)).one()
        last = conn.execute(select(Round).where(Round.created_at >= start)
                            .order_by(Round.id.desc()).limit(1)).one()
    every = json.loads(_report(server, "daily", "--date", day, "--format", "json",
                               "--include-test"))
    pool = every["pool"]
    assert first.contribution > 0, "the day's first round must feed the pool for this to test"
    assert pool["start"] == first.pool_before - first.contribution
    assert pool["end"] == last.pool_after
    assert pool["start"] + pool["contributions"] - pool["jackpot_wins"] + pool["refills"] \
        == pool["end"]
    played = json.loads(_report(server, "daily", "--date", day, "--format", "json"))
    assert (played["pool"]["start"], played["pool"]["end"]) == (pool["start"], pool["end"])
    text = _report(server, "daily", "--date", day, "--include-test")
    assert f"EUR pool: {pool['start'] / 100:,.2f} -> {pool['end'] / 100:,.2f}" in text


def test_daily_report_totals_equal_the_database(server: Server) -> None:
    _, token = server.player(deposit=30_000)
    for line_bet in (1, 5, 10, 100, 5, 1):
        assert server.spin(token, line_bet=line_bet).status_code == 201
    model = load_model("default")
    stops = find_stops(model.base_reels, lambda _, ev: bool(ev.jackpot_lines)
                       and ev.star_coins < 4)
    forced = server.spin(token, line_bet=50, draws=stops)  # a €€€ hit, played in test mode
    assert forced.status_code == 201, forced.text
    assert forced.json()["round"]["progressive_win"] > 0
    day = datetime.fromisoformat(forced.json()["round"]["created_at"].replace("Z", "+00:00"))
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    end = start + timedelta(days=1)

    for include_test in (False, True):
        extra = ("--include-test",) if include_test else ()
        data = json.loads(_report(server, "daily", "--date", start.date().isoformat(),
                                  "--format", "json", *extra))
        expected = _expected(server, start, end, include_test=include_test)
        got = {line["line_bet"]: line for line in data["by_line_bet"]}
        got["total"] = data["total"]
        assert set(got) == set(expected)
        for key, sums in expected.items():
            for field, value in sums.items():
                assert got[key][field] == value, (key, field)
            assert got[key]["ggr"] == sums["bets"] - sums["wins"]
        assert data["pool"]["jackpot_wins"] == expected["total"]["jackpot_wins"]
        assert (50 in got) is include_test  # the forced round is a test round
    with server.engine().connect() as conn:
        deposits = sum(e.amount for e in conn.execute(select(LedgerEntry).where(
            LedgerEntry.book == WALLET, LedgerEntry.kind == "deposit",
            LedgerEntry.created_at >= start, LedgerEntry.created_at < end)))
    assert data["cashier"]["deposits"] == deposits >= 30_000

    rows = list(csv.DictReader(io.StringIO(_report(server, "daily", "--date",
                                                   start.date().isoformat(), "--format", "csv"))))
    assert rows[-1]["line_bet"] == "total"
    assert sum(int(r["bets"]) for r in rows[:-1]) == int(rows[-1]["bets"])
    month = json.loads(_report(server, "monthly", "--date", start.strftime("%Y-%m"),
                               "--format", "json"))
    assert month["total"]["rounds"] >= json.loads(_report(
        server, "daily", "--date", start.date().isoformat(), "--format", "json"))["total"]["rounds"]
    assert "EUR pool" in _report(server, "daily", "--date", start.date().isoformat())


def test_report_input_is_checked_and_nothing_is_created(tmp_path: Any) -> None:
    missing = tmp_path / "missing.db"
    for args, message in (
            (("daily", "--date", "2026-02-30"), "not a calendar date"),
            (("daily", "--date", "2026-12"), "YYYY-MM-DD"),
            (("monthly", "--date", "12/2026"), "YYYY-MM"),
            (("daily", "--date", "9999-12-31"), "out of range"),
            (("monthly", "--date", "9999-12"), "out of range"),
            (("daily", "--date", "2026-12-01"), "no such database file")):
        out = run_cli_in_process("report", *args, "--database-url", f"sqlite:///{missing}")
        assert out.returncode == 2 and message in out.stderr, out.stderr
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert not missing.exists() and list(tmp_path.iterdir()) == []


def test_back_office_periods_out_of_range_are_refused(server: Server) -> None:
    for path in ("/operator/reports/daily?date=9999-12-31",
                 "/operator/reports/monthly?date=9999-12",
                 "/operator/meters?since=9999-12-01&until=9999-12-31",
                 "/operator/meters?until=0001-01-05",
                 "/operator/rounds?until=9999-12-31T23:59:59-23:59",
                 "/operator/rounds?since=0001-01-01T00:00:00%2B23:59"):
        answer = server.call("GET", path, server.operator_token)
        assert answer.status_code == 422, (path, answer.text)
        assert answer.json()["error"]["code"] == "bad_period", path

