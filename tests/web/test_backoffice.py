"""The back office at /operator, driven in Debian's Chromium against a real server: log-in
with the second factor, then every page (players, cashier, rounds with recall, meters,
reports, audit, events), each figure checked against the database."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyotp
import pytest
from sqlalchemy import text

from starfever.engine.model import load_model
from starfever.server.services import rtp_meters
from tests.harness import OPERATOR_PASSWORD, Server, create_operator, expect, run_cli
from tests.server.helpers import feature_draws, jackpot_draws
from tests.web.browser import ConsoleWatch, backoffice_log_in

pytestmark = pytest.mark.slow
FAST = 0.04
OPERATOR = "backoffice-op"


@pytest.fixture(scope="module")
def operator_secret(server: Server) -> str:
    """An operator of its own (its TOTP codes are used by nobody else)."""
    return create_operator(server.database_url, OPERATOR)


@pytest.fixture(scope="module")
def played(server: Server) -> dict[str, Any]:
    """A player with plain, Hold & Cash and €€€ rounds, a changed limit, and an audit run."""
    name, token = server.player(deposit=20_000)
    plain = [expect(server.spin(token, line_bet=5), 201).json()["round"] for _ in range(3)]
    hold = expect(server.spin(token, line_bet=1, draws=list(feature_draws("hold_and_cash"))),
                  201).json()["round"]
    jackpot = expect(server.spin(token, line_bet=100, draws=list(jackpot_draws())),
                     201).json()["round"]
    expect(server.call("PUT", "/limits", token, json={"weekly_deposit_limit": 30_000}), 200)
    done = run_cli("audit", "--database-url", server.database_url)
    assert done.returncode == 0, done.stdout + done.stderr
    return {"name": name, "token": token, "plain": plain, "hold": hold, "jackpot": jackpot}


class Office:
    """The back-office page."""

    def __init__(self, page: Any, server: Server, watch: ConsoleWatch) -> None:
        self.page = page
        self.server = server
        self.watch = watch

    def open(self) -> None:
        self.page.goto(f"{self.server.url}/operator?speed={FAST}")
        self.page.wait_for_function(
            "() => window.__backofficePage && window.__backofficePage.ready")

    def log_in(self, secret: str) -> None:
        backoffice_log_in(self.page, OPERATOR, OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
        self.page.wait_for_selector("#shell:not([hidden])")

    def tab(self, name: str) -> None:
        self.page.click(f"[data-testid=tab-{name}]")
        self.page.wait_for_selector(f"#page-{name}:not([hidden])")
        self.page.wait_for_function("() => !document.body.dataset.loading")  # its first answer

    def search_rounds(self) -> list[int]:
        """Press Search on the rounds page and wait for its own answer (not the tab's first
        list, which may still be on its way); the ids of the rounds listed then."""
        with self.page.expect_response(lambda r: "/operator/rounds?" in r.url
                                       and r.request.method == "GET") as answer:
            self.page.click("[data-testid=rs-search]")
        assert answer.value.ok, answer.value.status
        self.page.wait_for_function("() => !document.querySelector('#rounds-body').dataset.loading")
        return [int(i) for i in self.page.eval_on_selector_all(
            "#rounds-body tr[data-round]", "rows => rows.map(r => r.dataset.round)")]

    def wait_text(self, selector: str, needle: str) -> str:
        self.page.wait_for_function(
            "([sel, needle]) => (document.querySelector(sel)?.textContent || '').includes(needle)",
            arg=[selector, needle], timeout=20_000)
        return str(self.page.inner_text(selector))


@pytest.fixture(scope="module")
def office(browser: Any, server: Server, operator_secret: str,
           played: dict[str, Any]) -> Iterator[Office]:
    """One logged-in back office for the module's tests (an operator's TOTP code is good once
    and three failures lock the operator out: one log-in, then page after page)."""
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB",
                                  accept_downloads=True)
    page = context.new_page()
    watch = ConsoleWatch(page)
    office = Office(page, server, watch)
    office.open()
    wrong = "000000" if pyotp.TOTP(operator_secret).now() != "000000" else "111111"
    backoffice_log_in(page, OPERATOR, OPERATOR_PASSWORD, wrong)
    office.wait_text("[data-testid=login-error]", "invalid_credentials")
    assert page.is_hidden("#shell")
    office.log_in(operator_secret)
    assert page.inner_text("[data-testid=who]") == OPERATOR
    yield office
    context.close()
    assert watch.errors == [], f"the back office logged errors: {watch.errors}"


def _scalar(server: Server, sql: str, **params: Any) -> Any:
    with server.engine().connect() as conn:
        return conn.execute(text(sql), params).scalar_one()


def test_players_page_shows_a_player_in_full(office: Office, played: dict[str, Any]) -> None:
    page, name = office.page, played["name"]
    office.tab("players")
    page.fill("[data-testid=player-q]", name[:6])
    page.click("[data-testid=player-search]")
    row = page.locator(f"tr[data-player='{name}']")
    row.wait_for()
    balance = office.server.balance(played["token"])
    assert f"€{balance / 100:,.2f}" in row.inner_text()
    row.locator("button").click()
    office.wait_text("#pf-name", name)
    facts = page.locator("#pf-facts")
    assert facts.locator("dd[data-fact='Weekly deposit limit']").inner_text() == "€300.00"
    assert facts.locator("dd[data-fact='Rounds']").inner_text() == "5"
    assert facts.locator("dd[data-fact='Status']").inner_text() == "active"
    assert "deposit" in page.inner_text("[data-testid=pf-cashier]")
    history = page.locator("[data-testid=pf-rounds] tr[data-round]")
    assert history.count() == 5
    assert history.first.get_attribute("data-round") == str(played["jackpot"]["id"])


def test_an_exclusion_recorded_by_the_operator(office: Office, server: Server) -> None:
    page = office.page
    name, _token = server.player()
    office.tab("players")
    page.fill("[data-testid=player-q]", name)
    page.click("[data-testid=player-search]")
    page.locator(f"tr[data-player='{name}'] button").click()
    office.wait_text("#pf-name", name)
    page.fill("[data-testid=pf-days]", "30")
    page.click("[data-testid=pf-exclude]")
    office.wait_text("[data-testid=status]", "excluded until")
    # the player's file is read again after the answer: wait for it rather than race it
    office.wait_text("#pf-facts dd[data-fact='Status']", "excluded until")
    until = _scalar(server, "SELECT excluded_until FROM accounts WHERE username = :n", n=name)
    assert until is not None
    actor = _scalar(server, "SELECT actor FROM significant_events WHERE kind = 'self_exclusion' "
                            "ORDER BY id DESC LIMIT 1")
    assert actor == OPERATOR


def test_cashier_books_with_one_idempotency_key_per_booking(office: Office,
                                                             server: Server) -> None:
    page = office.page
    name, token = server.player()
    office.tab("cashier")
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.headers.get("idempotency-key", ""))
            if r.url.endswith(f"/players/{name}/deposits") else None)
    page.fill("[data-testid=cash-user]", name)
    page.fill("[data-testid=cash-amount]", "12.50")
    page.click("[data-testid=cash-deposit]")
    office.wait_text("[data-testid=cash-result]", "balance €12.50")
    assert server.balance(token) == 1250
    # the answer of the next booking is lost on the way back: sent again, with the same key
    lost = {"done": False}

    def lose_answer(route: Any) -> None:
        if not lost["done"]:
            lost["done"] = True
            route.fetch()  # the server books it ...
            route.abort()  # ... and the page never hears
        else:
            route.continue_()

    office.watch.allow("ERR_FAILED")  # the answer this test cuts off
    page.route(f"**/players/{name}/deposits", lose_answer)
    page.fill("[data-testid=cash-amount]", "5")
    page.click("[data-testid=cash-deposit]")
    office.wait_text("[data-testid=cash-result]", "No answer")
    page.click("[data-testid=cash-deposit]")
    office.wait_text("[data-testid=cash-result]", "Deposited €5.00")
    page.unroute(f"**/players/{name}/deposits")
    assert len(sent) == 3 and all(sent) and sent[1] == sent[2] != sent[0]
    for unclear in ("0.001", "12.505", "1.234"):  # finer than a cent, or 1234 or 1.234?
        page.fill("[data-testid=cash-amount]", unclear)
        page.click("[data-testid=cash-deposit]")
        office.wait_text("[data-testid=cash-result]", "Enter an amount")
    assert len(sent) == 3 and server.balance(token) == 1750  # nothing sent, nothing booked
    page.fill("[data-testid=cash-amount]", "1")
    page.click("[data-testid=cash-withdraw]")
    office.wait_text("[data-testid=cash-result]", "Paid out €1.00")
    page.fill("[data-testid=cash-amount]", "1000000")
    page.click("[data-testid=cash-withdraw]")
    office.wait_text("[data-testid=cash-result]", "Refused")


def test_a_round_is_found_and_replayed_with_the_players_renderer(
        office: Office, played: dict[str, Any], server: Server) -> None:
    page = office.page
    office.tab("rounds")
    page.fill("[data-testid=rs-min]", "0.001")  # finer than a cent: refused, not guessed
    page.click("[data-testid=rs-search]")
    office.wait_text("#status", "not an amount in EUR")
    page.fill("[data-testid=rs-min]", "")
    page.fill("[data-testid=rs-player]", played["name"])
    page.select_option("[data-testid=rs-feature]", "hold_and_cash")
    hold = played["hold"]
    assert office.search_rounds() == [hold["id"]]
    page.locator(f"#rounds-body tr[data-round='{hold['id']}'] button").click()
    page.wait_for_function("() => window.__backoffice && window.__backoffice.played >= 1",
                           timeout=30_000)
    assert office.page.inner_text("#recall-title") == f"Round {hold['id']} of {played['name']}"
    log = page.evaluate("window.__backoffice.log")
    kinds = [scene["kind"] for scene in log]
    assert kinds[0] == "reveal" and "hc_start" in kinds and kinds[-1] == "end"
    assert any("board" in scene for scene in log)
    assert page.get_attribute("[data-testid=recall-win]", "data-cents") == str(hold["total_win"])
    # the recall names the build and the model that played the round (issue 18)
    stored = server.call("GET", f"/rounds/{hold['id']}", played["token"]).json()
    assert len(stored["build_sha256"]) == 64 and len(stored["model_sha256"]) == 64
    # the round's signed details page (ADR 0060) is one click away
    assert page.is_visible("#recall-details")
    assert page.get_attribute("#recall-details", "href") == stored["details_url"]
    facts = page.inner_text("[data-testid=recall-facts]")
    assert f"build {stored['build_sha256']}" in facts
    assert f"model sha256 {stored['model_sha256']}" in facts
    raw = json.loads(page.text_content("[data-testid=recall-raw]") or "")  # in closed <details>
    assert (raw["build_sha256"], raw["model_sha256"]) == (stored["build_sha256"],
                                                          stored["model_sha256"])
    # the recall's modules are the player client's own files, not copies
    scripts = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert any("/static/" in s and s.endswith("/js/player.js") and "/operator/" not in s
               for s in scripts)
    # a plain round, found by its id
    plain = played["plain"][0]
    page.fill("[data-testid=rs-player]", "")
    page.select_option("[data-testid=rs-feature]", "")
    page.fill("[data-testid=rs-id]", str(plain["id"]))
    assert office.search_rounds() == [plain["id"]]
    page.locator(f"#rounds-body tr[data-round='{plain['id']}'] button").click()
    page.wait_for_function("() => window.__backoffice.played >= 2", timeout=30_000)
    final = page.evaluate("window.__backoffice.log")[0]["grid"]
    assert len(final) == 15


def test_meters_equal_the_database(office: Office, server: Server) -> None:
    page = office.page
    office.tab("meters")
    today = datetime.now(UTC).date().isoformat()
    day = {"start": datetime.fromisoformat(f"{today} 00:00:00")}
    total = page.locator(f"#daily-body tr[data-day='{today}'][data-line-bet='total']")
    total.wait_for()
    cells = total.locator("td[data-cents]")
    bets, wins = (int(cells.nth(i).get_attribute("data-cents") or "x") for i in (0, 1))
    db_bets = _scalar(server, "SELECT COALESCE(SUM(total_bet), 0) FROM rounds WHERE NOT test "
                              "AND created_at >= :start", **day)
    db_wins = _scalar(server, "SELECT COALESCE(SUM(total_win), 0) FROM rounds WHERE NOT test "
                              "AND created_at >= :start", **day)
    assert (bets, wins) == (db_bets, db_wins)
    assert int(cells.nth(2).get_attribute("data-cents") or "x") == db_bets - db_wins
    with server.engine().connect() as conn:  # and each bet class of the day, row for row
        by_class = {str(b): (n, bet, win) for b, n, bet, win in conn.execute(text(
            "SELECT line_bet, COUNT(*), SUM(total_bet), SUM(total_win) FROM rounds "
            "WHERE NOT test AND created_at >= :start GROUP BY line_bet"), day)}
    shown = {}
    for tr in page.locator(f"#daily-body tr[data-day='{today}']").all():
        if tr.get_attribute("data-line-bet") != "total":
            tds = tr.locator("td")
            shown[tr.get_attribute("data-line-bet")] = (
                int(tds.nth(2).inner_text()),
                *(int(tr.locator("td[data-cents]").nth(i).get_attribute("data-cents") or "x")
                  for i in (0, 1)))
    assert shown == by_class and "5" in shown
    assert page.locator("#rtp-body tr[data-line-bet='5']").count() == 1
    row = page.locator("#rtp-body tr[data-line-bet='5']").inner_text()
    # exact, from the shipped figures of the running default
    theory = rtp_meters.theoretical("default", load_model("default").version)
    assert theory is not None and f"{float(theory.game) * 100:.3f} %" in row
    pool = _scalar(server, "SELECT amount FROM jackpot_pool")
    assert page.inner_text("#pool-facts dd[data-fact='Pool now']") == f"€{pool / 100:,.2f}"
    assert page.locator("[data-testid=refills-body] tr").count() >= 1
    assert page.is_hidden("[data-testid=pending]")  # ledger mode


def test_reports_download_with_the_databases_totals(office: Office, server: Server,
                                                    tmp_path: Path) -> None:
    page = office.page
    office.tab("reports")
    today = datetime.now(UTC).date().isoformat()
    page.fill("[data-testid=r-date]", today)
    with page.expect_download() as csv_download:
        page.click("[data-testid=r-csv]")
    download = csv_download.value
    assert download.suggested_filename == f"starfever-daily-{today}-EUR.csv"
    path = tmp_path / "report.csv"
    download.save_as(path)
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    total = next(r for r in rows if r["line_bet"] == "total")
    day = {"start": datetime.fromisoformat(f"{today} 00:00:00")}
    db = {k: _scalar(server, f"SELECT COALESCE(SUM({c}), 0) FROM rounds WHERE NOT test AND "
                             "created_at >= :start", **day)
          for k, c in (("bets", "total_bet"), ("wins", "total_win"), ("rounds", "1"))}
    assert (int(total["bets"]), int(total["wins"]), int(total["rounds"])) == \
        (db["bets"], db["wins"], db["rounds"])
    assert int(total["ggr"]) == db["bets"] - db["wins"]
    with page.expect_download() as json_download:
        page.click("[data-testid=r-json]")
    json_path = tmp_path / "report.json"
    json_download.value.save_as(json_path)
    report = json.loads(json_path.read_text())
    assert report["total"]["bets"] == db["bets"] and report["period"]["label"] == today
    page.fill("[data-testid=r-date]", "2026-02-30")
    page.click("[data-testid=r-csv]")
    office.wait_text("[data-testid=r-result]", "bad_period")


def test_audit_page_shows_the_last_audit_and_the_chain_heads(office: Office,
                                                             server: Server) -> None:
    page = office.page
    office.tab("audit")
    office.wait_text("[data-testid=audit-last]", "PASSED")
    statement = json.loads(page.inner_text("[data-testid=audit-statement]"))
    assert statement["rounds"]["last_id"] == _scalar(server, "SELECT MAX(id) FROM rounds")
    assert statement["signature"]
    shown = {key: page.inner_text(f"[data-testid={key}]")
             for key in ("software-check", "sw-manifest", "sw-build", "sw-model")}
    identity = expect(server.call("GET", "/operator/software", server.operator_token),
                      200).json()
    assert shown["sw-build"] == identity["software"]["build_sha256"]
    assert shown["sw-manifest"] == (identity["software"]["manifest_sha256"] or "no manifest")
    assert identity["model"]["sha256"] in shown["sw-model"]
    assert shown["software-check"].startswith(
        "VERIFIED" if identity["software"]["ok"] and identity["runtime"]["ok"]
        else "NOT VERIFIED")


def test_events_page_lists_the_significant_events(office: Office) -> None:
    page = office.page
    office.tab("events")
    page.locator("#events-body tr[data-kind]").first.wait_for()
    kinds = set(page.eval_on_selector_all("#events-body tr[data-kind]",
                                          "rows => rows.map(r => r.dataset.kind)"))
    assert {"operator_login", "operator_login_failed", "limit_changed", "pool_refill",
            "audit_passed", "model_changed", "settings_changed"} <= kinds
    page.select_option("[data-testid=ev-kind]", "operator_login_failed")
    page.click("[data-testid=ev-load]")
    page.wait_for_function("() => [...document.querySelectorAll('#events-body tr[data-kind]')]"
                           ".every(r => r.dataset.kind === 'operator_login_failed')")
    assert OPERATOR in page.inner_text("#events-body")


def test_a_logged_out_operator_is_back_at_the_log_in(office: Office) -> None:
    page = office.page
    page.click("[data-testid=logout]")
    page.wait_for_selector("#login:not([hidden])")
    assert page.evaluate("sessionStorage.getItem('sf.operatorToken')") is None
