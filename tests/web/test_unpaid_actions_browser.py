"""The back office's buttons for unpaid wins and for what the wallet does (issue 35 items 1 and
5, ADR 0061), in Chromium: in operator mode the page offers no Cashier and no Exclude (the
server says the operator keeps them, ``GET /operator/wallet``), while a ledger server's page
does; an operator resends an unpaid win's credit and sees it paid; one operator proposes a
manual settlement and cannot approve it, a second approves it, and the round's view says
"settled manually". A real ``starfever serve --wallet operator`` against the reference wallet,
both real processes, and the session's ledger server for the contrast."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pyotp
import pytest

from starfever.engine import load_model
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
    start_server,
)
from tests.web import forcing
from tests.web.browser import ConsoleWatch, backoffice_log_in

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet-settle"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def operator_server(wallet: OperatorWallet,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("settle-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, operator_mode_env(wallet),
            args=operator_mode_args(wallet)) as started:
        yield started


def _back_office(browser: Any, server: Server, name: str) -> tuple[Any, Any, ConsoleWatch]:
    """A fresh context logged in to ``server``'s back office as a new operator ``name``."""
    secret = create_operator(server.database_url, name)
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    page.goto(f"{server.url}/operator")
    page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
    backoffice_log_in(page, name, OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
    page.wait_for_selector("#shell:not([hidden])")
    return context, page, watch


def _unpaid_win(server: Server, wallet: OperatorWallet) -> int:
    player_id = f"web-settle-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 5_000)
    token = launched_player(server, wallet.secret, player_id)
    wallet.fault("credit", "refuse")
    played = expect(server.spin(token, draws=forcing.line_win_draws(load_model("default"))),
                    201).json()["round"]
    assert played["payment"] == "unpaid"
    return int(played["id"])


def test_the_ledger_back_office_offers_cashier_and_exclusion(browser: Any,
                                                             server: Server) -> None:
    context, page, watch = _back_office(browser, server, f"ledger-{uuid.uuid4().hex[:6]}")
    assert page.locator("[data-testid=tab-cashier]").is_visible()
    name, _ = server.player()
    page.fill("[data-testid=player-q]", name)
    page.click("[data-testid=player-search]")
    page.click(f"[data-open-player='{name}']")
    page.wait_for_selector("[data-testid=player-file]:not([hidden])")
    assert page.locator("[data-testid=pf-exclude]").is_visible()
    context.close()
    assert watch.errors == [], watch.errors


def test_an_operator_resends_and_two_operators_settle_unpaid_wins(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    server = operator_server
    to_resend, to_settle = _unpaid_win(server, wallet), _unpaid_win(server, wallet)
    first, page, watch = _back_office(browser, server, "settle-web-a")
    assert page.locator("[data-testid=tab-cashier]").is_hidden()  # the operator's money
    page.fill("[data-testid=player-q]", "op-")
    page.click("[data-testid=player-search]")
    page.locator("[data-open-player]").first.click()
    page.wait_for_selector("[data-testid=player-file]:not([hidden])")
    assert page.locator("#pf-exclude").is_hidden()  # and the operator's exclusions

    page.click("[data-testid=tab-meters]")
    page.wait_for_selector(f"#unpaid-body tr[data-round='{to_resend}'] [data-resend]")
    page.click(f"#unpaid-body tr[data-round='{to_resend}'] [data-resend]")
    page.wait_for_function("() => document.querySelector('[data-testid=status]').textContent"
                           ".includes('the win is paid')")
    page.wait_for_selector(f"#unpaid-body tr[data-round='{to_resend}']", state="detached")

    row = page.locator(f"#unpaid-body tr[data-round='{to_settle}']")
    row.locator("input[name=reason]").fill("Paid by the operator's cashier, ticket 4711")
    row.locator("button[type=submit]").click()
    page.wait_for_selector(f"#unpaid-body tr[data-round='{to_settle}'] [data-proposal]")
    row = page.locator(f"#unpaid-body tr[data-round='{to_settle}']")
    assert "Awaiting another operator's approval" in row.inner_text()
    assert row.locator("[data-approve]").count() == 0  # never the proposer's own
    first.close()

    second, page, watch_b = _back_office(browser, server, "settle-web-b")
    page.click("[data-testid=tab-meters]")
    page.click(f"#unpaid-body tr[data-round='{to_settle}'] [data-approve]")
    page.wait_for_function("() => document.querySelector('[data-testid=status]').textContent"
                           ".includes('is settled manually')")
    page.wait_for_selector(f"#unpaid-body tr[data-round='{to_settle}']", state="detached")
    assert "1 refused wins" in page.inner_text("#unpaid-facts")

    page.click("[data-testid=tab-rounds]")
    page.fill("[data-testid=rs-id]", str(to_settle))
    page.click("[data-testid=rs-search]")
    page.click(f"#rounds-body [data-recall='{to_settle}']")
    page.wait_for_selector("[data-testid=recall-payment]:not([hidden])")
    assert page.get_attribute("[data-testid=recall-payment]",
                              "data-payment") == "settled_manually"
    assert "Settled manually" in page.inner_text("[data-testid=recall-payment]")
    second.close()
    assert watch.errors == [] and watch_b.errors == [], watch.errors + watch_b.errors
