"""Free rounds in the browser (issue 36, ADR 0064): the player sees the grant with its rounds
left and winnings so far, plays it on its own button (the Spin button's bet stays the paid
one), is never debited, and the panel follows the grant to its end; the history marks the
free rounds. The module's ledger-mode server (tests/web/conftest.py)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pyotp
import pytest
from sqlalchemy import text

from starfever.engine.model import MathModel
from tests.harness import OPERATOR_PASSWORD, Server, create_operator, expect
from tests.web import forcing
from tests.web.browser import ConsoleWatch, backoffice_log_in
from tests.web.conftest import Game

pytestmark = pytest.mark.browser

LINE_BET = 5


def play_free(game: Game) -> dict[str, Any]:
    """Click the grant's button and wait until its round has played: the round."""
    before = game.page.evaluate("window.starfever.rounds")
    game.page.click("[data-testid=play-free]")
    game.page.wait_for_function(
        f"window.starfever.rounds > {before} && !window.starfever.state.busy")
    round_: dict[str, Any] = game.page.evaluate("window.starfever.state.lastRound")
    return round_


def test_a_grant_is_shown_chosen_and_played_to_its_end(game: Game, server: Server,
                                                        model: MathModel) -> None:
    name = f"webfree{uuid.uuid4().hex[:8]}"
    server.register(name)
    server.deposit(name, 1_000)
    expect(server.call("POST", "/operator/free-rounds/grants", server.operator_token, json={
        "grant_id": f"web-{name}", "player_id": name, "rounds": 3, "line_bet": LINE_BET}), 201)
    game.login(name)
    game.page.wait_for_selector("[data-testid=free-grant]")
    assert "3 free rounds left" in game.text("[data-testid=freerounds]")
    paid_bet = game.cents("#total-bet")
    game.force(forcing.line_win_draws(model))
    first = play_free(game)
    assert first["free_round"]["paid_win"] == first["total_win"] > 0
    assert first["total_bet"] == 20 * LINE_BET
    won = first["total_win"]
    assert game.cents("#balance") == 1_000 + won  # nothing was staked
    line = game.text("[data-testid=free-grant]")
    assert "2 free rounds left" in line and f"€{won // 100}.{won % 100:02d}" in line
    assert "Free round played" in game.text("[data-testid=free-note]")
    assert game.cents("#total-bet") == paid_bet  # the paid bet is left as it was
    game.page.click("#game [data-lang=de]")  # the panel in German
    assert "Noch 2 Freispiele" in game.text("[data-testid=free-grant]")
    assert "Freispiel gespielt" in game.text("[data-testid=free-note]")
    game.page.click("#game [data-lang=en]")
    for _ in range(2):
        won += play_free(game)["free_round"]["paid_win"]
    assert game.page.locator("[data-testid=free-grant]").count() == 0
    assert "All free rounds played" in game.text("[data-testid=free-note]")
    assert game.cents("#balance") == 1_000 + won
    game.spin()  # the Spin button plays a paid round at the paid bet
    assert game.page.evaluate("window.starfever.state.lastRound.free_round") is None
    game.page.click("#open-history")
    game.page.wait_for_selector("#history-list li button")
    assert game.page.locator("[data-testid=history-free]").count() == 3


