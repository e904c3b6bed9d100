"""Issue 36 item 3, ADR 0081: every call Star Fever sends to the operator's wallet (balance,
debit, credit, rollback, a free round's, every resend) carries the launch's
``operator_session`` and, when the launch named one, its ``brand``; a resend or rollback after a
restart carries the values stored with its session, not what a process remembers. In process
(the app of ``starfever serve --wallet operator``), on SQLite and on PostgreSQL, against the
reference wallet behind a proxy that records every call that reaches it, repeats included."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, text

from starfever.seamless import protocol
from starfever.server import clock
from starfever.server.app import create_app
from starfever.server.db import Database
from starfever.server.reconcile import reconcile
from starfever.server.reports import TOTAL_BRAND, as_csv, as_text, build_report, period_of
from starfever.server.seamless_config import OperatorConfig
from starfever.server.spin.seamless_wallet import SeamlessWallet
from tests.harness import (
    DATABASE_KINDS,
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    DatabaseKind,
    Databases,
    OperatorWallet,
    create_operator,
    expect,
    operator_log_in,
    run_cli_in_process,
    settings_like_servers,
)
from tests.seamless.mitm import ManInTheMiddle, mitm
from tests.seamless.operator_mode import wait_for

API = "http://testserver/api/v1"
RETRY_S = 600.0
"""The app's resend interval: its own resender never gets to a call here (a test resends)."""


