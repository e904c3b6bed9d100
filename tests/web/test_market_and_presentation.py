"""The client against the running server's truth (issue 15): the rules page shows the running
model's exact figures (a server on ``--model rtp94``), the strict market profile in the browser
and on the server, and the presentation: framed €€€ symbols, big-win tiers, the Mega show, no
celebration below the stake, anticipation, sound, one announcement per round, symbol names in
the page's language. Real server processes, Debian's Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from starfever.engine.model import MathModel, load_model
from starfever.engine.round import window
from starfever.markets import load_market
from starfever.math.figures import cached
from tests.harness import Databases, Server, start_server
from tests.web import forcing
from tests.web.conftest import FAST, Game, game_on

pytestmark = pytest.mark.browser


def euro(cents: int) -> str:
    return f"€{cents // 100:,}.{cents % 100:02d}"


def pct(x: float, lang: str = "en") -> str:
    text = f"{x * 100:.2f} %"
    return text.replace(".", ",") if lang == "de" else text


def line_factor_draws(model: MathModel, low: int, high: int) -> list[int]:
    """A plain spin (no feature, no €€€) whose line wins add up to low..high line bets."""
    return forcing.find_stops(model.base_reels, lambda _s, e: e.feature is None
                              and not e.jackpot_lines and low <= e.line_factor <= high)


def anticipation_draws(model: MathModel) -> list[int]:
    """Three coins on reels 0-2 and no more: the Star Wild is one coin away at reel 3."""
    def accept(stops: list[int], e: Any) -> bool:
        grid = window(model.base_reels, stops)
        return e.star_coins == 3 and sum(s == "COIN" for r in grid[:3] for s in r) == 3 \
            and not e.jackpot_lines
    return forcing.find_stops(model.base_reels, accept)


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``starfever serve --market strict --model rtp94`` (test mode, SQLite)."""
    directory = tmp_path_factory.mktemp("strict-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, args=("--market", "strict", "--model",
                                                  "rtp94")) as started:
        yield started


@pytest.fixture
def strict_game(browser: Any, strict_server: Server) -> Iterator[Game]:
    with game_on(browser, strict_server, 1366, 768) as started:
        yield started


def _open_rules(game: Game, lang: str) -> str:
    page = game.page
    page.click("#open-paytable")
    page.click(f'#dlg-paytable [data-lang="{lang}"]')
    page.click("#tab-rules")
    text = game.text("#rules-body")
    page.click("#dlg-paytable [data-close]")
    return text


def test_the_rules_show_the_running_models_exact_figures(strict_game: Game) -> None:
    game = strict_game
    game.new_player(0)
    figures = cached(load_model("rtp94"))
    assert figures is not None
    total, game_part = figures.exact.total, figures.exact.game
    english = _open_rules(game, "en")
    statement = game.text('[data-testid="rtp-statement"]')
    assert pct(float(total)) in statement  # 94.00 %: the running model's, not 95.50 %
    assert pct(float(game_part)) in statement and "1.00 %" in statement
    assert "95.5" not in english and "rtp94" in statement
    for needed in ("starts at €1,000.00", "1 % of every total bet", "at most once",
                   "hold no Star Coins", "If the connection drops", "played to its end",
                   "no maximum win", "160.5 × total bet", "No Turbo",
                   "Rounds cannot be skipped", "at least 2.5 seconds", "Maximum stake €10.00"):
        assert needed in english, needed
    german = _open_rules(game, "de")
    assert pct(float(total), "de") in german and pct(float(game_part), "de") in german
    # the conditions' "Einsatz" is the line bet: cash values, Minor, Major and Mega are
    # stated in Gesamteinsatz, the UPGRADE in the running model's unit
    upgrade = {"line_bet": "um 1 × Linieneinsatz", "total_bet": "um 1 × Gesamteinsatz"}[
        load_model("rtp94").hold_and_cash.upgrade_unit]
    for needed in ("1, 2, 3, 4, 5 × Gesamteinsatz", "MINOR (20 × Gesamteinsatz)",
                   "MAJOR (200 × Gesamteinsatz)", "MEGA Jackpot (1000 × Gesamteinsatz)",
                   upgrade, "Verbindung", "keine Star Coins"):
        assert needed in german, needed
    assert " × Einsatz" not in german


