"""The server serves the running model's game conditions beside the rules page
(``GET /api/v1/game/conditions/{lang}``), and refuses to start with a model whose conditions
it cannot write."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from starfever.conditions import render
from starfever.engine.model import load_model
from starfever.markets import load_market
from starfever.server.identity import check_conditions, check_startup
from starfever.server.settings import Settings, SettingsError
from starfever.web import mount_web


@pytest.mark.parametrize("name", ["default", "capped"])
def test_the_conditions_of_the_running_model_are_served_in_both_languages(name: str) -> None:
    model = load_model(name)
    app = FastAPI()
    mount_web(app)
    app.state.context = SimpleNamespace(model=model)
    client = TestClient(app)
    expected = render(model, market=load_market("at"))  # a server without settings: at's
    for lang in ("de", "en"):
        page = client.get(f"/api/v1/game/conditions/{lang}")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert page.headers["content-language"] == lang
        assert page.text == expected[lang].html
        text = client.get(f"/api/v1/game/conditions/{lang}?format=md")
        assert text.headers["content-type"].startswith("text/markdown")
        assert text.text == expected[lang].markdown
        assert model.sha256 in text.text
    assert client.get("/api/v1/game/conditions/fr").status_code == 404
    assert client.get("/api/v1/game/conditions/de?format=pdf").status_code == 404


def test_the_conditions_state_the_running_markets_rules_in_its_words() -> None:
    """The uk market's section (ADR 0077): its caps in its currency, British wording in
    English, and every rule in German too; a model's own text stays as it was."""
    model = load_model("default")
    app = FastAPI()
    mount_web(app)
    app.state.context = SimpleNamespace(model=model, settings=SimpleNamespace(market="uk"))
    client = TestClient(app)
    en = client.get("/api/v1/game/conditions/en?format=md").text
    de = client.get("/api/v1/game/conditions/de?format=md").text
    assert en.startswith(render(model)["en"].markdown.rstrip("\n"))
    section = en.split("## Rules of the market “uk”", 1)[1]
    for said in ("Every game cycle lasts at least 2.5 seconds", "The stake of one spin is at "
                 "most GBP 5.00", "For players under 25 it is at most GBP 2.00",
                 "There is no autoplay", "no slam stop", "There is no turbo mode",
                 "the net position of the session (winnings minus stakes) are always on "
                 "screen", "A win at or below the stake is not celebrated",
                 "offered only to players the operator has verified"):
        assert said in section, said
    section = de.split("## Bestimmungen des Marktes „uk“", 1)[1]
    for said in ("mindestens 2,5 Sekunden", "höchstens 5,00 GBP",
                 "Für Spieler unter 25 Jahren beträgt er höchstens 2,00 GBP",
                 "kein automatisches Spiel", "keinen Turbo", "nicht abgekürzt",
                 "das Ergebnis der Sitzung (Gewinne minus Einsätze) sind immer zu sehen",
                 "bis zur Höhe des Einsatzes wird nicht", "verifiziert"):
        assert said in section, said
    de_market = render(load_model("de"), market=load_market("de"))["en"].markdown
    assert "EUR 1.00" in de_market and "panic button" in de_market
    assert "jackpot" not in de_market.lower() and "€€€" not in de_market


def test_the_rules_page_links_the_conditions() -> None:
    from starfever.web import STATIC_DIR

    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    assert 'href="/api/v1/game/conditions/de"' in page
    script = (STATIC_DIR / "js" / "app.js").read_text(encoding="utf-8")
    assert "/api/v1/game/conditions/${lang()}" in script


def test_a_server_refuses_to_start_with_a_model_whose_conditions_it_cannot_write() -> None:
    model = load_model("default")
    broken = dataclasses.replace(model, name="own", hold_and_cash=dataclasses.replace(
        model.hold_and_cash, upgrade_unit="half_bet"))
    check_conditions(model)  # the shipped model: no refusal
    with pytest.raises(SettingsError, match=r"no game conditions .*UPGRADE unit 'half_bet'"
                       r".*refusing to start") as error:
        check_startup(Settings(), broken)
    assert "\n" not in str(error.value)


def test_the_start_check_of_a_model_never_seen_leaves_its_figures_to_the_serving(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line-bet model's figures take about a minute the first time (ADR 0032): the start-up
    check reads the rules only, and leaves the figures (and so the full text) to the thread
    beside the serving, which caches them."""
    from starfever.math.figures import cached

    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path))
    model = load_model("default")
    fresh = dataclasses.replace(model, name="never-seen", seed_cents=model.seed_cents + 1)
    assert cached(fresh) is None
    check_conditions(fresh)
    assert cached(fresh) is None  # nothing was computed
