"""Currencies (ADR 0076) on a real server of two workers, on SQLite and PostgreSQL: a GBP
player's stakes feed only the GBP pool and an EUR player's only the EUR pool, each pool pays
only its own currency's rounds, the reports split per currency, a currency not served is
refused with nothing written, and an operator's launch names the currency every wallet call
then carries."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from sqlalchemy import func, select

from starfever.engine.model import load_model
from starfever.server.models import Account, JackpotPool, LaunchToken, Round, Wallet, WalletCall
from tests.harness import (
    DATABASE_KINDS,
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    expect,
    operator_mode_args,
    operator_mode_env,
    run_cli_in_process,
    signed_launch,
    start_server,
    unique_name,
)
from tests.web.forcing import find_stops

pytestmark = pytest.mark.slow

BOTH = {"STARFEVER_CURRENCIES": "EUR,GBP"}


def _available(databases: Databases, kind: DatabaseKind) -> None:
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def served(request: pytest.FixtureRequest, databases: Databases,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ledger-mode server of two workers serving EUR and GBP."""
    kind: DatabaseKind = request.param
    _available(databases, kind)
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"currencies-{kind}"),
                           BOTH, workers=2)
    with started:
        yield started
    databases.drop(started.database_url)


def _pools(server: Server) -> dict[str, JackpotPool]:
    with server.engine().connect() as conn:
        return {row.currency: row for row in conn.execute(select(JackpotPool))}


def _rounds(server: Server, currency: str) -> list[Round]:
    with server.engine().connect() as conn:
        return list(conn.execute(select(Round).where(Round.currency == currency)))


def _audit_clean(server: Server) -> None:
    done = run_cli_in_process("audit", "--database-url", server.database_url)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_wallet_holds_the_currency_it_was_opened_in(served: Server) -> None:
    game = expect(served.call("GET", "/game"), 200).json()
    assert game["currency"] == "EUR"
    assert [(c["code"], c["exponent"]) for c in game["currencies"]] == [("EUR", 2), ("GBP", 2)]
    assert game["currencies"][1]["line_bets"] == game["bet_classes"]
    _, eur = served.player(deposit=1_000)
    _, gbp = served.player(deposit=1_000, currency="GBP")
    assert expect(served.call("GET", "/wallet", eur), 200).json()["currency"] == "EUR"
    answer = expect(served.call("GET", "/wallet", gbp), 200).json()
    assert answer["currency"] == "GBP" and answer["balance"] == 1_000
    assert answer["line_bets"] == game["currencies"][1]["line_bets"]


def test_a_registration_in_a_currency_not_served_is_refused_with_nothing_written(
        served: Server) -> None:
    name = unique_name()
    refused = served.call("POST", "/players", json={
        "username": name, "password": "a-long-password-1", "birth_date": "1990-01-01",
        "currency": "USD"})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "currency_not_served"
    with served.engine().connect() as conn:
        assert conn.scalar(select(func.count()).select_from(Account)
                           .where(Account.username == name)) == 0


def test_each_currencys_stakes_feed_its_pool_only_across_two_workers(served: Server) -> None:
    """Six players of each currency spin at once through both workers: each pool's
    contributions are exactly its own rounds', and the audit runs each pool from its seed."""
    before = _pools(served)
    players = [(c, served.player(deposit=20_000, currency=c)[1])
               for c in ("EUR", "GBP") for _ in range(6)]
    eur_before, gbp_before = len(_rounds(served, "EUR")), len(_rounds(served, "GBP"))

    def play(item: tuple[str, str]) -> None:
        currency, token = item
        for _ in range(5):
            expect(served.spin(token, line_bet=10 if currency == "GBP" else 5), 201)

    with ThreadPoolExecutor(12) as pool:
        list(pool.map(play, players))
    after = _pools(served)
    for currency, line_bet in (("EUR", 5), ("GBP", 10)):
        rounds = _rounds(served, currency)
        assert len(rounds) - (eur_before if currency == "EUR" else gbp_before) == 30
        new = [r for r in rounds if r.line_bet == line_bet][-30:]
        gained = after[currency].contributions - (before[currency].contributions
                                                  if currency in before else 0)
        assert gained == sum(r.contribution for r in new) > 0
        assert after[currency].amount == (after[currency].contributions - after[currency].wins
                                          + after[currency].refills)
    with served.engine().connect() as conn:  # every round in its wallet's currency
        crossed = conn.scalar(select(func.count()).select_from(Round).join(
            Wallet, Wallet.account_id == Round.account_id).where(
            Wallet.currency != Round.currency))
    assert crossed == 0
    _audit_clean(served)


