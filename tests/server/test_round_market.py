"""Every round names its market and currency (issue 37 item 3, ADR 0078) on a real ``starfever
serve --market uk --currency GBP,EUR`` of two workers, on SQLite and PostgreSQL: the spin's
answer, the player's history and recall, the back office's round search, the round-details
page and the stored row say ``uk`` and the round's currency; the market is chained (the audit
fails when it is changed or erased, and passes again once it is put back); the reports name the
markets of their rounds; the back office's RTP rows and ``/metrics``' money series are of one
currency, never a sum of two."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select, update

from starfever.server.models import Round
from tests.harness import (
    DATABASE_KINDS,
    DatabaseKind,
    Databases,
    Server,
    expect,
    run_cli_in_process,
    start_server,
)

pytestmark = pytest.mark.slow

CYCLE_S = 3.0
"""More than the uk market's 2.5 s game cycle: the clock is moved this far between spins."""


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def served(request: pytest.FixtureRequest, databases: Databases,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"round-market-{kind}"),
                           {"STARFEVER_CURRENCIES": "GBP,EUR"}, workers=2,
                           args=("--market", "uk"))
    with started:
        yield started
    databases.drop(started.database_url)


def _play(server: Server, currency: str, line_bet: int, spins: int) -> list[dict[str, object]]:
    _, token = server.player(deposit=10_000, currency=currency)
    played = []
    for _ in range(spins):
        played.append(expect(server.spin(token, line_bet=line_bet), 201).json()["round"])
        server.move_clock(CYCLE_S)
    return played


def _audit(server: Server) -> int:
    return run_cli_in_process("audit", "--database-url", server.database_url).returncode


def test_every_round_names_its_market_and_currency_everywhere(served: Server) -> None:
    name, token = served.player(deposit=5_000, currency="GBP")
    spun = expect(served.spin(token, line_bet=10), 201).json()["round"]
    assert (spun["market"], spun["currency"]) == ("uk", "GBP")
    history = expect(served.call("GET", "/rounds", token), 200).json()["rounds"]
    assert [(r["market"], r["currency"]) for r in history] == [("uk", "GBP")]
    recalled = expect(served.call("GET", f"/rounds/{spun['id']}", token), 200).json()
    assert (recalled["market"], recalled["currency"]) == ("uk", "GBP")
    lines = expect(served.call("GET", f"/operator/rounds?player={name}",
                               served.operator_token), 200).json()["rounds"]
    assert [(r["market"], r["currency"]) for r in lines] == [("uk", "GBP")]
    page = expect(served.http.get(f"{served.url}{spun['details_url']}",
                                  headers={"accept-language": "en"}), 200).text
    assert "<th>Market</th><td>uk</td>" in page
    assert "<th>Currency</th><td>GBP</td>" in page
    with served.engine().connect() as conn:
        stored = conn.execute(select(Round.market, Round.currency)
                              .where(Round.id == spun["id"])).one()
    assert tuple(stored) == ("uk", "GBP")
    assert _audit(served) == 0
    # the wallet's figures name its currency: the limits are in pence, as its balance
    assert expect(served.call("GET", "/limits", token), 200).json()["currency"] == "GBP"
    file = expect(served.call("GET", f"/operator/players/{name}", served.operator_token),
                  200).json()
    assert file["currency"] == "GBP" and file["limits"]["currency"] == "GBP"


def test_the_reports_name_the_market_of_their_rounds(served: Server) -> None:
    _play(served, "EUR", 5, 2)
    day = served.now().date().isoformat()
    report = json.loads(run_cli_in_process(
        "report", "daily", "--date", day, "--format", "json", "--currency", "EUR",
        "--database-url", served.database_url).stdout)
    assert report["markets"] == ["uk"]
    [market] = report["by_market"]
    assert market["market"] == "uk" and market["rounds"] == report["total"]["rounds"] > 0
    assert market["bets"] == report["total"]["bets"]
    text = run_cli_in_process("report", "daily", "--date", day, "--currency", "EUR",
                              "--database-url", served.database_url).stdout
    assert "in EUR" in text and "market uk" in text
    rows = list(csv.DictReader(io.StringIO(run_cli_in_process(
        "report", "daily", "--date", day, "--format", "csv", "--currency", "EUR",
        "--database-url", served.database_url).stdout)))
    assert {(r["currency"], r["markets"]) for r in rows} == {("EUR", "uk")}
    for code in ("GBP", "EUR"):  # the back office's download: one currency each, GBP first
        path = f"/operator/reports/daily?date={day}&format=json"
        got = expect(served.call("GET", path + (f"&currency={code}" if code == "EUR" else ""),
                                 served.operator_token), 200).json()
        assert got["currency"] == code and got["markets"] == ["uk"]
    refused = served.call("GET", f"/operator/reports/daily?date={day}&currency=USD",
                          served.operator_token)
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "currency_not_served"


def test_the_back_offices_rtp_rows_are_of_one_currency(served: Server) -> None:
    _play(served, "GBP", 25, 2)
    _play(served, "EUR", 25, 2)
    with served.engine().connect() as conn:
        stored = list(conn.execute(select(Round.currency, Round.total_bet, Round.total_win)
                                   .where(Round.line_bet == 25, Round.test.is_(False),
                                          Round.grant_id.is_(None))))
    for currency in ("GBP", "EUR"):
        mine = [r for r in stored if r.currency == currency]
        for path in (f"/operator/meters?currency={currency}",
                     f"/operator/rtp?currency={currency}"):
            answer = expect(served.call("GET", path, served.operator_token), 200).json()
            assert answer["currency"] == currency
            [row] = [r for r in answer["by_bet_class"] if r["line_bet"] == 25]
            assert row["rounds"] == len(mine) == 2
            assert (row["total_bet"], row["total_win"]) == (sum(r.total_bet for r in mine),
                                                            sum(r.total_win for r in mine))
    meters = expect(served.call("GET", "/operator/meters", served.operator_token), 200).json()
    assert meters["currency"] == "GBP" and meters["currencies"] == ["GBP", "EUR"]
    refused = served.call("GET", "/operator/rtp?currency=USD", served.operator_token)
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "currency_not_served"


