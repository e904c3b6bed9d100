"""End-to-end tests of the browser client against a real test-mode server, in headless Chromium.

Outcomes are forced with ``test_draws`` (tests/web/forcing.py builds and engine-checks them); the
page's step log (``window.starfever.log``) is a picture of the DOM taken after every scene.
"""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

import pytest

from starfever.engine.model import MathModel
from starfever.engine.symbols import BET_CLASSES, PAYTABLE
from tests.harness import PLAYER_PASSWORD, running_server
from tests.web import forcing
from tests.web.browser import ConsoleWatch
from tests.web.conftest import Game

pytestmark = pytest.mark.browser


def euro(cents: int) -> str:
    """What the page shows in English."""
    sign = "−" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}€{cents // 100:,}.{cents % 100:02d}"


def events(round_: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in round_["events"] if e["type"] == kind]


def test_sign_up_deposit_and_spin_until_a_win(game: Game) -> None:
    page = game.page
    game.open()
    page.click("#tab-signup")
    page.fill("#auth-username", "newcomer")
    page.fill("#auth-password", "short")
    page.fill("#auth-birth", "1990-01-01")
    page.click("#auth-submit")
    game.wait_text("#auth-error", "password")  # the server's refusal, readable
    page.fill("#auth-password", PLAYER_PASSWORD)
    page.fill("#auth-birth", f"{date.today().year - 10}-01-01")
    page.click("#auth-submit")
    game.wait_text("#auth-error", "18")  # a minor is refused (under_age)
    page.fill("#auth-birth", "1990-01-01")
    page.click("#auth-submit")
    page.wait_for_selector("#game:not([hidden])")
    assert game.cents("#balance") == 0
    assert game.text("#total-bet") == "€0.20"
    assert game.text("#line-bet") == "20 lines × €0.01"
    pool = game.server.call("GET", "/jackpot").json()["pool"]
    page.wait_for_function(f"document.querySelector('#pool-amount').dataset.cents === '{pool}'")

    game.server.deposit("newcomer", 5_000)
    token = game.server.login("newcomer")
    page.reload()
    page.wait_for_function("() => window.starfever.ready")
    assert game.text("#balance") == "€50.00"

    won = None
    for spin in range(60):
        round_ = game.spin(key=spin % 2 == 1)  # the button and the Space key
        server_balance = game.server.balance(token)
        assert game.cents("#balance") == server_balance == round_["balance_after"]
        assert game.text("#balance") == euro(server_balance)
        if round_["total_win"] > 0:
            won = round_
            break
    assert won is not None, "60 spins without a win"
    assert game.text("#win") == euro(won["total_win"])


def test_a_double_click_places_one_bet(game: Game) -> None:
    name = game.new_player(1_000)
    game.page.dblclick("#spin")
    game.wait_idle()
    game.page.wait_for_timeout(300)
    game.wait_idle()
    rounds = game.server.call("GET", "/rounds", game.server.login(name))
    assert len(rounds.json()["rounds"]) == 1
    assert game.page.evaluate("window.starfever.rounds") == 1


def test_line_wins_are_drawn_with_symbol_count_and_amount(game: Game, model: MathModel) -> None:
    game.new_player(2_000)
    game.page.click("#bet-up")  # line bet 0.02, total 0.40
    assert game.text("#total-bet") == "€0.40"
    game.force(forcing.line_win_draws(model))
    round_ = game.spin()
    wins = events(round_, "line_win")
    assert round_["line_bet"] == BET_CLASSES[1] and len(wins) >= 2
    last = game.log()[-1]
    assert sorted(last["lines"]) == sorted(w["line"] for w in wins)
    text = game.text("#win-line")
    for w in wins:
        assert f"Line {w['line']}: {w['count']} ×" in text
        assert euro(w["win"]) in text
    assert game.page.locator("#paylines polyline").count() == len(wins)
    assert game.page.locator(".cell.win").count() >= 3
    assert game.text("#win") == euro(round_["total_win"])
    reveal = events(round_, "reveal")[0]
    shown = game.log()[0]["grid"]
    assert shown == [f"{r},{w}:{reveal['grid'][r][w]}" for r in range(5) for w in range(3)]


def test_star_wild_turns_coins_wild_then_respins(game: Game, model: MathModel) -> None:
    game.new_player(2_000)
    game.force(forcing.star_wild_draws(model))
    round_ = game.spin()
    log = game.log()
    kinds = [s["kind"] for s in log]
    assert kinds[:3] == ["reveal", "feature", "star_wild"] and "reveal" in kinds[3:]
    wilds = events(round_, "star_wild")[0]["wilds"]
    assert sum(w["symbol"] == "MWILD" for w in wilds) == 3
    after_wild = log[kinds.index("star_wild")]["grid"]
    for w in wilds:  # the coins visibly became WILD / MWILD (x3)
        assert f"{w['reel']},{w['row']}:{w['symbol']}" in after_wild
    respin = events(round_, "reveal")[1]
    final = log[-1]["grid"]
    assert final == [f"{r},{w}:{respin['grid'][r][w]}" for r in range(5) for w in range(3)]
    respin_wins = [e for e in events(round_, "line_win") if e["phase"] == "star_wild"]
    assert respin_wins and any(w["multiplier"] == 3 for w in respin_wins)
    assert "×3" in game.text("#win-line")
    assert game.text("#win") == euro(round_["total_win"])


def _hold_and_cash(model: MathModel) -> list[int]:
    return forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [
        [("CASH", 2)], [], [("MINOR", 0), ("UPGRADE", 0)], [],
        [("MULTIPLIER", 0), ("MAJOR", 0)]])