def test_the_back_office_grants_lists_costs_and_cancels(browser: Any, server: Server) -> None:
    """Ledger mode: a grant made on the back office's form is listed with its state; a
    campaign shows its cost; Cancel ends a grant."""
    operator = f"fr-op-{uuid.uuid4().hex[:6]}"
    secret = create_operator(server.database_url, operator)
    name, token = server.player()
    start = server.now().replace(microsecond=0).isoformat().replace("+00:00", "Z")
    campaign_id = f"web-c-{name}"
    expect(server.call("POST", "/operator/free-rounds/campaigns", server.operator_token, json={
        "campaign_id": campaign_id, "players": [name], "rounds": 1, "line_bet": LINE_BET,
        "starts_at": start, "ends_at": start.replace(start[:4], str(int(start[:4]) + 1))}), 201)
    [given] = expect(server.call("GET", "/free-rounds", token), 200).json()["grants"]
    paid = expect(server.call("POST", "/spins", token, json={
        "line_bet": LINE_BET, "grant_id": given["id"]},
        headers={"Idempotency-Key": uuid.uuid4().hex}), 201).json()["round"]
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    page.goto(f"{server.url}/operator")
    page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
    backoffice_log_in(page, operator, OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
    page.wait_for_selector("#shell:not([hidden])")
    page.click("[data-testid=tab-freerounds]")
    page.wait_for_function("() => !document.body.dataset.loading")
    row = page.locator(f"#fr-campaigns tr[data-campaign='{campaign_id}']")
    assert int(row.locator("[data-cost]").get_attribute("data-cost") or "-1") == \
        paid["total_win"] + paid["contribution"]
    page.fill("[data-testid=fr-id]", f"web-g-{name}")
    page.fill("[data-testid=fr-player]", name)
    page.fill("[data-testid=fr-rounds]", "4")
    page.fill("[data-testid=fr-bet]", "0,05")
    page.click("[data-testid=fr-grant]")
    page.wait_for_selector(f"#fr-grants tr:has-text('web-g-{name}')")
    made = page.locator(f"#fr-grants tr:has-text('web-g-{name}')")
    assert made.locator("[data-state]").inner_text() == "active"
    made.locator("[data-cancel-grant]").click()
    page.wait_for_selector(f"#fr-grants tr:has-text('web-g-{name}') [data-state=cancelled]")
    assert [g["grant_id"] for g in expect(server.call("GET", "/free-rounds", token),
                                          200).json()["grants"]] == []
    page.click("[data-testid=tab-meters]")  # free rounds' RTP apart from paid play
    page.wait_for_function("() => !document.body.dataset.loading")
    with server.engine().connect() as conn:
        free = conn.execute(text("SELECT COUNT(*) FROM rounds WHERE grant_id IS NOT NULL "
                                 "AND NOT test AND line_bet = :b"), {"b": LINE_BET}).scalar_one()
    shown = page.locator(f"#rtp-free-body tr[data-line-bet='{LINE_BET}'] td").nth(2)
    assert int(shown.inner_text()) == free >= 1
    context.close()
    assert watch.errors == [], f"the back office logged errors: {watch.errors}"


def test_the_back_office_makes_a_campaign_and_tells_its_refusals(browser: Any,
                                                                 server: Server) -> None:
    """Ledger mode: the campaign form makes a campaign for the players listed (their grants
    carry its rounds, bet, validity and cap) or for every player in its window; a refusal is
    told in a sentence of its own, and nothing is made."""
    operator = f"fc-op-{uuid.uuid4().hex[:6]}"
    secret = create_operator(server.database_url, operator)
    first, first_token = server.player()
    second, second_token = server.player()
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    watch.allow("status of 4")  # the refusals below
    page.goto(f"{server.url}/operator")
    page.wait_for_function("() => window.__backofficePage && window.__backofficePage.ready")
    backoffice_log_in(page, operator, OPERATOR_PASSWORD, pyotp.TOTP(secret).now())
    page.wait_for_selector("#shell:not([hidden])")
    page.click("[data-testid=tab-freerounds]")
    page.wait_for_function("() => !document.body.dataset.loading")
    assert page.is_visible("[data-testid=fc-form]")
    now = server.now()

    def local(at: datetime) -> str:  # a datetime-local field's value, in UTC
        return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")

    def create(campaign_id: str, **fields: str | None) -> str:
        """Fill the form (a field given ``None`` is left as it is) and send it: the answer."""
        page.evaluate("document.querySelector('#fc-result').textContent = ''")
        values = {"fc-id": campaign_id, "fc-players": f"{first}, {second}",
                  "fc-start": local(now - timedelta(hours=1)),
                  "fc-end": local(now + timedelta(days=2)), "fc-rounds": "2",
                  "fc-bet": "0,05", "fc-days": "7", "fc-cap": "1,00", **fields}
        for testid, value in values.items():
            if value is not None:
                page.fill(f"[data-testid={testid}]", value)
        page.click("[data-testid=fc-create]")
        page.wait_for_function("() => document.querySelector('#fc-result').textContent !== ''")
        return page.text_content("[data-testid=fc-result]") or ""

    listed_id = f"web-fc-{first}"
    assert f"Campaign {listed_id}: 2 free rounds" in create(listed_id)
    page.wait_for_selector(f"#fr-campaigns tr[data-campaign='{listed_id}']")
    for token in (first_token, second_token):
        [given] = expect(server.call("GET", "/free-rounds", token), 200).json()["grants"]
        assert (given["campaign_id"], given["rounds_left"], given["line_bet"],
                given["max_win"]) == (listed_id, 2, LINE_BET, 100)
        valid = datetime.fromisoformat(given["expires_at"]) - datetime.fromisoformat(
            given["created_at"])
        assert valid == timedelta(days=7)
    refusals = [  # the fields changed, the refusal's code, words of its sentence
        ({"fc-rounds": "3"}, "campaign_id_reused", "already another campaign's"),
        ({"fc-id": "web-fc-late", "fc-end": local(now - timedelta(hours=2))},
         "invalid_campaign", "window, players or validity are not right"),
        ({"fc-id": "web-fc-nobody", "fc-players": "nobody-of-that-name"}, "player_not_found",
         "A player on the list does not exist"),
        ({"fc-id": "web-fc-bet", "fc-bet": "0,07"}, "invalid_grant",
         "the line bet or the cap are not right"),
        ({"fc-id": "web-fc-euro", "fc-bet": "lots"}, "amount", "must be an amount such as")]
    for fields, code, words in refusals:
        assert words in create(listed_id, **fields), fields
        assert page.get_attribute("[data-testid=fc-result]", "data-refused") == code
    campaigns = expect(server.call("GET", "/operator/free-rounds", server.operator_token),
                       200).json()["campaigns"]
    assert not {c["campaign_id"] for c in campaigns} & {
        "web-fc-late", "web-fc-nobody", "web-fc-bet", "web-fc-euro"}
    every_id = f"web-fc-all-{first}"  # every player, in a window still to come
    page.select_option("[data-testid=fc-for]", "every")
    try:
        made = create(every_id, **{"fc-start": local(now + timedelta(days=30)),
                                   "fc-end": local(now + timedelta(days=31)), "fc-cap": "",
                                   "fc-players": None})
        assert "every player who opens the game in its window" in made
        [shown] = [c for c in expect(server.call("GET", "/operator/free-rounds",
                                                 server.operator_token), 200).json()[
            "campaigns"] if c["campaign_id"] == every_id]
        assert (shown["every_player"], shown["max_win"], shown["grants"]) == (True, None, 0)
    finally:  # the session's other tests must not find it open
        server.call("POST", f"/operator/free-rounds/campaigns/{every_id}/cancel",
                    server.operator_token)
    context.close()
    assert watch.errors == [], f"the back office logged errors: {watch.errors}"