def test_a_gbp_jackpot_is_paid_from_the_gbp_pool_only(served: Server) -> None:
    stops = find_stops(load_model("default").base_reels,
                       lambda _, ev: bool(ev.jackpot_lines) and ev.star_coins < 4)
    _, gbp = served.player(deposit=10_000, currency="GBP")
    before = _pools(served)
    won = expect(served.spin(gbp, line_bet=50, draws=stops), 201).json()
    after = _pools(served)
    assert after["GBP"].hits == before["GBP"].hits + 1
    assert after["GBP"].wins - before["GBP"].wins == won["round"]["progressive_win"] > 0
    assert (after["EUR"].hits, after["EUR"].wins) == (before["EUR"].hits, before["EUR"].wins)
    gbp_pool = expect(served.call("GET", "/jackpot?currency=GBP"), 200).json()
    assert gbp_pool["currency"] == "GBP" and gbp_pool["pool"] == after["GBP"].amount
    eur_pool = expect(served.call("GET", "/jackpot"), 200).json()
    assert eur_pool["currency"] == "EUR" and eur_pool["pool"] == after["EUR"].amount
    unserved = served.call("GET", "/jackpot?currency=USD")
    assert unserved.status_code == 422
    _audit_clean(served)


def test_reports_and_meters_split_per_currency(served: Server) -> None:
    for currency, line_bet in (("EUR", 3), ("GBP", 4)):
        _, token = served.player(deposit=5_000, currency=currency)
        for _ in range(3):
            expect(served.spin(token, line_bet=line_bet), 201)
    day = served.now().date().isoformat()
    for currency in ("EUR", "GBP"):
        out = run_cli_in_process("report", "daily", "--date", day, "--format", "json",
                                 "--currency", currency, "--include-test",
                                 "--database-url", served.database_url)
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        rounds = [r for r in _rounds(served, currency) if r.created_at.date().isoformat() == day]
        assert report["currency"] == currency
        assert report["total"]["rounds"] == len(rounds) > 0
        assert report["total"]["bets"] == sum(r.total_bet for r in rounds)
        assert report["total"]["contributions"] == sum(r.contribution for r in rounds)
    text = run_cli_in_process("report", "daily", "--date", day, "--currency", "GBP",
                              "--database-url", served.database_url).stdout
    assert "in GBP" in text and "GBP pool:" in text
    for currency in ("EUR", "GBP"):  # the back office's daily lines, of one currency each
        meters = expect(served.call("GET", f"/operator/meters?currency={currency}",
                                    served.operator_token), 200).json()
        today = [d for d in meters["daily"] if d["day"] == day and d["line_bet"] is None]
        paid = [r for r in _rounds(served, currency) if not r.test and r.grant_id is None
                and r.created_at.date().isoformat() == day]
        assert today and today[0]["bets"] == sum(r.total_bet for r in paid) > 0
        assert meters["pool"]["currency"] == currency
        assert [p["currency"] for p in meters["pools"]] == ["EUR", "GBP"]
    metrics = expect(served.http.get(f"{served.url}/metrics"), 200).text
    assert 'starfever_pool_cents{currency="EUR"}' in metrics
    assert 'starfever_pool_cents{currency="GBP"}' in metrics