def test_hold_and_cash_plays_every_respin_from_the_log(game: Game, model: MathModel) -> None:
    name = game.new_player(2_000)
    game.force(_hold_and_cash(model))
    round_ = game.spin()
    log = game.log()
    start = events(round_, "hold_and_cash_start")[0]
    first = next(s for s in log if s["kind"] == "hc_start")
    assert first["respinsLeft"] == "3"
    assert sorted(first["board"]) == sorted(
        f"{c['reel']},{c['row']}:CASH:{euro(c['value'])}" for c in start["cells"])

    shown = [s for s in log if s["kind"] == "hc_respin"]
    respins = events(round_, "respin")
    assert [s["index"] for s in shown] == [r["index"] for r in respins]
    held: dict[str, str] = {f"{c['reel']},{c['row']}": f"CASH:{euro(c['value'])}"
                            for c in start["cells"]}
    for step, respin in zip(shown, respins, strict=True):
        assert step["respinsLeft"] == str(respin["respins_left"])
        for c in respin["landed"]:
            if c["kind"] in ("CASH", "MINOR", "MAJOR"):
                label = euro(c["value"]) if c["kind"] == "CASH" else c["kind"]
                held[f"{c['reel']},{c['row']}"] = f"{c['kind']}:{label}"
        for booster in respin["boosters"]:
            for v in booster["values"]:
                held[f"{v['reel']},{v['row']}"] = f"CASH:{euro(v['value'])}"
        assert sorted(step["board"]) == sorted(f"{k}:{v}" for k, v in held.items())
    # the counter visibly reset to 3 after a respin that landed something
    assert any(r["landed"] and r["respins_left"] == 3 for r in respins)
    kinds_landed = {c["kind"] for r in respins for c in r["landed"]}
    assert {"UPGRADE", "MULTIPLIER", "MINOR", "MAJOR"} <= kinds_landed
    assert game.page.locator('.hc-cell[data-kind="MINOR"]').count() == 1
    assert game.page.locator('.hc-cell[data-kind="MAJOR"]').count() == 1

    end = events(round_, "hold_and_cash_end")[0]
    assert game.text("#win") == euro(round_["total_win"])
    assert euro(end["win"]) in game.text("#win-line")
    assert game.text("#balance") == euro(game.server.balance(game.server.login(name)))


