"""The back office's Controls page (ADR 0067), in Chromium against the session's real server
(ledger mode): an operator closes the game for maintenance with a reason and sees its state,
players' spins are refused until it opens the game again; an operator ends a player's
sessions and the player's next spin is refused, and the list of terminated sessions shows whose
ended, when, by whom and why; a refusal is shown with its code."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pyotp
import pytest

from tests.harness import OPERATOR_PASSWORD, Server, create_operator, expect
from tests.web.browser import ConsoleWatch, backoffice_log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def office(browser: Any, server: Server) -> Iterator[Any]:
    """The back office logged in as an operator of its own, on its Controls page: the page,
    its console watch and the operator's name."""
    name = f"controls-{uuid.uuid4().hex[:6]}"
    secret = create_operator(server.database_url, name)
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    page.goto(f"{server.url}/operator")
    page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
    backoffice_log_in(page, name, OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
    page.wait_for_selector("#shell:not([hidden])")
    page.click("[data-testid=tab-controls]")
    page.wait_for_selector("#page-controls:not([hidden])")
    page.wait_for_function("() => !document.body.dataset.loading")
    yield page, watch, name
    context.close()


def test_the_back_office_closes_and_opens_the_game_with_a_reason(office: Any,
                                                                 server: Server) -> None:
    page, watch, _ = office
    _, token = server.player(deposit=1_000)
    assert page.get_attribute("#mt-state", "data-maintenance") == "false"
    assert "Open" in page.text_content("#mt-state")
    page.fill("[data-testid=mt-reason]", "database upgrade")
    page.fill("[data-testid=mt-retry]", "90")
    try:
        page.click("[data-testid=mt-close]")
        page.wait_for_selector("#mt-state[data-maintenance=true]")
        state = page.text_content("#mt-state") or ""
        assert "CLOSED" in state and "database upgrade" in state and "90 s" in state
        assert page.is_visible("[data-testid=mt-open]")
        refused = server.spin(token)
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "90"
        page.reload()  # the state is the server's, not the page's
        page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
        page.click("[data-testid=tab-controls]")
        page.wait_for_selector("#mt-state[data-maintenance=true]")
        page.fill("[data-testid=mt-reason]", "upgrade done")
        page.click("[data-testid=mt-open]")
        page.wait_for_selector("#mt-state[data-maintenance=false]")
    finally:
        expect(server.call("PUT", "/operator/maintenance", server.operator_token,
                           json={"maintenance": False, "reason": "test over"}), 200)
    expect(server.spin(token), 201)
    events = expect(server.call("GET", "/operator/events?kind=maintenance_started&limit=1",
                                server.operator_token), 200).json()["events"]
    assert events[0]["detail"]["reason"] == "database upgrade"
    assert watch.errors == [], watch.errors


def test_the_back_office_ends_a_players_sessions(office: Any, server: Server) -> None:
    page, watch, operator = office
    name, token = server.player(deposit=1_000)
    expect(server.spin(token), 201)
    page.fill("[data-testid=tm-user]", name)
    page.fill("[data-testid=tm-reason]", "support request")
    page.click("[data-testid=tm-submit]")
    page.wait_for_function(
        "() => document.querySelector('#tm-result').textContent.includes('ended')")
    assert f"1 live session(s) of {name} ended" in (page.text_content("#tm-result") or "")
    refused = server.spin(token)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "session_terminated"
    row = page.locator(f"#ts-body tr:has-text('{name}')")  # listed at once, latest first
    row.wait_for()
    assert row.locator("[data-reason]").inner_text() == "support request"
    assert row.locator("[data-by]").inner_text() == operator
    other, other_token = server.player(deposit=1_000)
    expect(server.call("POST", f"/operator/players/{other}/terminate", server.operator_token,
                       json={"reason": "cool-off"}), 200)
    page.fill("[data-testid=ts-player]", other)  # by player: only theirs
    page.click("[data-testid=ts-search]")
    page.wait_for_selector(f"#ts-body tr:has-text('{other}')")
    assert page.locator("#ts-body tr").count() == 1
    assert page.locator("#ts-body [data-reason]").inner_text() == "cool-off"
    assert server.spin(other_token).json()["error"]["code"] == "session_terminated"
    page.fill("[data-testid=ts-player]", "")
    watch.allow("status of 404")  # the refusal below
    page.fill("[data-testid=tm-user]", "nobody-like-this")
    page.click("[data-testid=tm-submit]")
    page.wait_for_function("() => document.querySelector('#status').textContent.includes('(')")
    assert "not_found" in (page.text_content("#status") or "")
    assert watch.errors == [], watch.errors