def test_the_free_rounds_page_gives_each_grant_and_campaign_in_its_currency(
        served: Server) -> None:
    """One campaign for a GBP and an EUR player, each playing its free round in its wallet's
    currency: the back office lists the campaign's cost per currency (each the sum of its own
    rounds), each grant in its currency, and a grant made alone and not yet played in its
    player's wallet's currency (ADR 0078)."""
    players = {code: served.player(deposit=1_000, currency=code) for code in ("GBP", "EUR")}
    start = served.now().replace(microsecond=0).isoformat().replace("+00:00", "Z")
    campaign = f"cur-{uuid.uuid4().hex[:10]}"
    expect(served.call("POST", "/operator/free-rounds/campaigns", served.operator_token, json={
        "campaign_id": campaign, "players": [name for name, _ in players.values()],
        "rounds": 1, "line_bet": 2, "starts_at": start,
        "ends_at": start.replace(start[:4], str(int(start[:4]) + 1))}), 201)
    for _, token in players.values():
        [grant] = expect(served.call("GET", "/free-rounds", token), 200).json()["grants"]
        expect(served.call("POST", "/spins", token, json={"line_bet": 2, "grant_id": grant["id"]},
                           headers={"Idempotency-Key": uuid.uuid4().hex}), 201)
    alone = f"alone-{uuid.uuid4().hex[:10]}"
    expect(served.call("POST", "/operator/free-rounds/grants", served.operator_token, json={
        "grant_id": alone, "player_id": players["GBP"][0], "rounds": 2, "line_bet": 3}), 201)
    listed = expect(served.call("GET", "/operator/free-rounds", served.operator_token),
                    200).json()
    [shown] = [c for c in listed["campaigns"] if c["campaign_id"] == campaign]
    for cost in shown["costs"]:
        mine = [r for r in _rounds(served, cost["currency"]) if r.grant_id is not None
                and r.line_bet == 2 and r.account_id in _accounts(served, players)]
        assert cost["rounds_played"] == len(mine) == 1
        assert cost["winnings"] == sum(r.paid_win for r in mine)
        assert cost["jackpot_funding"] == sum(r.contribution for r in mine)
    assert [c["currency"] for c in shown["costs"]] == ["EUR", "GBP"]
    grants = {g["grant_id"]: g for g in listed["grants"]}
    mine = [g for g in grants.values() if g["campaign_id"] == campaign]
    assert sorted(g["currency"] for g in mine) == ["EUR", "GBP"]
    assert all([c["currency"] for c in g["costs"]] == [g["currency"]] for g in mine)
    assert grants[alone]["currency"] == "GBP" and grants[alone]["costs"] == []


def _accounts(server: Server, players: dict[str, tuple[str, str]]) -> set[int]:
    with server.engine().connect() as conn:
        return set(conn.scalars(select(Account.id).where(
            Account.username.in_([name for name, _ in players.values()]))))


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield started
    started.stop()