def test_skip_jumps_to_the_result(game: Game, model: MathModel) -> None:
    game.new_player(2_000, speed=1)
    game.force(_hold_and_cash(model))
    game.page.click("#spin")
    game.page.wait_for_selector("#holdboard:not([hidden])", timeout=15_000)
    game.page.click("#skip")  # speeds the feature up, never leaves it out (issue 38)
    game.wait_idle(timeout=15_000)
    round_ = game.page.evaluate("window.starfever.state.lastRound")
    kinds = [s["kind"] for s in game.log()]
    assert kinds.count("hc_respin") == len(events(round_, "respin")) and "hc_end" in kinds
    assert game.text("#win") == euro(round_["total_win"])
    end = events(round_, "hold_and_cash_end")[0]
    held = len(events(round_, "hold_and_cash_start")[0]["cells"]) + sum(
        c["kind"] in ("CASH", "MINOR", "MAJOR") for r in events(round_, "respin")
        for c in r["landed"])
    assert game.page.locator('.hc-cell:not([data-kind="EMPTY"])').count() == held
    assert euro(end["win"]) in game.text("#win-line")


def test_mega_fills_the_board(game: Game, model: MathModel) -> None:
    game.new_player(2_000)
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 1)] * 10]))
    round_ = game.spin()
    assert "mega" in [s["kind"] for s in game.log()]
    assert game.page.locator('.hc-cell[data-kind="EMPTY"]').count() == 0
    assert game.text("#win") == euro(round_["total_win"])


def test_jackpot_win_is_celebrated(game: Game, model: MathModel) -> None:
    game.new_player(2_000)
    game.force(forcing.jackpot_draws(model))
    round_ = game.spin()
    jackpot = events(round_, "jackpot")[0]
    shown = next(s for s in game.log() if s["kind"] == "jackpot")
    # a share of ~50 x the total bet: the full-screen show, its amount the share
    assert shown["celebration"]["kind"] == "jackpot"
    assert shown["celebration"]["amount"] == jackpot["win"]
    assert (game.page.text_content("#cel-amount") or "").strip() == euro(jackpot["win"])
    assert "1 %" in (game.page.text_content("#cel-sub") or "")
    assert not game.page.is_visible("#celebrate")  # it ended by itself
    assert game.text("#win") == euro(round_["total_win"])
    game.page.wait_for_function(
        f"document.querySelector('#pool-amount').dataset.cents === '{round_['pool_after']}'")


def test_history_replays_a_round(game: Game, model: MathModel) -> None:
    game.new_player(2_000)
    game.force(_hold_and_cash(model))
    hc_round = game.spin()
    game.force(forcing.no_win_draws(model))
    game.spin()
    balance = game.text("#balance")
    game.page.click("#open-history")
    items = game.page.locator("#history-list button")
    items.first.wait_for()
    assert items.count() == 2
    game.page.click(f'#history-list button[data-round="{hc_round["id"]}"]')
    game.page.wait_for_selector("#recall-ribbon:not([hidden])")
    game.wait_idle()
    assert f"#{hc_round['id']}" in game.text("#recall-ribbon")
    assert game.text("#win") == euro(hc_round["total_win"])
    assert game.page.is_visible("#holdboard")
    assert game.text("#balance") == balance  # a recall moves no money