def test_the_default_models_rules_and_the_jackpot_values_at_the_bet(game: Game) -> None:
    game.new_player(0)
    rtp = game.page.evaluate("window.starfever.state.game.rtp")
    assert round(rtp["total"], 4) == 0.955
    assert "95.50 %" in _open_rules(game, "en")
    assert (game.text("#pays-minor"), game.text("#pays-major"), game.text("#pays-mega")) == (
        "€4.00", "€40.00", "€200.00")  # 20, 200, 1000 x the total bet of €0.20
    game.page.click("#bet-up")
    assert game.cents("#pays-mega") == 1000 * 40
    box = game.page.evaluate("""() => [document.querySelector('.pool').getBoundingClientRect(),
        document.querySelector('#hc-pays').getBoundingClientRect()].map(r => [r.left, r.right,
        r.top, r.bottom])""")
    pool, pays = box
    assert pays[0] >= pool[1] - 1 and abs(pays[2] - pool[2]) < 40  # beside the €€€ meter


def test_the_strict_market_in_the_browser(strict_game: Game) -> None:
    game = strict_game
    page = game.page
    model = load_model("rtp94")
    game.new_player(20_000, speed=FAST)
    market = page.evaluate("window.starfever.state.game.market")
    assert market == load_market("strict").public()
    assert not page.is_visible(".turbo")
    for _ in range(12):
        if not page.is_disabled("#bet-up"):
            page.click("#bet-up")
    assert game.cents("#total-bet") == 1_000  # the market's largest stake
    assert page.is_disabled("#bet-up")
    for _ in range(12):
        if not page.is_disabled("#bet-down"):
            page.click("#bet-down")
    # a win equal to the stake: shown, not celebrated
    game.force(line_factor_draws(model, 20, 20))
    # the round's length measured in the page (the click, the moment Spin comes back), not by
    # this process's round trips, which a loaded machine delays
    page.evaluate("""() => {
        const t = window.__round = {};
        document.querySelector('#spin').addEventListener('click',
            () => { t.clicked = performance.now(); }, { capture: true, once: true });
        new MutationObserver((changes, observer) => {
            if (t.clicked && !document.body.classList.contains('busy')) {
                t.idle = performance.now(); observer.disconnect(); }
        }).observe(document.body, { attributes: true, attributeFilter: ['class'] }); }""")
    page.click("#spin")
    page.wait_for_timeout(300)
    assert not page.is_visible("#skip")  # no slam stop
    page.locator("body").press("Space")  # nor by the keyboard
    game.wait_idle(timeout=10_000)
    first = page.evaluate("window.starfever.state.lastRound")
    assert first["total_win"] == first["total_bet"]
    end = game.log()[-1]
    assert end["kind"] == "end" and end["glow"] is False and end["celebration"] is None
    assert "back of your €0.20 stake" in game.text("#win-line")
    # Spin comes back only after the market's 2.5 s; the next round starts after it
    timing = page.evaluate("window.__round")
    assert timing["idle"] - timing["clicked"] >= 2_500, timing
    game.force(forcing.no_win_draws(model))
    game.spin()
    # net position and elapsed time are always on screen, from the server's session figures
    net = game.cents("#net-position")
    rc = game.server.call("GET", "/reality-check", game.server.login(game.username)).json()
    assert net == rc["net_result"] == first["total_win"] - first["total_bet"] - 20
    inside = page.evaluate("""() => ['#net-position', '#session-clock'].map(sel => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight && r.height > 8; })""")
    assert inside == [True, True]
    assert "Session" in game.text("#session-clock")


