"""What the page tells a player about a capped round and about how often the game pays
(a rules review): a round stopped at the model's maximum win shows what is paid, never the
uncapped held values on the win meter, and says in words that the maximum was reached; the
rules state the running model's exact hit and feature frequencies, and that the Star Wild
respin cannot win the €€€ where its reels hold none. Real server processes (``--model
capped`` for the capped rounds), Debian's Chromium."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from starfever.engine.model import MathModel, load_model
from starfever.engine.round import replay_round
from starfever.math.figures import cached
from starfever.math.figures_format import Figures
from tests.harness import Databases, Server, start_server
from tests.web import forcing
from tests.web.conftest import Game, game_on

pytestmark = pytest.mark.browser


def euro(cents: int, lang: str = "en") -> str:
    """What the page shows: "€1,234.56" (en), "1.234,56 €" (de)."""
    text = f"{cents // 100:,}.{cents % 100:02d}"
    if lang == "de":
        return text.replace(",", "_").replace(".", ",").replace("_", ".") + "\u00a0€"
    return f"€{text}"


def watch_banners(game: Game) -> None:
    """Record the text of every banner the page shows (``window.__banners``); a banner is
    hidden again at the end of its scene, before the step log's picture."""
    game.page.evaluate("""() => {
        window.__banners = [];
        const el = document.querySelector('#banner');
        new MutationObserver(() => { if (!el.hidden) window.__banners.push(el.textContent); })
            .observe(el, { attributes: true, childList: true, subtree: true });
    }""")


def banners(game: Game) -> list[str]:
    shown: list[str] = game.page.evaluate("window.__banners.splice(0)")
    return list(dict.fromkeys(shown))  # in order, once each


def cents_shown(text: str) -> int:
    """The amount in a meter's text ("€360.00", "360,00 €")."""
    return int(re.sub(r"[^0-9]", "", text))