def test_reload_mid_feature_resumes_it_where_it_was(game: Game, model: MathModel) -> None:
    """Issue 38, point 6: a reload in the middle of Hold & Cash plays the rest of the settled
    round from the scene it was at, with the feature's staging, and ends on its result."""
    page = game.page
    game.new_player(2_000)
    game.force(_hold_and_cash(model))
    page.evaluate("window.starfever.holdAt = {kind: 'hc_respin', index: 3}")
    page.click("#spin")
    page.wait_for_function("() => window.starfever.held", timeout=15_000)
    round_id = page.evaluate("localStorage.getItem('sf.pendingRound')")
    at = int(page.evaluate("localStorage.getItem('sf.pendingScene')"))
    assert round_id and game.log()[at]["kind"] == "hc_respin"
    game.open()  # a reload
    game.wait_idle()
    ribbon = game.text("#recall-ribbon")
    assert f"#{round_id}" in ribbon and "interrupted" in ribbon
    stored = game.server.call("GET", f"/rounds/{round_id}",
                              game.server.login(game.username)).json()
    log = game.log()
    assert [s["staged"] for s in log] == [i >= at for i in range(len(log))]
    assert [s["kind"] for s in log][at:].count("hc_respin") >= 2 and log[-1]["kind"] == "end"
    assert game.text("#win") == euro(stored["total_win"])
    assert page.is_visible("#holdboard")
    assert game.text("#balance") == euro(stored["balance_after"])
    assert page.evaluate("localStorage.getItem('sf.pendingRound')") is None


def test_reload_mid_round_without_a_feature_shows_its_outcome(game: Game,
                                                               model: MathModel) -> None:
    page = game.page
    game.new_player(2_000)
    game.force(forcing.line_win_draws(model))
    page.evaluate("window.starfever.holdAt = {kind: 'reveal'}")
    page.click("#spin")
    page.wait_for_function("() => window.starfever.held", timeout=15_000)
    round_id = page.evaluate("localStorage.getItem('sf.pendingRound')")
    game.open()
    game.wait_idle()
    ribbon = game.text("#recall-ribbon")
    assert f"#{round_id}" in ribbon and "interrupted" in ribbon
    stored = game.server.call("GET", f"/rounds/{round_id}",
                              game.server.login(game.username)).json()
    assert game.text("#win") == euro(stored["total_win"])
    assert game.text("#balance") == euro(stored["balance_after"])


def test_paytable_and_rules_in_german_and_english(game: Game) -> None:
    game.new_player(0)
    page = game.page
    page.click("#open-paytable")
    rows = page.locator("#paytable-body tbody tr")
    assert rows.count() == len(PAYTABLE)  # the Multiplier Wild is explained below the table
    for code, pays in PAYTABLE.items():
        cells = page.locator(f'#paytable-body tr[data-symbol="{code}"] td b').all_inner_texts()
        assert cells == [f"{p}×" for p in pays]
        money = page.locator(f'#paytable-body tr[data-symbol="{code}"] td small')
        assert money.all_inner_texts() == [euro(p) for p in pays]  # at line bet 1 cent
    assert "Lemon" in game.text("#paytable-body")
    assert page.locator("#paytable-body .mini-line").count() == 20
    page.click('#dlg-paytable [data-lang="de"]')
    assert "Zitrone" in game.text("#paytable-body")
    assert "0,01\u00a0€" in game.text("#paytable-body")
    page.click("#tab-rules")
    rules = game.text("#rules-body")
    assert "Walzen" in rules and "95,5" in rules and "0,01\u00a0€, 0,02\u00a0€" in rules
    page.click('#dlg-paytable [data-lang="en"]')
    assert "reels" in game.text("#rules-body")
    page.keyboard.press("Escape")
    assert not page.is_visible("#dlg-paytable")


def test_refused_bet_shows_a_readable_message(game: Game) -> None:
    game.new_player(0)
    game.page.click("#spin")
    game.page.wait_for_selector("#status.error")
    # a EUR 0 player is told where money comes in, not to "deposit" with no way to (issue 38)
    game.wait_text("#status", "below the smallest bet")
    assert game.cents("#balance") == 0
    assert not game.page.is_disabled("#spin")


