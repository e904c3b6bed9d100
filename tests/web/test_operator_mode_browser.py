"""Operator mode in the browser (issue 14 point 3): the operator's launch URL opens the game with
no register or log-in screen, the balance shown is the operator wallet's after every round, and
the exit leads to the launch's return_url. A real ``starfever serve --wallet operator`` against
the reference operator wallet (``starfever operator-wallet-demo``), both real processes."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pyotp
import pytest
from sqlalchemy import text

from starfever.markets import load_market
from starfever.seamless import protocol
from tests.harness import (
    OPERATOR_PASSWORD,
    Databases,
    OperatorWallet,
    Server,
    create_operator,
    expect,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    signed_launch,
    start_server,
)
from tests.web.browser import ConsoleWatch, backoffice_log_in
from tests.web.conftest import FAST, Game

pytestmark = pytest.mark.browser

RETURN_URL = "https://operator.example/lobby"


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet-web"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def operator_server(wallet: OperatorWallet,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("operator-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, operator_mode_env(wallet),
            args=operator_mode_args(wallet)) as started:
        yield started


def _launch(server: Server, wallet: OperatorWallet, player_id: str, **fields: Any) -> str:
    answer = expect(signed_launch(server, wallet.secret, player_id, language="en",
                                  return_url=RETURN_URL, **fields), 200).json()
    assert answer["market"] == load_market("at").public()  # the profile the game plays
    return f"{answer['url']}&speed={FAST}"


def test_a_launched_player_plays_with_the_operators_balance(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    player_id = f"web-op-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 5_000)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    game = Game(page, operator_server, watch)
    page.goto(_launch(operator_server, wallet, player_id))
    page.wait_for_function("() => window.starfever && window.starfever.ready")
    page.wait_for_selector("#game:not([hidden])")
    assert not page.is_visible("#auth") and not page.is_visible("#auth-form")
    assert "launch=" not in page.url  # the single-use token is out of the address
    assert not page.is_visible("#logout") and not page.is_visible("#open-protection")
    assert page.get_attribute("#exit", "href") == RETURN_URL and page.is_visible("#exit")
    assert game.cents("#balance") == wallet.balance(player_id) == 5_000
    for _ in range(6):
        played = game.spin()
        assert game.cents("#balance") == wallet.balance(player_id) == played["balance_after"]
    page.reload()  # the session stays; the balance is still the operator's
    page.wait_for_function("() => window.starfever.ready")
    page.wait_for_selector("#game:not([hidden])")
    assert game.cents("#balance") == wallet.balance(player_id)
    assert not page.is_visible("#auth")
    context.close()
    assert watch.errors == [], watch.errors


def test_a_used_launch_shows_no_log_in_screen_and_another_market_is_refused(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    player_id = f"web-op-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 1_000)
    url = _launch(operator_server, wallet, player_id)
    token = url.split("launch=")[1].split("&")[0]
    expect(operator_server.call("POST", "/sessions", json={"launch_token": token}), 201)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    page.goto(url)
    page.wait_for_function("() => window.starfever && window.starfever.ready")
    assert not page.is_visible("#auth")
    assert "expired or was used" in page.inner_text("#status")
    assert page.get_attribute("#exit", "href") == RETURN_URL
    context.close()
    assert watch.errors == [], watch.errors
    refused = signed_launch(operator_server, wallet.secret, player_id, market="strict")
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "market_not_served"


def test_the_back_office_meters_list_the_credits_pending(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    """Issue 16: the meters page shows, in operator mode, the credits the operator's wallet has
    not acknowledged yet, each with its player and round, as the database holds them."""
    secret = create_operator(operator_server.database_url, "pending-op")
    player_id = f"web-op-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 5_000)
    token = launched_player(operator_server, wallet.secret, player_id)
    wallet.fault("credit", "error", times=10_000)  # every credit of this round fails
    try:
        played = expect(operator_server.spin(token, line_bet=1), 201).json()["round"]
        with operator_server.engine().connect() as conn:
            pending = conn.execute(text(
                "SELECT transaction_id, round_id FROM wallet_calls WHERE kind = 'credit' "
                "AND status = 'pending'")).all()
        assert [r.round_id for r in pending] == [played["id"]]
        context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
        page = context.new_page()
        watch = ConsoleWatch(page)
        page.goto(f"{operator_server.url}/operator")
        page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
        backoffice_log_in(page, "pending-op", OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
        page.wait_for_selector("#shell:not([hidden])")
        page.click("[data-testid=tab-meters]")
        page.wait_for_selector("[data-testid=pending]:not([hidden])")
        assert page.inner_text("#pending-facts").startswith("1 credits")
        row = page.locator(f"#pending-body tr[data-transaction='{pending[0].transaction_id}']")
        assert row.get_attribute("data-round") == str(played["id"])
        assert player_id in row.inner_text()
        context.close()
        assert watch.errors == [], watch.errors
    finally:
        wallet.clear_faults()


def test_the_back_office_finds_a_round_by_the_operators_ids_and_shows_both_sides_ids(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    """Issue 35, finding 2: support types what the operator's books say (its player id and
    its transaction id of the credit) and gets the round, whose recall lists its debit and
    credit with Star Fever's ids and the operator's, as the reference wallet recorded them."""
    secret = create_operator(operator_server.database_url, "support-op")
    player_id = f"web-op-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 5_000)
    token = launched_player(operator_server, wallet.secret, player_id)
    rounds = [expect(operator_server.spin(token, line_bet=1), 201).json()["round"]["id"]
              for _ in range(2)]
    theirs = [t for t in wallet.transactions(player_id) if t["applied"]]
    credit = next(t for t in theirs if t["method"] == "credit")  # the first round's
    debit = next(t for t in theirs if t["method"] == "debit"
                 and t["round_id"] == credit["round_id"])
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    page.goto(f"{operator_server.url}/operator")
    page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
    backoffice_log_in(page, "support-op", OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
    page.wait_for_selector("#shell:not([hidden])")
    page.click("[data-testid=tab-rounds]")

    def found(asked: str) -> list[int]:
        """Press Search and wait for the answer to the search that asks for ``asked``."""
        with page.expect_response(lambda r: "/operator/rounds?" in r.url and asked in r.url
                                  and r.request.method == "GET") as answer:
            page.click("[data-testid=rs-search]")
        assert answer.value.ok, answer.value.status
        page.wait_for_function("() => !document.querySelector('#rounds-body').dataset.loading")
        return [int(i) for i in page.eval_on_selector_all(
            "#rounds-body tr[data-round]", "rows => rows.map(r => r.dataset.round)")]

    page.fill("[data-testid=rs-player-id]", player_id)
    assert found(f"player_id={player_id}") == rounds[::-1]
    page.fill("[data-testid=rs-op-txn]", str(credit["operator_transaction_id"]))
    assert found(f"operator_transaction_id={credit['operator_transaction_id']}") == [rounds[0]]
    page.locator(f"#rounds-body tr[data-round='{rounds[0]}'] button").click()
    page.wait_for_selector("[data-testid=recall-calls]:not([hidden])")
    for call in (debit, credit):
        row = page.locator(f"#recall-calls-body tr[data-transaction='{call['transaction_id']}']")
        text_ = row.inner_text()
        assert call["method"] in text_ and str(call["operator_transaction_id"]) in text_
    context.close()
    assert watch.errors == [], watch.errors


def test_a_wallet_hiccup_is_not_played_and_a_pending_credit_is_said(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    """Issue 38: the operator's wallet fails a debit (503 wallet_unavailable, rolled back):
    the page says "not played, your stake was not taken", drops the request (never resends
    its key, which could only get 409 debit_rolled_back), and the next Spin is a new bet with
    a new key. A credit the wallet has not acknowledged: the page shows the wallet's balance
    and says the win is on its way, instead of a number GET /wallet does not have."""
    player_id = f"web-op-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 5_000)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    watch.allow("status of 503")
    game = Game(page, operator_server, watch)
    page.goto(_launch(operator_server, wallet, player_id))
    page.wait_for_selector("#game:not([hidden])")
    keys: list[str] = []
    page.on("request", lambda r: keys.append(r.headers.get("idempotency-key", ""))
            if r.url.endswith("/api/v1/spins") else None)
    wallet.fault("debit", "error", times=1)
    try:
        page.click("#spin")
        game.wait_text("#status", "not played: your stake was not taken")
        game.wait_idle()
        assert len(keys) == 1  # not resent with its key
        assert page.evaluate("localStorage.getItem('sf.spinInFlight')") is None
        assert game.cents("#balance") == wallet.balance(player_id) == 5_000
        played = game.spin()  # the next click: a new bet, a new key
        assert len(set(keys)) == 2
        assert game.cents("#balance") == wallet.balance(player_id) == played["balance_after"]
        wallet.fault("credit", "error", times=10_000)
        for _ in range(40):  # until a round wins (its credit then stays pending)
            won = game.spin()
            if won["total_win"]:
                break
        assert won["total_win"] and won["payment"] == "pending"
        game.wait_text("#credit-notice", "is being credited")
        page.wait_for_function(
            f"document.querySelector('#balance').dataset.cents === '{wallet.balance(player_id)}'",
            timeout=5_000)
        assert game.cents("#balance") == won["balance_after"] - won["total_win"]
    finally:
        wallet.clear_faults()
    context.close()
    assert watch.errors == [], watch.errors


def test_a_free_round_grant_plays_in_the_browser_against_the_operators_wallet(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    """Issue 36 in operator mode, as the player sees it: a grant made through the operator's
    signed API shows in the launched game, its own button plays it to the end, the operator's
    wallet sees a debit of 0 and a credit of the paid win, each with the ``free_round`` block,
    and the balance on the page is the wallet's (nothing staked)."""
    player_id = f"web-fr-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 2_000)
    grant_id = f"webop-{player_id}"
    body = protocol.encode({"grant_id": grant_id, "player_id": player_id, "rounds": 2,
                            "line_bet": 5}, operator_server.now())
    expect(operator_server.call("POST", "/operator-api/free-rounds/grants", content=body, headers={
        "Content-Type": "application/json",
        protocol.OPERATOR_SIGNATURE: protocol.sign(wallet.secret, body)}), 201)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    game = Game(page, operator_server, watch)
    page.goto(_launch(operator_server, wallet, player_id))
    page.wait_for_function("() => window.starfever && window.starfever.ready")
    page.wait_for_selector("[data-testid=free-grant]")
    assert "2 free rounds left" in game.text("[data-testid=freerounds]")
    paid = 0
    for _ in range(2):
        before = page.evaluate("window.starfever.rounds")
        page.click("[data-testid=play-free]")
        page.wait_for_function(
            f"window.starfever.rounds > {before} && !window.starfever.state.busy")
        played = page.evaluate("window.starfever.state.lastRound")
        assert played["total_bet"] == 100 and played["free_round"]["grant_id"] == grant_id
        paid += played["free_round"]["paid_win"]
    assert page.locator("[data-testid=free-grant]").count() == 0
    assert "All free rounds played" in game.text("[data-testid=free-note]")
    # the credits close the rounds: acknowledged at once, or by the resender a moment later
    deadline = time.monotonic() + 30
    while wallet.balance(player_id) != 2_000 + paid and time.monotonic() < deadline:
        time.sleep(0.2)
    assert wallet.balance(player_id) == 2_000 + paid
    calls = [c for c in wallet.transactions(player_id) if c["method"] in ("debit", "credit")]
    assert sorted(c["method"] for c in calls) == ["credit", "credit", "debit", "debit"]
    assert all(c["free_round"]["grant_id"] == grant_id for c in calls)
    assert [c["amount"] for c in calls if c["method"] == "debit"] == [0, 0]
    assert sum(c["amount"] for c in calls if c["method"] == "credit") == paid
    page.wait_for_function(f"Number(document.querySelector('#balance').dataset.cents)"
                           f" === {2_000 + paid}")
    context.close()
    assert watch.errors == [], watch.errors
