"""The web package without a browser: the rules endpoint agrees with the engine, and
``mount_web`` serves the page and its modules."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from starfever.certify import rules
from starfever.engine import symbols
from starfever.engine.model import load_model, model_from_dict, shipped_models
from starfever.markets import load_market
from starfever.math.figures import cached
from starfever.web import CACHE_FOREVER, STATIC_DIR, asset_version, mount_web, routes
from starfever.web.routes import SYMBOL_NAMES, game_data


def test_game_data_is_the_engine_data() -> None:
    data = game_data()
    assert data["lines"] == [list(line) for line in symbols.LINES]
    assert data["bet_classes"] == list(symbols.BET_CLASSES)
    by_code = {s["code"]: s for s in data["symbols"]}
    assert list(by_code) == list(symbols.SYMBOLS)
    for code, pays in symbols.PAYTABLE.items():
        assert by_code[code]["pays"] == list(pays)
    assert by_code["MWILD"]["pays"] == list(symbols.PAYTABLE["WILD"])
    assert by_code["COIN"]["pays"] is None and by_code["JACKPOT"]["kind"] == "jackpot"
    assert set(SYMBOL_NAMES) == set(symbols.SYMBOLS)
    assert by_code["LEMON"]["name"] == {"de": "Zitrone", "en": "Lemon"}
    hc = data["hold_and_cash"]
    assert (hc["minor"], hc["major"], hc["mega"]) == (
        symbols.MINOR_PAYS, symbols.MAJOR_PAYS, symbols.MEGA_PAYS)


def test_mount_web_serves_page_modules_and_rules() -> None:
    app = FastAPI()
    prefix = mount_web(app)
    client = TestClient(app)
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert page.headers["cache-control"] == "no-cache"
    assert f'<script type="module" src="{prefix}/js/app.js">' in page.text
    assert page.text.count('"/static/') == page.text.count(f'"{prefix}/')  # all versioned
    for path in sorted(STATIC_DIR.rglob("*.js")):
        response = client.get(f"{prefix}/{path.relative_to(STATIC_DIR)}")
        assert response.status_code == 200
        assert "javascript" in response.headers["content-type"]
        assert response.headers["cache-control"] == CACHE_FOREVER
    assert client.get(f"{prefix}/css/app.css").status_code == 200
    assert client.get("/api/v1/game").json()["line_count"] == 20
    assert client.head("/").status_code == 200


def test_assets_are_compressed_and_their_version_follows_their_bytes(tmp_path: Path) -> None:
    app = FastAPI()
    prefix = mount_web(app)
    client = TestClient(app)
    zipped = client.get(f"{prefix}/js/app.js", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.text == (STATIC_DIR / "js" / "app.js").read_text(encoding="utf-8")
    plain = client.get(f"{prefix}/js/app.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    shutil.copytree(STATIC_DIR, tmp_path / "static")
    assert asset_version(tmp_path / "static") == asset_version()
    (tmp_path / "static" / "css" / "app.css").write_text("body {}", encoding="utf-8")
    assert asset_version(tmp_path / "static") != asset_version()


def test_the_page_itself_is_compressed_too() -> None:
    app = FastAPI()
    mount_web(app)
    client = TestClient(app)
    zipped = client.get("/", headers={"Accept-Encoding": "gzip, deflate"})
    plain = client.get("/", headers={"Accept-Encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip" and zipped.text == plain.text
    assert int(zipped.headers["content-length"]) < len(plain.content) / 2
    assert "content-encoding" not in plain.headers
    for answer in (zipped, plain):
        assert answer.headers["vary"] == "Accept-Encoding"
        assert answer.headers["cache-control"] == "no-cache"
    head = client.head("/", headers={"Accept-Encoding": "gzip"})
    assert head.status_code == 200 and head.headers["content-encoding"] == "gzip"


def test_the_page_loads_nothing_from_elsewhere() -> None:
    for path in STATIC_DIR.rglob("*"):
        if path.is_file():
            # the SVG namespace is a name, never fetched (the favicon is a standalone SVG)
            text = path.read_text(encoding="utf-8").replace('xmlns="http://www.w3.org/2000/svg"',
                                                            "")
            assert "http://" not in text and "https://" not in text, path


@pytest.mark.parametrize("name", shipped_models())
def test_game_data_states_the_models_exact_rtp_and_the_market(name: str) -> None:
    model = load_model(name)
    data = game_data(model, load_market("strict"))
    figures = cached(model)
    assert figures is not None, f"the shipped figures of {name} are missing"
    total, progressive = figures.exact.total, figures.exact.progressive
    assert data["rtp"] == {"total": float(total), "game": float(total - progressive),
                           "progressive": float(progressive)}
    assert data["jackpot"]["seed_cents"] == model.seed_cents
    assert data["max_win"]["cap_x"] == model.max_win_x
    assert data["market"]["name"] == "strict" and "advertised_rtp" not in data


@pytest.mark.slow  # computes a model's figures (seconds): the full suite, not --quick (ADR 0045)
def test_a_new_models_rules_state_its_largest_wins_too(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A model with no cached figures (a new file): GET /game computes them, the largest wins
    as well as the return, so the maximum-win statement names numbers, not dashes."""
    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path / "cache"))
    # a total-bet model: its figures take seconds, a line-bet model's about a minute (ADR
    # 0032), and what is under test is the page's use of them, the same for either unit
    data = json.loads((STATIC_DIR.parent.parent / "models" / "default-total-bet.json")
                      .read_text("utf-8"))
    data["name"] = "a-new-one"
    (tmp_path / "new.json").write_text(json.dumps(data), encoding="utf-8")
    model = load_model(str(tmp_path / "new.json"))
    assert cached(model) is None
    served = game_data(model)
    figures = cached(model)  # computed once, and kept for the next process
    assert figures is not None
    largest = figures.max_win_x
    assert served["max_win"]["largest_x"] == {"base": largest.base,
                                              "star_wild": largest.star_wild}
    assert largest.base > 0 and largest.star_wild > 0
    assert served["rtp"]["total"] == float(figures.exact.total)