def test_deposit_limit_and_self_exclusion(game: Game) -> None:
    name = game.new_player(1_000)
    page = game.page
    page.click("#open-protection")
    page.wait_for_selector('[data-testid="limit-now"]')
    page.fill("#limit-input", "50,00")
    page.click("#limit-form button[type=submit]")
    page.wait_for_selector("#limit-msg.ok")
    assert game.text('[data-testid="limit-now"]') == "€50.00"
    page.fill("#limit-input", "abc")
    page.click("#limit-form button[type=submit]")
    game.wait_text("#limit-msg", "amount")
    # the server refuses a deposit over the new limit
    refused = game.server.call("POST", f"/players/{name}/deposits",
                               game.server.operator_token, json={"amount": 10_000},
                               headers={"Idempotency-Key": uuid.uuid4().hex})
    assert refused.status_code == 403

    page.click("#exclusion-form button[type=submit]")
    assert "confirm" in game.text("#exclusion-msg")
    page.select_option("#exclusion-days", "7")
    page.check("#exclusion-confirm")
    page.click("#exclusion-form button[type=submit]")
    page.wait_for_selector("#exclusion-state.excluded")
    page.keyboard.press("Escape")
    # the page offers no Spin and says why, also after a reload; the server refuses bets too
    for reloaded in (False, True):
        if reloaded:
            page.reload()
            page.wait_for_function("() => window.starfever.ready")
        page.wait_for_selector('[data-testid="exclusion-notice"]:not([hidden])')
        assert "excluded yourself" in game.text('[data-testid="exclusion-notice"]')
        assert page.is_disabled("#spin")
    page.locator("body").press("Space")
    refused = game.server.spin(game.server.login(name), line_bet=1)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "self_excluded"
    assert game.cents("#balance") == 1_000


def test_phone_width_keyboard_and_language(game: Game, model: MathModel) -> None:
    page = game.page
    page.set_viewport_size({"width": 390, "height": 844})
    game.new_player(1_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator("#spin").bounding_box()
    assert box and box["y"] + box["height"] <= 844  # the spin button is on screen
    game.force(forcing.line_win_draws(model))
    page.focus("#spin")
    page.keyboard.press("Enter")
    game.wait_idle()
    assert game.page.evaluate("window.starfever.rounds") == 1
    page.click('#game [data-lang="de"]')
    assert game.text("#balance").endswith("\u00a0€") and "," in game.text("#balance")
    assert game.text("#spin").lower() == "drehen"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_money_and_timeline_logic(game: Game) -> None:
    game.open()
    lib = "window.starfever.lib"
    assert game.page.evaluate(f"{lib}.formatCents(123456789, 'de')") == "1.234.567,89\u00a0€"
    assert game.page.evaluate(f"{lib}.formatCents(5, 'en')") == "€0.05"
    assert game.page.evaluate(f"{lib}.formatCents(-250, 'en')") == "−€2.50"
    parsed = {text: game.page.evaluate(f"{lib}.parseEuros({text!r})") for text in (
        "100", "1.000,5", "99.99", "12,50", "1,234.56", "1.234.567", " 5 € ", "x", "0.001",
        "12.505", "1.234", "1,234", "1.234.56", "1,2,3", ".5", "-5", "", "1e3")}
    assert parsed == {
        "100": 10_000, "1.000,5": 100_050, "99.99": 9_999, "12,50": 1_250, "1,234.56": 123_456,
        "1.234.567": 123_456_700, " 5 € ": 500, "x": None, "0.001": None, "12.505": None,
        "1.234": None, "1,234": None, "1.234.56": None, "1,2,3": None, ".5": None, "-5": None,
        "": None, "1e3": None}
    # by a currency's exponent: whole units only at 0, a tenth of a minor unit refused at 3
    exponents = {(text, e): game.page.evaluate(f"{lib}.parseAmount({text!r}, {e})") for text, e in (
        ("1.234", 0), ("1234", 0), ("12.5", 0), ("12.5", 3), ("1,234.567", 3), ("0.0001", 3))}
    assert exponents == {("1.234", 0): None, ("1234", 0): 1234, ("12.5", 0): None,
                         ("12.5", 3): 12_500, ("1,234.567", 3): 1_234_567,
                         ("0.0001", 3): None}
    scenes = game.page.evaluate(f"""{lib}.buildTimeline([
        {{type: 'reveal', phase: 'base', stops: [0,0,0,0,0], grid: []}},
        {{type: 'line_win', phase: 'base', line: 1, symbol: 'BAR', count: 3, multiplier: 1,
          win: 5}},
        {{type: 'line_win', phase: 'base', line: 2, symbol: 'BAR', count: 3, multiplier: 1,
          win: 5}},
        {{type: 'jackpot', phase: 'base', line: 1, percent: 1, win: 1000, pool_left: 99000}},
        {{type: 'round_end', total_win: 1010, pool_after: 100000}}]).map(
            s => [s.kind, s.winSoFar])""")
    assert scenes == [["reveal", 0], ["lines", 10], ["jackpot", 1010], ["end", 1010]]


def test_reality_check_dialog(browser: Any, tmp_path_factory: pytest.TempPathFactory,
                              model: MathModel) -> None:
    with running_server(tmp_path_factory.mktemp("rc"),
                        env={"STARFEVER_REALITY_CHECK_SECONDS": "2"}) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 860})
        page = context.new_page()
        watch = ConsoleWatch(page)
        game = Game(page, server, watch)
        game.new_player(1_000)
        game.force(forcing.no_win_draws(model))
        game.spin()
        page.wait_for_timeout(2_100)
        page.click("#spin")  # refused by the server: the check is due, and it opens
        page.wait_for_selector("#dlg-reality[open]")
        assert game.text('[data-testid="rc-net"]') == "−€0.20"
        elapsed = game.text('[data-testid="rc-elapsed"]')
        assert elapsed.startswith("0 min 0") and elapsed.endswith(" s")  # a span, not a time
        assert game.cents("#balance") == 980
        page.click("#rc-continue")
        page.wait_for_selector("#dlg-reality", state="hidden")
        game.force(forcing.no_win_draws(model))
        game.spin()  # acknowledged: play goes on
        assert game.cents("#balance") == 960
        context.close()
        assert watch.errors == []