def test_a_win_below_the_stake_is_not_celebrated_and_a_big_one_counts_up_by_tier(
        game: Game, model: MathModel) -> None:
    game.new_player(20_000)
    game.force(line_factor_draws(model, 1, 19))
    small = game.spin()
    assert 0 < small["total_win"] < small["total_bet"]
    end = game.log()[-1]
    assert end["glow"] is False and end["celebration"] is None
    assert game.text("#win-line") == f"{euro(small['total_win'])} back of your €0.20 stake"
    game.force(line_factor_draws(model, 200, 10_000))  # at least 10 x the total bet
    big = game.spin()
    end = game.log()[-1]
    tier = sum(big["total_win"] >= x * big["total_bet"] for x in (10, 30, 100))
    assert end["celebration"] == {"kind": "bigwin", "tier": tier, "amount": big["total_win"],
                                  "title": ["BIG WIN", "SUPER WIN", "EPIC WIN"][tier - 1]}
    assert end["glow"] is True
    assert game.text("#win") == euro(big["total_win"])
    assert not game.page.is_visible("#celebrate")  # it ended by itself
    # recalled, the same round is shown, never celebrated, and not called money back
    game.page.click("#open-history")
    game.page.click(f'#history-list button[data-round="{big["id"]}"]')
    game.page.wait_for_selector("#recall-ribbon:not([hidden])")
    game.wait_idle()
    end = game.log()[-1]
    assert end["celebration"] is None and end["glow"] is False
    assert "back of your" not in end["winLine"] and end["win"] == euro(big["total_win"])


def test_the_mega_gets_the_full_show_and_the_jackpot_symbols_are_framed(
        game: Game, model: MathModel) -> None:
    game.new_player(20_000)
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 1)] * 10]))
    round_ = game.spin()
    mega = next(s for s in game.log() if s["kind"] == "mega")
    assert mega["celebration"]["kind"] == "mega" and mega["celebration"]["tier"] == 3
    assert mega["celebration"]["amount"] == 1000 * round_["total_bet"]
    game.force(forcing.jackpot_draws(model))
    round_ = game.spin()
    share = next(e for e in round_["events"] if e["type"] == "jackpot")
    shown = next(s for s in game.log() if s["kind"] == "jackpot")
    assert len(shown["framed"]) == 3
    assert all(cell.endswith(":JACKPOT") for cell in shown["framed"])
    assert f"{share['percent']} % of the pool = {euro(share['win'])}" in shown["winLine"]


def test_anticipation_when_a_feature_is_one_coin_away(game: Game, model: MathModel) -> None:
    game.new_player(20_000)
    game.force(forcing.no_win_draws(model))
    game.spin()
    assert game.page.get_attribute("#reels", "data-anticipated") in (None, "0")
    game.force(anticipation_draws(model))
    game.spin()
    assert int(game.page.get_attribute("#reels", "data-anticipated") or 0) >= 1


def test_sound_is_off_until_turned_on_and_has_a_volume(game: Game, model: MathModel) -> None:
    game.new_player(20_000)
    page = game.page
    assert page.evaluate("window.starfever.sound.on") is False
    game.spin()
    assert page.evaluate("window.starfever.sound.context") is None  # none made while off
    assert page.evaluate("window.starfever.sound.played.length") == 0
    page.click("#sound-toggle")
    assert page.get_attribute("#sound-toggle", "aria-pressed") == "true"
    page.fill("#volume", "30")
    page.dispatch_event("#volume", "input")
    assert page.evaluate("window.starfever.sound.master.gain.value") == pytest.approx(0.3)
    game.force(forcing.line_win_draws(model))
    game.spin()
    played = page.evaluate("window.starfever.sound.played")
    assert {"spin", "stop", "win"} <= set(played)
    page.click("#sound-toggle")
    count = len(played)
    game.spin()
    assert page.evaluate("window.starfever.sound.played.length") == count
    assert page.evaluate("localStorage.getItem('sf.sound')") == "0"


def test_live_regions_announce_final_values_once(game: Game, model: MathModel) -> None:
    game.new_player(20_000)
    page = game.page
    live = page.evaluate("""() => [...document.querySelectorAll('[aria-live]')]
        .filter(el => el.getAttribute('aria-live') !== 'off').map(el => el.id)""")
    assert live == ["announcer"]
    for sel in ("#win", "#balance", "#total-bet", "#cel-amount"):
        assert page.get_attribute(sel, "aria-live") == "off"  # an <output> is live by default
    page.evaluate("""() => { window.__changes = 0; new MutationObserver(() => window.__changes++)
        .observe(document.querySelector('#announcer'), {childList: true, characterData: true,
        subtree: true}); }""")
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("CASH", 2)], []]))
    round_ = game.spin()
    assert page.evaluate("window.__changes") == 1
    balance = game.server.balance(game.server.login(game.username))
    assert game.text("#announcer") == f"Win {euro(round_['total_win'])}. Balance {euro(balance)}."