@dataclass
class App:
    client: TestClient
    engine: Engine
    url: str
    secret: str
    totp: str

    def session(self, player_id: str, operator_session: str, **fields: Any) -> str:
        body = protocol.encode({
            "launch_id": f"launch-{uuid.uuid4().hex}", "player_id": player_id,
            "operator_session": operator_session, "currency": "EUR", "language": "de",
            "market": "at", "mode": "real", "return_url": "https://operator.example/lobby",
            **fields}, clock.now())
        launched = self.client.post(f"{API}/launch", content=body, headers={
            "Content-Type": "application/json",
            protocol.OPERATOR_SIGNATURE: protocol.sign(self.secret, body)})
        token = parse_qs(urlparse(expect(launched, 200).json()["url"]).query)["launch"][0]
        return str(expect(self.client.post(f"{API}/sessions", json={"launch_token": token}),
                          201).json()["token"])

    def spin(self, token: str) -> Any:
        return self.client.post(f"{API}/spins", json={"line_bet": 1}, headers={
            "Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex})

    def calls(self, player_id: str, kind: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(text(
                "SELECT c.* FROM wallet_calls c JOIN accounts a ON a.id = c.account_id "
                "WHERE a.external_id = :p AND c.kind = :k ORDER BY c.id"),
                {"p": player_id, "k": kind})]


@pytest.fixture(scope="module")
def proxy(wallet: OperatorWallet) -> Iterator[ManInTheMiddle]:
    with mitm(wallet.url) as counting:
        yield counting


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def app(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
        proxy: ManInTheMiddle) -> Iterator[App]:
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    url = databases.new(kind)
    totp = create_operator(url)
    config = OperatorConfig(url=proxy.url, secret=wallet.secret, timeout=5, retry=RETRY_S,
                            public_url="http://testserver")
    engine = create_engine(url)
    try:
        with TestClient(create_app(settings_like_servers(url), operator_mode=config)) as client:
            yield App(client, engine, url, wallet.secret, totp)
    finally:
        engine.dispose()
        clock.reset()
        databases.drop(url)


def _sent(proxy: ManInTheMiddle, player_id: str) -> list[tuple[str, dict[str, Any]]]:
    """Every call of the player's that reached the proxy (each send of it)."""
    return [(m, b) for m, b in proxy.requests if b.get("player_id") == player_id]


def _restarted(app: App, proxy: ManInTheMiddle) -> SeamlessWallet:
    """A new process's wallet on the same database: nothing of the app's in its memory."""
    return SeamlessWallet(Database(app.url),
                          OperatorConfig(url=proxy.url, secret=app.secret, timeout=5, retry=0.2,
                                         public_url="http://testserver"),
                          details_key=b"k" * 32)


def test_every_call_of_a_spin_and_the_balance_carries_the_session_and_the_brand(
        app: App, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    player_id = f"brand-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 100_000)
    token = app.session(player_id, f"opsess-{player_id}", brand="casino-nord")
    expect(app.spin(token), 201)
    expect(app.client.get(f"{API}/wallet", headers={"Authorization": f"Bearer {token}"}), 200)
    sent = _sent(proxy, player_id)
    assert {m for m, _ in sent} == {"debit", "credit", "balance"}
    assert {(b["operator_session"], b["brand"]) for _, b in sent} == \
        {(f"opsess-{player_id}", "casino-nord")}
    # the operator keeps them with each call (the reference wallet's books)
    assert {(t["method"], t["operator_session"], t["brand"])
            for t in wallet.transactions(player_id)} == \
        {("debit", f"opsess-{player_id}", "casino-nord"),
         ("credit", f"opsess-{player_id}", "casino-nord")}

    # a launch without a brand: no brand on any call (never an empty or made-up one)
    plain = f"plain-{uuid.uuid4().hex[:10]}"
    wallet.player(plain, 100_000)
    expect(app.spin(app.session(plain, f"opsess-{plain}")), 201)
    assert [("brand" in b, b["operator_session"]) for _, b in _sent(proxy, plain)] == \
        [(False, f"opsess-{plain}")] * 2


def test_a_rollback_and_a_resend_after_a_restart_carry_what_the_session_stored(
        app: App, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    """A credit and a rollback the wallet failed (500, not applied) stay pending; the player
    launches again (another operator session, another brand) before a new process resends
    them: each still carries the session and brand of the spin it belongs to."""
    player_id = f"resend-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 100_000)
    first = app.session(player_id, "opsess-first", brand="casino-nord")
    wallet.fault("credit", "error")
    assert expect(app.spin(first), 201).json()["round"]["payment"] == "pending"
    wallet.fault("debit", "error")
    wallet.fault("rollback", "error")
    refused = app.spin(first)
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "wallet_unavailable"
    wait_for(lambda: [c["attempts"] for c in app.calls(player_id, "rollback")] == [1])
    assert [(c["status"], c["attempts"]) for c in app.calls(player_id, "credit")] == \
        [("pending", 1)]
    assert wallet.transactions(player_id)[-1]["method"] == "debit"  # neither reached its books
    later = app.session(player_id, "opsess-later", brand="casino-sued")
    expect(app.spin(later), 201)

    before = len(proxy.requests)
    clock.advance(RETRY_S + 1)  # the failed calls' backoff has passed
    try:
        restarted = _restarted(app, proxy)
        try:
            assert restarted.resend_due() >= 2
        finally:
            restarted.client.close()
            restarted.db.dispose()
    finally:
        clock.reset()
    resent = {m: b for m, b in proxy.requests[before:] if b.get("player_id") == player_id}
    assert set(resent) == {"credit", "rollback"}
    for body in resent.values():
        assert (body["operator_session"], body["brand"]) == ("opsess-first", "casino-nord")
    books = {t["method"]: t for t in wallet.transactions(player_id)
             if t["transaction_id"] in {b["transaction_id"] for b in resent.values()}}
    assert {m: (t["operator_session"], t["brand"], t["applied"]) for m, t in books.items()} \
        == {"credit": ("opsess-first", "casino-nord", True),
            "rollback": ("opsess-first", "casino-nord", False)}  # (of a debit it never took)
    # every send of every call of the player, first sends and resends, carried its session's
    assert {(b["operator_session"], b["brand"]) for _, b in _sent(proxy, player_id)} == \
        {("opsess-first", "casino-nord"), ("opsess-later", "casino-sued")}
    assert [c["status"] for c in app.calls(player_id, "credit")] == ["acknowledged"] * 2


def test_a_free_rounds_calls_carry_the_session_and_the_brand(
        app: App, wallet: OperatorWallet, proxy: ManInTheMiddle) -> None:
    player_id = f"free-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 0)  # a free round debits nothing
    token = app.session(player_id, f"opsess-{player_id}", brand="casino-ost")
    grant_id = f"g-{uuid.uuid4().hex[:8]}"
    body = protocol.encode({"grant_id": grant_id, "player_id": player_id, "rounds": 1,
                            "line_bet": 1}, clock.now())
    made = expect(app.client.post(f"{API}/operator-api/free-rounds/grants", content=body,
                                  headers={"Content-Type": "application/json",
                                           protocol.OPERATOR_SIGNATURE:
                                               protocol.sign(app.secret, body)}), 201).json()
    expect(app.client.post(f"{API}/spins", json={"line_bet": 1, "grant_id": made["id"]},
                           headers={"Authorization": f"Bearer {token}",
                                    "Idempotency-Key": uuid.uuid4().hex}), 201)
    sent = _sent(proxy, player_id)
    assert [(m, b["free_round"]["grant_id"], b["operator_session"], b["brand"])
            for m, b in sent] == [(m, grant_id, f"opsess-{player_id}", "casino-ost")
                                  for m in ("debit", "credit")]


def test_the_protocol_checks_a_brand_and_takes_a_rollbacks_session() -> None:
    """``brand`` is optional on every method and checked where present; a rollback may carry
    its session's ``operator_session`` and ``brand`` (ADR 0081)."""
    now = clock.now()
    rollback = {"request_id": "q-1", "transaction_id": "sfb-1", "round_id": "sfr-1",
                "player_id": "p-1", "debit_transaction_id": "sfd-1",
                "timestamp": protocol.timestamp(now)}
    protocol.check_request("rollback", rollback, now)  # version 1's shape still holds
    protocol.check_request("rollback", {**rollback, "operator_session": "op-s",
                                        "brand": "casino-nord"}, now)
    balance = {"request_id": "q-2", "player_id": "p-1", "session_id": "sfs-1",
               "operator_session": "op", "currency": "EUR",
               "timestamp": protocol.timestamp(now)}
    protocol.check_request("balance", {**balance, "brand": "casino.nord:1"}, now)
    for bad in ("", "a" * 65, "casino nord", "<b>", 7, None):
        with pytest.raises(protocol.ProtocolError, match="brand"):
            protocol.check_request("balance", {**balance, "brand": bad}, now)


def test_the_reports_break_the_spins_down_by_brand(app: App, wallet: OperatorWallet) -> None:
    """``starfever report --by brand`` (text and CSV, and the back office's download) has a
    row per brand, adding up to the total; ``reconcile`` names each spin's session and
    brand."""
    day = clock.now().date().isoformat()
    players = {}
    for brand in ("casino-west", None):
        player_id = f"rep-{uuid.uuid4().hex[:10]}"
        wallet.player(player_id, 100_000)
        token = app.session(player_id, f"opsess-{player_id}",
                            **({"brand": brand} if brand else {}))
        for _ in range(2):
            expect(app.spin(token), 201)
        players[brand] = player_id
    db = Database(app.url)
    try:
        report = build_report(db, period_of("daily", day))
        spins = {s.player_id: s for s in reconcile(db).spins}
    finally:
        db.dispose()
    rows = list(csv.DictReader(io.StringIO(as_csv(report, "brand"))))
    assert list(rows[0]) == ["period", "currency", "markets", "brand", "rounds", "bets",
                             "wins", "jackpot_wins", "ggr", "rtp", "contributions",
                             "refills", "jackpot_hits",
                             "star_wild_rounds", "hold_and_cash_rounds", "unpaid_rounds",
                             "unpaid_wins", "free_rounds", "free_round_wins",
                             "settled_rounds", "settled_wins"]
    named = {r["brand"]: r for r in rows}
    assert named["casino-west"]["rounds"] == "2" and int(named["(none)"]["rounds"]) >= 2
    assert rows[-1]["brand"] == TOTAL_BRAND
    for field in ("rounds", "bets", "wins", "ggr"):
        assert sum(int(r[field]) for r in rows[:-1]) == int(rows[-1][field]), field
    text_form = as_text(report, "brand")
    assert "      brand" in text_form.splitlines()[1]
    assert any(line.strip().startswith("casino-west ") for line in text_form.splitlines())
    cli = run_cli_in_process("report", "daily", "--date", day, "--by", "brand", "--format",
                             "csv", "--database-url", app.url)
    assert cli.returncode == 0 and cli.stdout == as_csv(report, "brand"), cli.stderr
    refused = run_cli_in_process("report", "daily", "--date", day, "--by", "player",
                                 "--database-url", app.url)
    assert refused.returncode == 2 and "--by" in refused.stderr
    token = expect(operator_log_in(app.client, API, OPERATOR_USERNAME, OPERATOR_PASSWORD,
                                   app.totp), 201).json()["token"]
    download = app.client.get(f"{API}/operator/reports/daily", params={
        "date": day, "by": "brand"}, headers={"Authorization": f"Bearer {token}"})
    assert "casino-west" in {r["brand"] for r in csv.DictReader(io.StringIO(
        expect(download, 200).text))}
    assert app.client.get(f"{API}/operator/reports/daily", params={"date": day, "by": "x"},
                          headers={"Authorization": f"Bearer {token}"}).status_code == 422

    west, plain = spins[players["casino-west"]], spins[players[None]]
    assert (west.operator_session, west.brand) == (f"opsess-{players['casino-west']}",
                                                   "casino-west")
    assert (plain.operator_session, plain.brand) == (f"opsess-{players[None]}", None)
    listed = run_cli_in_process("reconcile", "--full", "--json", "--player",
                                players["casino-west"], "--database-url", app.url)
    assert {s["brand"] for s in json.loads(listed.stdout)["listing"]} == {"casino-west"}