def _lose_answers(game: Game) -> list[str]:
    """Let spin requests reach the server (which settles them) but cut their answers off."""
    keys: list[str] = []

    def settle_then_cut(route: Any) -> None:
        keys.append(route.request.headers["idempotency-key"])
        route.fetch()  # the server settles the round ...
        route.abort()  # ... and the page never hears of it

    game.watch.allow("net::ERR_FAILED")  # what the browser logs of each cut-off request
    game.page.route("**/api/v1/spins", settle_then_cut)
    return keys


def test_a_settled_round_whose_answer_was_lost_is_always_shown(game: Game,
                                                                model: MathModel) -> None:
    """Every settled round reaches the player, whatever the network does: the spin request is
    saved before it is sent and sent again, same key, until an answer comes (then by itself,
    and after a reload); the server settles the key once, so one bet, one round."""
    name = game.new_player(5_000)
    token = game.server.login(name)
    page = game.page
    for reload in (False, True):
        keys = _lose_answers(game)
        game.force(forcing.line_win_draws(model))
        page.click("#spin")
        game.wait_text("#status", "your spin is kept")
        assert len(set(keys)) == 1 and len(keys) == 3  # three tries, one key
        newest = game.server.call("GET", "/rounds?limit=1", token).json()["rounds"][0]
        settled = game.server.call("GET", f"/rounds/{newest['id']}", token).json()
        assert game.cents("#balance") != game.server.balance(token)  # the page does not know
        page.unroute("**/api/v1/spins")
        before = page.evaluate("window.starfever.rounds")
        if reload:
            page.reload()
            page.wait_for_function("() => window.starfever.ready")
        shown = 1 if reload else before + 1  # a reloaded page counts from 0
        page.wait_for_function(f"window.starfever.rounds >= {shown} "
                               "&& !window.starfever.state.busy", timeout=20_000)
        assert f"#{settled['id']}" in game.text("#recall-ribbon")
        assert "connection was down" in game.text("#recall-ribbon")
        assert game.cents("#balance") == game.server.balance(token) == settled["balance_after"]
        assert game.cents("#win") == settled["total_win"]
        assert page.evaluate("localStorage.getItem('sf.spinInFlight')") is None
    history = game.server.call("GET", "/rounds?limit=10", token).json()["rounds"]
    assert len(history) == 2  # two clicks, two rounds: no retry was a second bet