def test_symbols_are_named_in_the_pages_language(game: Game, model: MathModel) -> None:
    game.new_player(20_000)
    page = game.page
    names = {s["code"]: s["name"] for s in page.evaluate("window.starfever.state.game.symbols")}

    def labels() -> dict[str, str]:
        found: dict[str, str] = page.evaluate("""() => Object.fromEntries([...document
            .querySelectorAll('#reels .cell[data-symbol]')].map(el => [el.dataset.symbol,
            el.querySelector('svg').getAttribute('aria-label')]))""")
        return found

    for code, label in labels().items():
        assert label == names[code]["en"]
    page.click('.menu [data-lang="de"]')
    german = labels()
    for code, label in german.items():
        assert label == names[code]["de"]
    assert any(label != names[code]["en"] for code, label in german.items())
    game.force(forcing.hold_and_cash_draws(model, [1, 2, 3, 1, 5], [[("MINOR", 0)]]))
    game.spin()
    board = page.evaluate("""() => [...document.querySelectorAll('#hc-grid .hc-sym')]
        .map(el => el.getAttribute('aria-label'))""")
    assert "Geldsymbol" in board and "CASH" not in board


def test_the_default_market_offers_every_bet_class(game: Game) -> None:
    game.new_player(0)
    for _ in range(12):
        if not game.page.is_disabled("#bet-up"):
            game.page.click("#bet-up")
    assert game.cents("#total-bet") == 2_000


def test_a_spin_the_server_finds_too_early_is_sent_again_and_played_once(
        strict_game: Game) -> None:
    """Another client of the same player spins first: the page's spin is refused
    ``round_too_soon`` (nothing debited), and the page sends the same request again until the
    market's 2.5 s have passed; one round, one bet."""
    game = strict_game
    game.watch.allow("status of 429")  # the refusal the test provokes
    name = game.new_player(5_000)
    token = game.server.login(name)
    other = game.server.spin(token)
    assert other.status_code == 201
    played = game.spin(timeout=15_000)
    rounds = game.server.call("GET", "/rounds", token).json()["rounds"]
    assert [r["id"] for r in rounds] == [played["id"], other.json()["round"]["id"]]
    later, earlier = (datetime.fromisoformat(r["created_at"]) for r in rounds)
    assert (later - earlier).total_seconds() >= 2.4  # refused, then sent again until allowed
    net = sum(r["total_win"] - r["total_bet"] for r in rounds)
    assert game.cents("#balance") == game.server.balance(token) == 5_000 + net
    assert played["balance_after"] == 5_000 + net  # the page's round was the later one


def test_chromium_gets_the_page_and_its_assets_compressed_and_cached(game: Game) -> None:
    """What Debian's Chromium receives: the page and every module and style gzip-compressed
    (fewer bytes on the wire than decoded), the assets under a versioned address cached for
    good, the page never; ``HEAD /`` answers."""
    game.open()
    page = game.page
    sizes = page.evaluate("""() => [...performance.getEntriesByType('navigation'),
        ...performance.getEntriesByType('resource')].map(e => [new URL(e.name).pathname,
        e.encodedBodySize, e.decodedBodySize]).filter(([p]) => /\\/$|\\.(js|css)$/.test(p))""")
    paths = [path for path, _, _ in sizes]
    assert "/" in paths and any(p.endswith("/js/app.js") for p in paths), paths
    assert [p for p, encoded, decoded in sizes if not 0 < encoded < decoded] == []
    asset = next(p for p in paths if p.endswith("/js/app.js"))
    assert asset.startswith("/static/") and asset.count("/") == 4  # /static/<version>/js/..
    cached_for_good = page.request.get(game.server.url + asset)
    assert "immutable" in cached_for_good.headers["cache-control"]
    head = page.request.head(game.server.url + "/")
    assert head.status == 200 and head.headers["cache-control"] == "no-cache"