def test_the_round_search_finds_a_win_in_the_currency_named(served: Server) -> None:
    """``min_win`` is minor units of ``currency`` and keeps to its rounds; where two are
    served it needs one (``422 currency_needed``), and one not served is refused."""
    _play(served, "GBP", 4, 2)
    _play(served, "EUR", 4, 2)
    with served.engine().connect() as conn:
        stored = list(conn.execute(select(Round.id, Round.currency, Round.total_win)))
    for code in ("GBP", "EUR"):
        found = expect(served.call("GET", f"/operator/rounds?currency={code}&min_win=0"
                                   "&limit=200", served.operator_token), 200).json()["rounds"]
        assert sorted(r["id"] for r in found) == sorted(i for i, c, _ in stored if c == code)
        assert {r["currency"] for r in found} == {code}
    floor = max(w for _, c, w in stored if c == "GBP")
    found = expect(served.call("GET", f"/operator/rounds?currency=GBP&min_win={floor}",
                               served.operator_token), 200).json()["rounds"]
    assert sorted(r["id"] for r in found) == sorted(
        i for i, c, w in stored if c == "GBP" and w >= floor)
    for query, code in (("min_win=1", "currency_needed"),
                        ("currency=USD&min_win=1", "currency_not_served"),
                        ("currency=USD", "currency_not_served")):
        refused = served.call("GET", f"/operator/rounds?{query}", served.operator_token)
        assert refused.status_code == 422 and refused.json()["error"]["code"] == code, query


MONEY_SERIES = ("starfever_rounds_total", "starfever_bets_cents_total",
                "starfever_wins_cents_total", "starfever_rounds_stored",
                "starfever_rtp_realised_minus_theoretical")


def _scrape(server: Server) -> list[tuple[str, dict[str, str], float]]:
    text = expect(server.http.get(f"{server.url}/metrics"), 200).text
    return [(sample.name, sample.labels, sample.value)
            for family in text_string_to_metric_families(text) for sample in family.samples
            if sample.name in MONEY_SERIES]


def test_the_metrics_money_series_are_of_one_currency_each(served: Server) -> None:
    """Two currencies' rounds of one line bet land in two label sets (summed over both
    workers), each equal to its own currency's rounds in the database: never one sum."""
    _play(served, "GBP", 3, 3)
    _play(served, "EUR", 3, 2)
    with served.engine().connect() as conn:
        stored = {row.currency: row for row in conn.execute(
            select(Round.currency, func.count().label("n"),
                   func.sum(Round.total_bet).label("bets"),
                   func.sum(Round.total_win).label("wins"))
            .where(Round.line_bet == 3, Round.test.is_(False)).group_by(Round.currency))}
    assert set(stored) == {"GBP", "EUR"}
    assert (stored["GBP"].n, stored["EUR"].n) == (3, 2)
    found = _scrape(served)
    assert found and all("currency" in labels for _, labels, _ in found), found
    for code, row in stored.items():
        mine = {name: value for name, labels, value in found
                if labels["line_bet"] == "3" and labels["currency"] == code}
        assert mine["starfever_rounds_total"] == row.n
        assert mine["starfever_bets_cents_total"] == row.bets
        assert mine["starfever_wins_cents_total"] == row.wins
        assert mine["starfever_rounds_stored"] == row.n
        assert "starfever_rtp_realised_minus_theoretical" in mine
    both = [value for name, labels, value in found
            if name == "starfever_bets_cents_total" and labels["line_bet"] == "3"]
    assert sorted(both) == sorted(int(row.bets) for row in stored.values())


def test_a_changed_or_erased_market_fails_the_audit_and_an_unrecorded_one_is_reported(
        served: Server) -> None:
    """As an insider without the audit key would: the market of a stored round changed, then
    erased (as if stored before migration 0028). Put back, the chain verifies again."""
    [spun] = _play(served, "EUR", 1, 1)
    assert _audit(served) == 0
    engine = served.engine()
    for forged in ("at", None):
        with engine.begin() as conn:
            conn.execute(update(Round).where(Round.id == spun["id"]).values(market=forged))
        assert _audit(served) != 0, forged
    day = served.now().date().isoformat()
    report = json.loads(run_cli_in_process(
        "report", "daily", "--date", day, "--format", "json", "--currency", "EUR",
        "--database-url", served.database_url).stdout)
    assert report["markets"] == [None, "uk"]  # a round without one first
    unrecorded = next(m for m in report["by_market"] if m["market"] is None)
    assert unrecorded["rounds"] == 1 and unrecorded["bets"] == spun["total_bet"]
    text = run_cli_in_process("report", "daily", "--date", day, "--currency", "EUR",
                              "--database-url", served.database_url).stdout
    assert "market unrecorded: 1 rounds" in text
    with engine.begin() as conn:
        conn.execute(update(Round).where(Round.id == spun["id"]).values(market="uk"))
    assert _audit(served) == 0