@pytest.fixture(scope="module")
def capped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``starfever serve --model capped`` (test mode, SQLite): a maximum win of 1,800 x."""
    directory = tmp_path_factory.mktemp("capped-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, args=("--model", "capped")) as started:
        yield started


@pytest.fixture
def capped_game(browser: Any, capped_server: Server) -> Iterator[Game]:
    with game_on(browser, capped_server, 1366, 768) as started:
        yield started


def test_a_capped_hold_and_cash_shows_what_is_paid_and_that_the_maximum_was_reached(
        capped_game: Game) -> None:
    game = capped_game
    model = load_model("capped")
    draws = forcing.capped_hold_and_cash_draws(model)
    line_bet = 1  # the page's first bet class: €0.20 total bet, a cap of €360.00
    expected = replay_round(model, line_bet, draws)
    cap = model.max_win_x * expected.total_bet if model.max_win_x else 0
    held = next(e["win"] for e in expected.events if e["type"] == "hold_and_cash_end")
    assert cap == 36_000 and held == 64_000 > cap  # the held values are worth more
    game.new_player(1_000)
    watch_banners(game)
    for lang in ("en", "de"):
        game.page.click(f'#game [data-lang="{lang}"]')
        game.force(draws)
        round_ = game.spin()
        assert round_["total_win"] == cap and round_["hold_and_cash_win"] == cap - round_[
            "base_win"]
        log = game.log()
        kinds = [shot["kind"] for shot in log]
        # the maximum win is told right after the feature that reached it
        assert kinds[kinds.index("hc_end") + 1] == "max_win" and kinds[-1] == "end"
        # the win meter never showed more than the round pays (at the end of the feature it
        # may still be counting up to it)
        assert max(cents_shown(shot["win"]) for shot in log) == cap
        end = next(shot for shot in log if shot["kind"] == "hc_end")
        said = next(shot for shot in log if shot["kind"] == "max_win")
        assert said["win"] == log[-1]["win"] == euro(cap, lang)
        if lang == "en":
            assert end["winLine"] == ("Hold & Cash: €360.00 paid – the held values (€640.00) "
                                      "are capped at the maximum win")
            assert said["winLine"] == ("Maximum win reached: €360.00 (1800 × total bet). The "
                                       "round's game win stops here.")
        else:
            assert end["winLine"] == (f"Hold & Cash: {euro(cap, 'de')} ausgezahlt – die "
                                      f"gehaltenen Werte ({euro(held, 'de')}) sind auf den "
                                      "Höchstgewinn begrenzt")
            assert said["winLine"].startswith(f"Höchstgewinn erreicht: {euro(cap, 'de')} "
                                              "(1800 × Gesamteinsatz)")
        collect = "EINSAMMELN" if lang == "de" else "COLLECT"
        title = "HÖCHSTGEWINN" if lang == "de" else "MAXIMUM WIN"
        shown = banners(game)
        assert shown.index(collect + end["winLine"]) + 1 == shown.index(
            title + said["winLine"])
        # the round's end keeps saying what was paid, not the held values
        assert log[-1]["banner"] == collect + end["winLine"]
        assert "640" not in game.text("#win")


def test_a_skipped_capped_round_ends_on_the_maximum_win(capped_game: Game) -> None:
    game = capped_game
    draws = forcing.capped_hold_and_cash_draws(load_model("capped"))
    game.new_player(1_000, speed=1)
    game.force(draws)
    game.page.click("#spin")
    game.page.wait_for_selector("#holdboard:not([hidden])", timeout=15_000)
    game.page.click("#skip")
    game.wait_idle(timeout=10_000)
    assert game.text("#win") == "€360.00"
    assert game.text("#win-line").startswith("Maximum win reached: €360.00")
    assert "€640.00" in game.text("#banner")  # the collect banner: paid, and held values


def test_the_timeline_caps_the_game_win_and_puts_the_jackpot_on_top(game: Game) -> None:
    """Pure logic (timeline.js): line wins, Star Wild respin lines and Hold & Cash add up to the
    cap at most, whichever part reaches it; a €€€ share comes on top; the ``max_win`` scene
    follows the scene that reached the cap, before the €€€ (the engine logs it after)."""
    game.open()

    def scenes(events: list[dict[str, Any]]) -> list[list[Any]]:
        shown: list[list[Any]] = game.page.evaluate(
            "evs => window.starfever.lib.buildTimeline(evs).map(s => [s.kind, s.winSoFar,"
            " s.paid ?? null, s.capped ?? null])", events)
        return shown

    reveal = {"type": "reveal", "phase": "base", "stops": [0] * 5, "grid": []}
    line = {"type": "line_win", "phase": "base", "line": 1, "symbol": "BAR", "count": 3,
            "multiplier": 1, "win": 100}
    respin_line = {**line, "phase": "star_wild", "win": 9_000}
    jackpot = {"type": "jackpot", "phase": "base", "line": 2, "percent": 1, "win": 700,
               "pool_left": 99_000}
    star_wild = [reveal, line, {"type": "feature", "feature": "star_wild", "star_coins": 4},
                 {"type": "star_wild", "wilds": []}, {**reveal, "phase": "star_wild"},
                 respin_line, respin_line, jackpot, {"type": "max_win", "win": 12_000},
                 {"type": "round_end", "total_win": 12_700, "pool_after": 100_000}]
    assert scenes(star_wild) == [
        ["reveal", 0, None, None], ["lines", 100, 100, False], ["feature", 100, None, None],
        ["star_wild", 100, None, None], ["reveal", 100, None, None],
        ["lines", 12_000, 11_900, True], ["max_win", 12_000, None, None],
        ["jackpot", 12_700, None, None], ["end", 12_700, None, None]]
    hold = [reveal, line, {"type": "feature", "feature": "hold_and_cash", "star_coins": 5},
            {"type": "hold_and_cash_start", "cells": [], "respins_left": 3},
            {"type": "hold_and_cash_end", "cash": 5, "minor": 0, "major": 0, "mega": False,
             "win": 5_760_000}, jackpot, {"type": "max_win", "win": 3_600_000},
            {"type": "round_end", "total_win": 3_600_700, "pool_after": 100_000}]
    assert scenes(hold) == [
        ["reveal", 0, None, None], ["lines", 100, 100, False], ["feature", 100, None, None],
        ["hc_start", 100, None, None], ["hc_end", 3_600_000, 3_599_900, True],
        ["max_win", 3_600_000, None, None], ["jackpot", 3_600_700, None, None],
        ["end", 3_600_700, None, None]]
    uncapped = [e for e in hold if e["type"] != "max_win"]
    uncapped[-1] = {**uncapped[-1], "total_win": 5_760_800}
    assert [s[:2] for s in scenes(uncapped)][-3:] == [
        ["hc_end", 5_760_100], ["jackpot", 5_760_800], ["end", 5_760_800]]


def _open_rules(game: Game, lang: str) -> str:
    page = game.page
    page.click("#open-paytable")
    page.click(f'#dlg-paytable [data-lang="{lang}"]')
    page.click("#tab-rules")
    text = game.text("#rules-body")
    page.click("#dlg-paytable [data-close]")
    return text


def _figures(model: MathModel) -> Figures:
    figures = cached(model)
    assert figures is not None
    return figures


def test_the_rules_state_the_hit_and_feature_frequencies_and_the_respins_jackpot(
        game: Game, model: MathModel) -> None:
    figures = _figures(model)
    hit = figures.exact.hit_frequency
    star, hold = figures.star_wild_frequency, figures.hold_and_cash_frequency
    game.new_player(0)
    served = game.page.evaluate("window.starfever.state.game")
    assert served["frequencies"] == {"hit": float(hit), "star_wild": star,
                                     "hold_and_cash": hold}
    assert served["star_wild_respin_jackpot"] is False
    english = _open_rules(game, "en")
    stated = game.text('[data-testid="frequencies"]')
    assert f"{float(hit) * 100:.2f} %" == "32.39 %"  # the default model's, exactly computed
    for needed in ("Hit frequency (a round's total win is above zero): 32.39 %",
                   f"1 in {1 / float(hit):.2f} rounds", f"Star Wild comes on average 1 in "
                   f"{1 / star:.1f} rounds", f"Hold & Cash 1 in {1 / hold:.1f} rounds",
                   "a Star Wild respin that wins nothing is no hit"):
        assert needed in stated, needed
    assert "They hold no €€€ either, so the respin cannot win the €€€" in english
    assert "the €€€ count as in any spin" not in english
    german = _open_rules(game, "de")
    for needed in ("Trefferhäufigkeit", "32,39 %", f"1 von {1 / float(hit):.2f}".replace(
            ".", ","), f"1 von {1 / star:.1f} Runden".replace(".", ","),
                   "Sie tragen auch keine €€€-Symbole: der Respin kann den €€€ nicht gewinnen"):
        assert needed in german, needed
    # a model whose respin reels hold the €€€ keeps the rule "as in any spin"
    game.page.evaluate("window.starfever.state.game.star_wild_respin_jackpot = true")
    assert "its line wins and the €€€ count as in any spin" in _open_rules(game, "en").replace(
        "Its", "its")
    assert "Seine Liniengewinne und der €€€ gelten wie in jedem Spin" in _open_rules(game, "de")


def test_the_capped_models_rules_state_its_own_frequencies(capped_game: Game) -> None:
    figures = _figures(load_model("capped"))
    capped_game.new_player(0)
    _open_rules(capped_game, "en")
    stated = capped_game.text('[data-testid="frequencies"]')
    hit = float(figures.exact.hit_frequency)
    assert f"{hit * 100:.2f} %" in stated
    assert f"Hold & Cash 1 in {1 / figures.hold_and_cash_frequency:.1f} rounds" in stated
    said = capped_game.text('[data-testid="max-win"]')
    assert "capped at 1800 × total bet (€360.00 at the current bet)" in said
    # what the cap holds is the running model's: the whole round, or (models made before
    # RULES.md said so) the game win with a €€€ share on top
    served = capped_game.page.evaluate("window.starfever.state.game.max_win")
    assert served["scope"] == load_model("capped").max_win_scope
    assert ("stays in the pool" in said) == (served["scope"] == "round")
    assert ("comes on top" in said) == (served["scope"] == "game")


def test_the_timeline_shows_a_share_as_the_cap_that_holds_the_whole_round_pays_it(
        game: Game) -> None:
    """Pure logic (timeline.js) on logs of a model whose cap holds the whole round (RULES.md):
    each €€€ scene shows what its event pays and what stayed in the pool; the meter never
    passes the cap, and no "a share comes on top" is said once the cap is reached."""
    game.open()

    def scenes(events: list[dict[str, Any]]) -> list[list[Any]]:
        shown: list[list[Any]] = game.page.evaluate(
            "evs => window.starfever.lib.buildTimeline(evs).map(s => [s.kind, s.winSoFar,"
            " s.jackpotFollows ?? null, s.withheld ?? null])", events)
        return shown

    reveal = {"type": "reveal", "phase": "base", "stops": [0] * 5, "grid": []}
    line = {"type": "line_win", "phase": "base", "line": 1, "symbol": "BAR", "count": 3,
            "multiplier": 1, "win": 100}
    cap = {"type": "max_win", "win": 3_600_000}
    # Hold & Cash reached the cap: the share (700) has no room left, it stays in the pool
    hold = [reveal, line, {"type": "feature", "feature": "hold_and_cash", "star_coins": 5},
            {"type": "hold_and_cash_start", "cells": [], "respins_left": 3},
            {"type": "hold_and_cash_end", "cash": 5, "minor": 0, "major": 0, "mega": False,
             "win": 5_760_000},
            {"type": "jackpot", "phase": "base", "line": 2, "percent": 100, "win": 0,
             "withheld": 700, "pool_left": 100_700, "refill": 0}, cap,
            {"type": "round_end", "total_win": 3_600_000, "pool_after": 100_700}]
    assert scenes(hold)[-5:] == [
        ["hc_start", 100, None, None], ["hc_end", 3_600_000, None, None],
        ["max_win", 3_600_000, False, None], ["jackpot", 3_600_000, None, 700],
        ["end", 3_600_000, None, None]]
    # a share alone reaches the cap: it is paid up to it, and the cap is said at the end
    share = [reveal, line,
             {"type": "jackpot", "phase": "base", "line": 2, "percent": 100,
              "win": 3_599_900, "withheld": 1_400_100, "pool_left": 1_400_100, "refill": 0},
             cap, {"type": "round_end", "total_win": 3_600_000, "pool_after": 1_400_100}]
    assert scenes(share) == [
        ["reveal", 0, None, None], ["lines", 100, None, None],
        ["jackpot", 3_600_000, None, 1_400_100], ["max_win", 3_600_000, False, None],
        ["end", 3_600_000, None, None]]


@pytest.mark.parametrize(("before", "after", "added"), [(2_000, 2_005, 5), (2_000, 2_100, 100)],
                         ids=["line-bet", "total-bet"])
def test_the_timeline_reads_what_an_upgrade_added_off_its_values(
        game: Game, before: int, after: int, added: int) -> None:
    """The UPGRADE banner's amount is what the event's values rose by (1 x line bet or 1 x
    total bet, as the round's model says): at EUR 0.05 a line, 5 or 100 cents."""
    game.open()
    cell = {"reel": 0, "row": 0, "kind": "CASH"}
    events = [{"type": "hold_and_cash_start", "cells": [{**cell, "value": before}],
               "respins_left": 3},
              {"type": "respin", "index": 1, "landed": [{"reel": 1, "row": 0,
                                                         "kind": "UPGRADE"}],
               "boosters": [{"reel": 1, "row": 0, "kind": "UPGRADE",
                             "values": [{**cell, "value": after}]}], "respins_left": 3}]
    boosters = game.page.evaluate(
        "evs => window.starfever.lib.buildTimeline(evs).filter(s => s.kind === 'hc_respin')"
        ".map(s => s.boosters.map(b => [b.kind, b.added]))", events)
    assert boosters == [[["UPGRADE", added]]]


def test_the_rules_say_what_an_upgrade_adds_and_what_the_cap_holds(game: Game,
                                                                   model: MathModel) -> None:
    """The rules text follows the running model's UPGRADE unit and cap scope as the server
    serves them (``GET /api/v1/game``), and never assumes the total bet."""
    game.new_player(0)
    served = game.page.evaluate("window.starfever.state.game")
    assert served["hold_and_cash"]["upgrade_unit"] == model.hold_and_cash.upgrade_unit
    said = {"line_bet": ("raises every cash value by 1 × line bet",
                         "um 1 × Linieneinsatz"),
            "total_bet": ("raises every cash value by 1 × total bet",
                          "um 1 × Gesamteinsatz")}
    for unit, (english, german) in said.items():
        game.page.evaluate(f"window.starfever.state.game.hold_and_cash.upgrade_unit = "
                           f"{unit!r}")
        assert english in _open_rules(game, "en")
        assert german in _open_rules(game, "de")
        other = said["total_bet" if unit == "line_bet" else "line_bet"]
        assert other[0] not in _open_rules(game, "en")
    game.page.evaluate("window.starfever.state.game.max_win = {cap_x: 1800, largest_x: {},"
                       " scope: 'round'}")
    _open_rules(game, "en")
    whole = game.text('[data-testid="max-win"]')
    assert "total win (lines, Star Wild, Hold & Cash and any €€€ share) is capped" in whole
    assert "stays in the pool" in whole and "comes on top" not in whole
    _open_rules(game, "de")
    assert "bleibt im Pool" in game.text('[data-testid="max-win"]')
    game.page.evaluate("window.starfever.state.game.max_win.scope = 'game'")
    _open_rules(game, "en")
    earlier = game.text('[data-testid="max-win"]')
    assert "A €€€ share comes on top." in earlier and "stays in the pool" not in earlier