@pytest.mark.parametrize("kind", DATABASE_KINDS)
def test_a_launch_names_its_currency_and_one_not_served_is_refused(
        kind: DatabaseKind, databases: Databases, wallet: OperatorWallet,
        tmp_path: Path) -> None:
    _available(databases, kind)
    server = start_server(databases, kind, tmp_path, {**operator_mode_env(wallet), **BOTH},
                          workers=2, args=operator_mode_args(wallet))
    try:
        player_id = f"op-{uuid.uuid4().hex[:10]}"
        wallet.player(player_id, 10_000)
        refused = signed_launch(server, wallet.secret, player_id, currency="USD")
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "currency_not_served"
        with server.engine().connect() as conn:  # nothing written: no token, no account
            assert conn.scalar(select(func.count()).select_from(LaunchToken)) == 0
            assert conn.scalar(select(func.count()).select_from(Account)
                               .where(Account.external_id == player_id)) == 0
        url = expect(signed_launch(server, wallet.secret, player_id, currency="GBP"),
                     200).json()["url"]
        launch = parse_qs(urlparse(url).query)["launch"][0]
        token = expect(server.call("POST", "/sessions", json={"launch_token": launch}),
                       201).json()["token"]
        assert expect(server.call("GET", "/wallet", token), 200).json()["currency"] == "GBP"
        expect(server.spin(token, line_bet=10), 201)
        assert [t["method"] for t in wallet.transactions(player_id)] == ["debit", "credit"]
        with server.engine().connect() as conn:  # what was sent: the calls' own records
            sent = list(conn.execute(select(WalletCall.kind, WalletCall.currency)))
        assert sorted(sent) == [("credit", "GBP"), ("debit", "GBP")]
        rounds = _rounds(server, "GBP")
        assert len(rounds) == 1 and _pools(server)["GBP"].contributions == rounds[0].contribution
        assert _pools(server)["EUR"].contributions == 0
        _one_player_in_two_currencies(server, wallet, player_id)
        _a_demo_launch_keeps_its_currency(server, wallet, player_id)
    finally:
        server.stop()
        databases.drop(server.database_url)


def _one_player_in_two_currencies(server: Server, wallet: OperatorWallet,
                                  player_id: str) -> None:
    """The same operator player launched in EUR too (after GBP): the back office's file gives
    rounds, bets and wins per currency, never one sum of pence and cents (ADR 0078)."""
    url = expect(signed_launch(server, wallet.secret, player_id, currency="EUR"),
                 200).json()["url"]
    token = expect(server.call("POST", "/sessions", json={
        "launch_token": parse_qs(urlparse(url).query)["launch"][0]}), 201).json()["token"]
    for _ in range(2):
        expect(server.spin(token, line_bet=5), 201)
    [line] = expect(server.call("GET", f"/operator/search/players?q={player_id}",
                                server.operator_token), 200).json()["players"]
    file = expect(server.call("GET", f"/operator/players/{line['username']}",
                              server.operator_token), 200).json()
    with server.engine().connect() as conn:
        stored = {code: (n, bets, wins) for code, n, bets, wins in conn.execute(
            select(Round.currency, func.count(), func.sum(Round.total_bet),
                   func.sum(Round.total_win)).group_by(Round.currency))}
    assert {t["currency"]: (t["rounds"], t["total_bet"], t["total_win"])
            for t in file["totals"]} == stored
    assert set(stored) == {"EUR", "GBP"} and file["rounds"] == 3
    assert file["total_bet"] is None and file["total_win"] is None  # no sum of two currencies


def _a_demo_launch_keeps_its_currency(server: Server, wallet: OperatorWallet,
                                      player_id: str) -> None:
    """A demo launch in GBP opens a demo session whose amounts are in pounds; its token names
    the currency under the stored hash, so another currency in it is no token."""
    url = expect(signed_launch(server, wallet.secret, player_id, currency="GBP", mode="demo"),
                 200).json()["url"]
    launch = parse_qs(urlparse(url).query)["demo_launch"][0]
    opened = expect(server.call("POST", "/demo/sessions", json={"launch_token": launch}),
                    201).json()
    assert opened["currency"] == "GBP"
    shown = expect(server.call("GET", "/demo/wallet", opened["token"]), 200).json()
    assert (shown["currency"], shown["balance"]) == ("GBP", opened["balance"])
    forged = opened["token"].rsplit(".", 1)[0] + ".EUR"
    refused = server.call("GET", "/demo/wallet", forged)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_demo_token"
    plain = expect(signed_launch(server, wallet.secret, player_id, mode="demo"), 200).json()
    token = expect(server.call("POST", "/demo/sessions", json={
        "launch_token": parse_qs(urlparse(plain["url"]).query)["demo_launch"][0]}),
        201).json()["token"]
    assert expect(server.call("GET", "/demo/wallet", token), 200).json()["currency"] == "EUR"
