"""The ``de`` model (ADR 0072): Germany allows no progressive, nothing presented as a jackpot
and at most EUR 1 a game. Its exact figures are reproduced at every class it is offered at,
it has no €€€ anywhere, its game conditions name no jackpot in either language, and the model
format's new keys leave every other model's file and hash as they were."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from starfever.conditions import render
from starfever.engine import symbols
from starfever.engine.model import (
    PRIZES_MULTIPLIER,
    ModelError,
    load_model,
    model_from_dict,
    shipped_models,
)
from starfever.math import exact, figures
from starfever.math.figures_format import Figures

DE_CLASSES = (1, 2, 3, 4, 5)
"""The line bets whose total bet (x 20) is at most EUR 1.00."""

HASHES = {
    "default": "5a3769f3d7c5", "default-total-bet": "98dd7b86ab6b", "rtp94": "04d615f4494e",
    "rtp96": "ffea01cd3217", "low-volatility": "2ca9ee4c94c2", "high-volatility": "69a05e651ab1",
    "capped": "fb5f2437c8dc",
}
"""The hashes every other shipped model had before the format's new keys (docs/math.md)."""


@pytest.fixture(scope="module")
def shipped() -> Figures:
    found = figures.cached(load_model("de"))
    assert found is not None, "the de model ships its figures"
    return found


def test_the_de_model_returns_95_50_at_every_class_it_is_offered_at(shipped: Figures) -> None:
    model = load_model("de")
    assert model.line_bets == DE_CLASSES
    assert all(b * symbols.LINE_COUNT <= 100 for b in model.line_bets)
    assert tuple(shipped.by_line_bet) == DE_CLASSES  # the figures state exactly these classes
    for bet, row in shipped.by_line_bet.items():
        assert abs(row.total - 0.955) <= 0.0002, bet
        assert row.progressive == 0 and row.total == shipped.total
    assert "starfever tune" in model.description


def test_the_de_models_exact_figures_are_reproduced(shipped: Figures) -> None:
    """The rational calculator (seconds) gives the shipped rationals digit for digit; the rest
    of the shipped figures are recomputed by the slow test_figures.py, like every model's."""
    report = exact.compute(load_model("de"))
    assert report.total == shipped.exact.total
    assert (report.lines, report.star_wild, report.hold_and_cash) == (
        shipped.exact.lines, shipped.exact.star_wild, shipped.exact.hold_and_cash)
    assert report.hit_frequency == shipped.exact.hit_frequency
    assert report.progressive == 0 and report.jackpot_frequency == 0
    assert abs(report.total - Fraction(955, 1000)) < Fraction(2, 10_000)


def test_the_de_model_has_no_progressive(shipped: Figures) -> None:
    model = load_model("de")
    assert not model.has_progressive
    assert model.to_dict()["progressive"] is None
    assert (model.contribution_rate, model.seed_cents) == (0, 0)
    assert not any(symbols.JACKPOT in s for s in (*model.base_reels, *model.star_wild_reels))
    assert shipped.jackpot_frequency == 0 and shipped.components.progressive == 0
    assert not shipped.has_progressive and shipped.jackpot_long_run == {}
    assert shipped.std_dev == shipped.std_dev_game  # no pool share in any round
    # the 1.00 % the pool returned elsewhere now comes from the game
    default = figures.cached(load_model("default"))
    assert default is not None
    assert shipped.game - default.game > 0.0099


def test_a_model_without_progressive_may_not_show_the_pool_symbol() -> None:
    data = load_model("de").to_dict()
    data["reels"]["base"][0][0] = symbols.JACKPOT
    with pytest.raises(ModelError, match="must not place JACKPOT on any strip"):
        model_from_dict(data)


@pytest.mark.parametrize(("key", "value", "says"), [
    ("line_bets", [5, 1], "ascending"),
    ("line_bets", [6], "line_bets must be bet classes"),
    ("line_bets", [], "at least one"),
    ("prize_names", "bonus", "prize_names must be one of jackpot, multiplier"),
])
def test_the_new_keys_are_checked(key: str, value: object, says: str) -> None:
    data = load_model("de").to_dict()
    if key == "prize_names":
        data["hold_and_cash"][key] = value
    else:
        data[key] = value
    with pytest.raises(ModelError, match=says):
        model_from_dict(data)


def test_the_new_keys_leave_every_other_model_as_it_was() -> None:
    assert set(shipped_models()) == {*HASHES, "de"}
    for name, digest in HASHES.items():
        model = load_model(name)
        assert model.sha256.startswith(digest), name
        data = model.to_dict()
        assert "line_bets" not in data and "prize_names" not in data["hold_and_cash"], name
        assert model.has_progressive and model.line_bets == symbols.BET_CLASSES
    de = load_model("de")
    assert de.hold_and_cash.prize_names == PRIZES_MULTIPLIER
    again = model_from_dict(json.loads(json.dumps(de.to_dict())))
    assert again == de and again.sha256 == de.sha256


@pytest.fixture(scope="module")
def conditions(shipped: Figures) -> dict[str, str]:
    return {lang: c.markdown for lang, c in render(load_model("de"), shipped).items()}


def test_the_de_conditions_name_no_jackpot_and_say_there_is_no_progressive(
        conditions: dict[str, str]) -> None:
    de, en = conditions["de"], conditions["en"]
    for text in (de, en):
        assert "jackpot" not in text.lower() and "€€€" not in text
        for word in ("minor", "major", "mega"):  # the jackpot tiers' names
            assert word not in text.lower(), word
    assert "Dieses Spiel hat keinen progressiven Gewinn" in de
    assert "This game has no progressive prize" in en
    assert "| Auszahlungsfaktor (Gesamteinsatz x) | 20 | 200 | 1000 |" in de
    assert "| Festgewinnsymbol x20 |" in de and "Vollbildgewinn" in de
    assert "| Payout factor (total bet x) | 20 | 200 | 1000 |" in en
    assert "| x200 prize symbol |" in en and "full-screen prize" in en


def test_the_de_conditions_list_only_the_classes_of_at_most_eur_1(
        conditions: dict[str, str]) -> None:
    de, en = conditions["de"], conditions["en"]
    assert "Einsatzklassen pro Gewinnlinie: € 0,05; € 0,04; € 0,03; € 0,02; € 0,01." in de
    assert "(€ 0,20 bis € 1)" in de
    assert "€ 0,10" not in de and "€0.10" not in en
    assert "95,50 %" in de and "95.50 %" in en