@pytest.mark.parametrize("status,body", [
    (502, "<html><body><h1>502 Bad Gateway</h1></body></html>"),  # a proxy in front
    (503, '{"error": {"code": "commit_unknown", "message": "the connection was lost while '
          'saving"}}'),  # the server's own: saved or not, it cannot say
    (200, '{"round": {"id": 1, "bal'),  # the answer cut off mid-body
])
def test_a_settled_round_behind_an_error_answer_is_shown(game: Game, model: MathModel,
                                                         status: int, body: str) -> None:
    """The server settled the round, but what reached the page was a 5xx or a broken body:
    the round may have been played, so the page keeps the request and sends it again (same
    key) instead of dropping it, and shows the round once the server's real answer comes."""
    name = game.new_player(5_000)
    token = game.server.login(name)
    page = game.page
    keys: list[str] = []

    def settle_then_fail(route: Any) -> None:
        keys.append(route.request.headers["idempotency-key"])
        route.fetch()  # the server settles the round ...
        route.fulfill(status=status, body=body,  # ... and the page gets this instead
                      content_type="application/json" if status == 503 else "text/html")

    game.watch.allow(f"status of {status}")
    page.route("**/api/v1/spins", settle_then_fail)
    game.force(forcing.line_win_draws(model))
    page.click("#spin")
    game.wait_text("#status", "your spin is kept")
    assert len(set(keys)) == 1
    assert page.evaluate("localStorage.getItem('sf.spinInFlight')") is not None
    newest = game.server.call("GET", "/rounds?limit=1", token).json()["rounds"][0]
    newest = game.server.call("GET", f"/rounds/{newest['id']}", token).json()
    before = page.evaluate("window.starfever.rounds")
    page.unroute("**/api/v1/spins")
    page.wait_for_function(f"window.starfever.rounds >= {before + 1} "
                           "&& !window.starfever.state.busy", timeout=20_000)
    assert f"#{newest['id']}" in game.text("#recall-ribbon")
    assert game.cents("#balance") == game.server.balance(token) == newest["balance_after"]
    assert page.evaluate("localStorage.getItem('sf.spinInFlight')") is None
    rounds = game.server.call("GET", "/rounds?limit=10", token).json()["rounds"]
    assert len(rounds) == 1  # one click, one bet


def test_recall_shows_the_rounds_own_bet_and_balances(game: Game, model: MathModel) -> None:
    game.new_player(10_000)
    page = game.page
    for _ in range(3):
        page.click("#bet-up")
    game.force(forcing.line_win_draws(model))
    played = game.spin()
    page.click("#bet-down")
    live_bet = game.cents("#total-bet")
    assert live_bet != played["total_bet"]
    page.click("#open-history")
    page.click(f'#history-list button[data-round="{played["id"]}"]')
    page.wait_for_selector("#recall-ribbon:not([hidden])")
    game.wait_idle()
    assert game.cents("#total-bet") == played["total_bet"]
    ribbon = game.text("#recall-ribbon")
    assert euro(played["balance_before"]) in ribbon and euro(played["balance_after"]) in ribbon
    glow = page.evaluate("getComputedStyle(document.querySelector('#win')).textShadow")
    assert glow == "none"  # history is shown, not celebrated
    if played["total_win"] > played["total_bet"]:  # but a win is not called money back
        assert "back of your" not in game.text("#win-line")
    page.click("#bet-down")  # play goes on: the live meters are back
    assert game.cents("#total-bet") < live_bet
    assert not page.evaluate("document.body.classList.contains('recalling')")