@pytest.mark.parametrize("name", shipped_models())
def test_game_data_states_the_models_hit_and_feature_frequencies(name: str) -> None:
    """RULES.md: the hit frequency (a round's total win above zero) and, apart from it, the
    features' frequencies, all from the running model's exact figures; the rules page states
    them from here."""
    model = load_model(name)
    figures = cached(model)
    assert figures is not None
    assert game_data(model)["frequencies"] == {
        "hit": float(figures.exact.hit_frequency),
        "star_wild": figures.star_wild_frequency,
        "hold_and_cash": figures.hold_and_cash_frequency}
    assert "frequencies" not in game_data()  # no model, no figures to state


@pytest.mark.parametrize("name", shipped_models())
def test_no_shipped_models_star_wild_respin_can_win_the_jackpot(name: str) -> None:
    model = load_model(name)
    assert all(symbols.JACKPOT not in strip for strip in model.star_wild_reels)
    assert game_data(model)["star_wild_respin_jackpot"] is False
    for lang, needed in (("en", "so the respin cannot win the €€€"),
                         ("de", "der Respin kann den €€€ nicht gewinnen")):
        text = rules.render(model)[lang]["text"]
        if model.has_progressive:
            assert needed in text
        else:  # a model without the pool names no pool and no jackpot (ADR 0072, 0077)
            assert not re.search(r"€€€|[Jj]ackpot|\bpool\b|\bPool", text), lang


def test_a_respin_whose_reels_hold_the_jackpot_keeps_the_rule_as_in_any_spin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    default = load_model("default")
    data = default.to_dict()
    data["name"] = "respin-jackpot"
    data["reels"]["star_wild"] = [[*strip, symbols.JACKPOT] if reel < symbols.JACKPOT_REELS
                                  else strip
                                  for reel, strip in enumerate(data["reels"]["star_wild"])]
    model = model_from_dict(data)
    figures = routes.model_figures(default)  # the figures play no part here: no recomputation
    monkeypatch.setattr(routes, "model_figures", lambda _model: figures)
    assert game_data(model)["star_wild_respin_jackpot"] is True
    rendered = rules.render(model)
    assert "its line wins and the €€€ count as in any spin" in rendered["en"]["text"].replace(
        "Its line", "its line")
    assert "Seine Liniengewinne und der €€€ gelten wie in jedem Spin." in rendered["de"]["text"]
    assert "cannot win the €€€" not in rendered["en"]["text"]


def test_the_bundles_rules_speak_the_markets_words() -> None:
    """``certify --market uk``: the client's British words (``KEY__uk``) and both caps, as the
    page shows them in that market (ADR 0077); another market keeps the plain words."""
    uk = rules.render(load_model("default"), market=load_market("uk"))
    assert "Maximum stake €5.00 a spin. Players under 25 may stake at most €2.00 a spin." \
        in uk["en"]["text"]
    assert "A win at or below the stake is not celebrated." in uk["en"]["text"]
    assert "Für Spieler unter 25 Jahren höchstens 2,00 € pro Runde." in uk["de"]["text"]
    at = rules.render(load_model("default"), market=load_market("at"))["en"]["text"]
    assert "Maximum stake €20.00 a round." in at and "stake at most" not in at
