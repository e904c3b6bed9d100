"""Unpaid wins in the browser (issue 35, finding 1; OPERATOR-WALLET.md rule 5): when the
operator's wallet refuses a winning round's credit, the player's history says the win awaits
the operator's payment, and the back office's Meters page lists it with both sides' ids
instead of saying every credit was acknowledged. A real ``starfever serve --wallet operator``
against the reference wallet, both real processes."""

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
    signed_launch,
    start_server,
)
from tests.web import forcing
from tests.web.browser import ConsoleWatch, backoffice_log_in
from tests.web.conftest import FAST

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet-unpaid"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def server(wallet: OperatorWallet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("unpaid-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, operator_mode_env(wallet),
            args=operator_mode_args(wallet)) as started:
        yield started


def test_the_player_and_the_back_office_see_a_refused_credit_as_unpaid(
        browser: Any, server: Server, wallet: OperatorWallet) -> None:
    player_id = f"web-unpaid-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 5_000)
    token = launched_player(server, wallet.secret, player_id)
    draws = forcing.line_win_draws(load_model("default"))
    paid = expect(server.spin(token, draws=draws), 201).json()["round"]
    wallet.fault("credit", "refuse")
    unpaid = expect(server.spin(token, draws=draws), 201).json()["round"]
    assert unpaid["total_win"] > 0 and unpaid["payment"] == "unpaid"

    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    launch = expect(signed_launch(server, wallet.secret, player_id, language="en"), 200).json()
    page.goto(f"{launch['url']}&speed={FAST}")
    page.wait_for_function("() => window.starfever && window.starfever.ready")
    page.click("#open-history")
    page.locator("#history-list button").first.wait_for()
    refused = page.locator(f'#history-list button[data-round="{unpaid["id"]}"]')
    assert "Win pending payment by the operator" in refused.inner_text()
    credited = page.locator(f'#history-list button[data-round="{paid["id"]}"]')
    assert "pending payment" not in credited.inner_text()

    secret = create_operator(server.database_url, "unpaid-op")
    page.goto(f"{server.url}/operator")
    page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
    backoffice_log_in(page, "unpaid-op", OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
    page.wait_for_selector("#shell:not([hidden])")
    page.click("[data-testid=tab-meters]")
    page.wait_for_selector("[data-testid=unpaid]:not([hidden])")
    assert page.inner_text("#unpaid-facts").startswith("1 wins")
    assert "acknowledged every credit" not in page.inner_text("#pending-facts")
    row = page.locator(f"#unpaid-body tr[data-round='{unpaid['id']}']")
    assert player_id in row.inner_text() and "player_blocked" in row.inner_text()
    context.close()
    assert watch.errors == [], watch.errors