def test_skip_works_from_the_first_moment_and_the_focus_stays_on_spin(
        game: Game, model: MathModel) -> None:
    game.new_player(5_000, speed=1)
    page = game.page

    def timed(skip: bool) -> float:
        game.force(forcing.line_win_draws(model))
        page.focus("#spin")
        page.keyboard.press("Enter")
        if skip:
            page.click("#skip")  # at once: the server's answer has not arrived yet
        start = page.evaluate("performance.now()")
        game.wait_idle()
        elapsed: float = page.evaluate("performance.now()") - start
        assert page.evaluate("document.activeElement.id") == "spin"
        return elapsed

    full = timed(skip=False)
    skipped = timed(skip=True)
    assert skipped < full / 2, (skipped, full)


def test_two_tabs_of_one_player_show_one_balance(game: Game, model: MathModel) -> None:
    game.new_player(5_000)
    other = game.page.context.new_page()
    ConsoleWatch(other)
    other.goto(f"{game.server.url}/?speed=0.04")
    other.wait_for_function("() => window.starfever && window.starfever.ready")
    other.wait_for_selector("#game:not([hidden])")  # the same player's session
    game.page.wait_for_selector('[data-testid="tabs-notice"]:not([hidden])')
    other.wait_for_selector('[data-testid="tabs-notice"]:not([hidden])')
    game.force(forcing.line_win_draws(model))
    played = game.spin()
    after = game.cents("#balance")
    assert after == played["balance_after"]
    other.wait_for_function(
        f"document.querySelector('#balance').dataset.cents === '{after}'", timeout=10_000)
    other.close()


@pytest.mark.parametrize("width,height", [(1366, 768), (844, 390), (390, 844)])
def test_messages_controls_and_clock_stay_on_screen(browser: Any, server: Any, width: int,
                                                    height: int) -> None:
    """At a laptop's 1366x768, a phone held sideways and upright: a refusal's message, every
    control, the session clock are inside the viewport; a long win text moves nothing; the
    phone menu has words, not icons alone."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    game = Game(page, server, watch)
    game.new_player(0)
    page.click("#spin")
    page.wait_for_selector("#status.error")
    inside = page.evaluate("""() => ['#status', '#spin', '#bet-up', '#bet-down', '#balance',
        '#win', '#session-clock', '#open-history', '#logout'].map(sel => {
          const r = document.querySelector(sel).getBoundingClientRect();
          return [sel, r.top >= 0 && r.bottom <= innerHeight + 0.5 && r.height > 8];
        })""")
    assert [sel for sel, ok in inside if not ok] == []
    before = page.evaluate("document.querySelector('.controls').getBoundingClientRect().top")
    page.evaluate("document.querySelector('#win-line').textContent = "
                  "'Line 1: 5 × Diamond pays €6.00 · '.repeat(12)")
    after = page.evaluate("document.querySelector('.controls').getBoundingClientRect().top")
    assert after == before
    labels = page.locator(".menu .icon-btn span").evaluate_all(
        "els => els.map(e => getComputedStyle(e).display)")
    assert "none" not in labels
    context.close()
    assert watch.errors == []


def test_test_hooks_do_nothing_outside_test_mode(browser: Any,
                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    with running_server(tmp_path_factory.mktemp("live-web"), test_mode=False) as live:
        name = "livehooks"
        live.register(name)
        live.deposit(name, 1_000)
        context = browser.new_context(viewport={"width": 1280, "height": 860}, locale="en-GB")
        page = context.new_page()
        watch = ConsoleWatch(page)
        game = Game(page, live, watch)
        game.login(name, speed=0.01)
        assert page.evaluate("window.starfever.state.game.test_mode") is False
        assert page.evaluate("window.starfever.speed()") == 1  # ?speed= ignored
        page.evaluate("window.starfever.holdAt = {kind: 'reveal'}")
        game.spin()
        assert page.evaluate("window.starfever.held") is False  # no scene was held
        context.close()
        assert watch.errors == []
