"""The game conditions generated from a model: the German text of the default model says
everything the supplied conditions say (each sentence, each table row, each list item of
``seed/star-fever-game-conditions.de.txt``), both languages state every reading RULES.md
fixes with the model's own numbers, and a model whose conditions cannot be written is refused
in one line."""

from __future__ import annotations

import dataclasses
import os
import re
from fractions import Fraction
from pathlib import Path

import pytest

from starfever.conditions import ConditionsError, render
from starfever.conditions.numbers import euros, number, percent
from starfever.engine import symbols
from starfever.engine.model import UPGRADE_LINE_BET, MathModel, load_model, shipped_models
from starfever.math.figures import figures
from starfever.math.figures_format import Figures

SEED_NAME = "star-fever-game-conditions.de.txt"
SEED = next((path for path in (
    Path(os.environ.get("STARFEVER_CONDITIONS_SEED", "/nonexistent")),
    Path(__file__).resolve().parents[2].parent / "shared" / "seed" / SEED_NAME,  # beside main
    Path("/work/shared/seed") / SEED_NAME) if path.is_file()), None)
"""The supplied conditions (not part of the repository): $STARFEVER_CONDITIONS_SEED, else the
shared folder beside the checkout."""
needs_seed = pytest.mark.skipif(SEED is None, reason="the supplied conditions "
                                f"({SEED_NAME}) are not found: set STARFEVER_CONDITIONS_SEED")

REWORDED: frozenset[str] = frozenset()
"""Seed sentences the generated text does not repeat word for word: none. A sentence added
here needs the fact it states checked by a test of its own."""


def _norm(text: str) -> str:
    for quote in "„“”\"":
        text = text.replace(quote, '"')
    return " ".join(text.replace("*", "").split())


def _line_bet_default() -> tuple[MathModel, Figures]:
    """The default model with the UPGRADE unit the supplied conditions name (RULES.md: the
    line bet). Once the shipped default has it (the models' retune), this is the default
    itself; until then the default's own figures stand in: this test reads the clauses, the
    numbers are checked per model below."""
    model = load_model("default")
    if model.hold_and_cash.upgrade_unit == UPGRADE_LINE_BET:
        return model, figures(model)
    variant = dataclasses.replace(model, hold_and_cash=dataclasses.replace(
        model.hold_and_cash, upgrade_unit=UPGRADE_LINE_BET))
    return variant, figures(model)


@pytest.fixture(scope="module")
def german() -> str:
    model, figs = _line_bet_default()
    return render(model, figs)["de"].markdown


def _seed_text() -> str:
    assert SEED is not None
    return SEED.read_text(encoding="utf-8")


def _seed_prose() -> list[str]:
    if SEED is None:
        return []
    return [line for line in _seed_text().splitlines()
            if line.strip() and not line.startswith("|") and not line.startswith("- ")]


def _sentences() -> list[str]:
    out = []
    for line in _seed_prose():
        for sentence in re.split(r"(?<=[.!?:])\s+(?=[A-ZÄÖÜ„“*])", line):
            cleaned = _norm(sentence).rstrip(".:")
            if cleaned and cleaned not in REWORDED:
                out.append(cleaned)
    return out


@needs_seed
@pytest.mark.parametrize("sentence", _sentences())
def test_every_sentence_of_the_supplied_conditions_is_in_the_german_text(
        german: str, sentence: str) -> None:
    text = _norm(german)
    assert sentence in text or sentence.lower() in text.lower(), sentence


def _seed_tables() -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*_seed_text().splitlines(), ""]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                current.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    return tables


@needs_seed
def test_every_row_of_the_supplied_paytable_is_in_the_german_text(german: str) -> None:
    paytable = _seed_tables()[0]
    rows = [row for row in paytable if row[0] and row[1].isdigit()]
    assert len(rows) == len(symbols.PAYING_SYMBOLS) + 1  # the eight symbols and Wild
    for name, *factors in rows:
        factors = [f for f in factors if f]
        assert f"| {name} | {' | '.join(factors)} |" in german, name


@needs_seed
def test_the_jackpot_payouts_and_the_eur_share_table_are_in_the_german_text(
        german: str) -> None:
    tables = _seed_tables()
    payouts = tables[1]
    assert payouts[0][1:] == ["Minor", "Major", "Mega"]
    assert f"| {' | '.join(payouts[1][1:])} |" in german
    share = tables[2]
    bets, shares = share[0][1:], share[1][1:]
    assert len(bets) == len(symbols.BET_CLASSES)
    for bet, pct in zip(bets, shares, strict=True):
        amount = bet.replace("€/P", "").strip().removesuffix(",00")
        written = "€ " + amount if "," in amount else f"€ {amount}"
        assert f"| {written} pro Linie | {pct.replace('%', ' %')} |" in german, bet


@needs_seed
def test_the_bet_classes_lines_and_return_are_in_the_german_text(german: str) -> None:
    lines = _seed_text().splitlines()
    start = lines.index("Einsatzklassen pro Gewinnlinie:")
    classes = []
    for line in lines[start + 1:]:
        if not line.startswith("- "):
            break
        classes.append(line[2:].strip())
    listed = re.search(r"Einsatzklassen pro Gewinnlinie: ([^\n]+)\.", german)
    assert listed is not None
    assert listed.group(1).split("; ") == classes
    count = lines[lines.index("Anzahl fixe Gewinnlinien:") + 1][2:].strip()
    assert f"Anzahl fixe Gewinnlinien: {count}." in german
    rtp = lines[lines.index("Durchschnittliche Ausschüttung:") + 1].strip()
    assert f"Durchschnittliche Ausschüttung: {rtp}" in german


@pytest.fixture(scope="module", params=shipped_models())
def shipped(request: pytest.FixtureRequest) -> tuple[MathModel, Figures, dict[str, str]]:
    model = load_model(request.param)
    figs = figures(model)
    texts = {lang: c.markdown for lang, c in render(model, figs).items()}
    return model, figs, texts


def test_each_models_conditions_state_its_own_return_at_every_class(
        shipped: tuple[MathModel, Figures, dict[str, str]]) -> None:
    model, figs, texts = shipped
    for lang, text in texts.items():
        assert model.sha256 in text
        total = float(figs.exact.total)
        assert f"{number(total * 100, lang, 1)} %" in text
        assert percent(total, lang) in text
        assert tuple(figs.by_line_bet) == model.line_bets  # every class offered, no other
        for line_bet, row in figs.by_line_bet.items():
            assert (f"| {euros(line_bet, lang)} | {euros(line_bet * 20, lang)} | "
                    f"{percent(row.total, lang)} |") in text, (lang, line_bet)
        if model.has_progressive:  # the de model has none (ADR 0072: tests/math/test_de_model)
            assert percent(model.contribution_rate, lang) in text
            assert euros(model.seed_cents, lang) in text


def test_each_models_conditions_state_its_upgrade_unit_and_maximum_win(
        shipped: tuple[MathModel, Figures, dict[str, str]]) -> None:
    model, figs, texts = shipped
    de, en = texts["de"], texts["en"]
    if model.hold_and_cash.upgrade_unit == UPGRADE_LINE_BET:
        assert "um die Einsatzhöhe, das heißt um 1 x Einsatz" in de
        assert "by 1 x the bet class per line (not the total bet)" in en
    else:
        assert "um den Gesamteinsatz, das heißt um 1 x Gesamteinsatz" in de
        assert "by 1 x total bet" in en
    if model.max_win_x is None:
        assert "es gibt keinen Höchstgewinn" in de
        assert "there is no maximum win" in en
    else:
        cap = number(model.max_win_x, "de")
        assert f"auf das {cap}-fache des Gesamteinsatzes begrenzt" in de
        assert "ein Gewinn aus dem €€€-Jackpot eingeschlossen" in de
        assert "verbleibt im Jackpot" in de
        assert f"limited to {number(model.max_win_x, 'en')} x the total bet" in en
    largest = figs.max_win_x
    for lang, text in texts.items():
        for key, value in (("base", largest.base), ("star_wild", largest.star_wild)):
            shown = f"{float(value):,.6g}".replace(",", "\0").replace(
                ".", "," if lang == "de" else ".").replace("\0", "." if lang == "de" else ",")
            assert f"{shown} x " in text, (lang, key)


READINGS_DE = (
    "in Leserichtung (Walze 1 bis 5, auf jeder Walze von oben nach unten)",
    "Star Wild wird von genau 4 Star Coins ausgelöst",
    "auf eigenen Walzen, die keine Star Coins enthalten",
    "Die Gewinne des auslösenden Spins werden zuerst ausbezahlt",
    "der vierte Star Coin wird ein Wild Symbol",
    "Gesamtgewinn über null",
    "ab 18 Jahren",
)
READINGS_EN = (
    "in reading order (reel 1 to 5, on each reel from top to bottom)",
    "Star Wild is triggered by exactly 4 Star Coins",
    "on reels of its own that hold no Star Coin",
    "The triggering spin's wins are paid first",
    "the fourth Star Coin becomes a Wild",
    "total win above zero",
    "aged 18 or over",
)
PRIZES = {  # the booster order, under each way of naming the fixed prizes (ADR 0072)
    "jackpot": (("zuerst werden die neu erschienenen Direktgewinnsymbole",
                 "Booster wirken nicht auf „Minor“ und „Major“ Jackpot Symbole"),
                ("first the new cash symbols, MINOR and MAJOR jackpot symbols are held",
                 "Boosters never act on MINOR or MAJOR jackpot symbols")),
    "multiplier": (("zuerst werden die neu erschienenen Direktgewinn- und Festgewinnsymbole",
                    "Booster wirken nicht auf Festgewinnsymbole"),
                   ("first the new cash and fixed prize symbols are held",
                    "Boosters never act on fixed prize symbols")),
}
PROGRESSIVE_DE = (
    "Ein Spin gewinnt den €€€-Jackpot höchstens einmal",
    "Der Gewinn wird auf ganze Cent abgerundet; der Rest bleibt im Jackpot",
    "füllt ihn der Betreiber aus eigenen Mitteln wieder auf den Startwert auf",
    "Jackpot Symbole erscheinen nur auf den Walzen 1 bis 3",
)
PROGRESSIVE_EN = (
    "A spin wins the €€€ jackpot at most once",
    "The win is rounded down to the cent; the rest stays in the jackpot",
    "the operator refills it to the seed from its own funds",
    "Jackpot symbols appear only on reels 1 to 3",
)


def test_both_languages_state_every_reading_rules_md_fixes(
        shipped: tuple[MathModel, Figures, dict[str, str]]) -> None:
    model, _, texts = shipped
    de, en = PRIZES[model.hold_and_cash.prize_names]
    if model.has_progressive:
        de, en = (*de, *PROGRESSIVE_DE), (*en, *PROGRESSIVE_EN)
    else:
        de, en = (*de, "Dieses Spiel hat keinen progressiven Gewinn"), (
            *en, "This game has no progressive prize")
    for phrase in (*READINGS_DE, *de):
        assert phrase in texts["de"], phrase
    for phrase in (*READINGS_EN, *en):
        assert phrase in texts["en"], phrase
    respin_jackpot = any(symbols.JACKPOT in s for s in model.star_wild_reels)
    assert ("im Bonus Spin kann der €€€-Jackpot nicht gewonnen werden" in texts["de"]) \
        is (model.has_progressive and not respin_jackpot)
    weights = model.hold_and_cash.cell_weights
    for kind, weight in zip(symbols.CELL_KINDS, weights, strict=True):
        if weight:
            shown = percent(Fraction(weight, sum(weights)), "de", 4)
            assert shown in texts["de"], kind


def test_the_html_pages_carry_their_language(german: str) -> None:
    model, figs = _line_bet_default()
    pages = render(model, figs)
    assert "<html lang='de'>" in pages["de"].html
    assert "<html lang='en'>" in pages["en"].html
    assert "Ergänzungsspielbedingungen" in pages["de"].html


def test_a_model_that_cannot_be_offered_has_no_conditions() -> None:
    model = load_model("default")
    strips = list(model.base_reels)
    strips[0] = tuple(s for s in strips[0] if s != symbols.COIN)
    broken = dataclasses.replace(model, base_reels=tuple(strips))
    with pytest.raises(ConditionsError, match=r"no game conditions for .* base reel 0 holds no"):
        render(broken, figures(model))


def test_a_model_with_an_unknown_upgrade_unit_has_no_conditions() -> None:
    model = load_model("default")
    broken = dataclasses.replace(model, hold_and_cash=dataclasses.replace(
        model.hold_and_cash, upgrade_unit="half_bet"))
    with pytest.raises(ConditionsError, match="UPGRADE unit 'half_bet'") as error:
        render(broken, figures(model))
    assert "\n" not in str(error.value)


def test_a_return_that_differs_by_class_is_stated_as_its_range() -> None:
    """The text follows the figures: were one class's return another (no shipped model's is),
    the conditions would give the range instead of claiming one return at every class."""
    model = load_model("default")
    figs = figures(model)
    top = max(figs.by_line_bet)
    changed = dataclasses.replace(figs, by_line_bet={
        **figs.by_line_bet, top: dataclasses.replace(figs.by_line_bet[top], total=0.95)})
    texts = render(model, changed)
    low = min(row.total for row in changed.by_line_bet.values())
    high = max(row.total for row in changed.by_line_bet.values())
    assert f"zwischen {percent(low, 'de')} und {percent(high, 'de')}" in texts["de"].markdown
    assert f"between {percent(low, 'en')} and {percent(high, 'en')}" in texts["en"].markdown
    same = render(model, figs)
    assert "Sie ist in jeder Einsatzklasse dieselbe." in same["de"].markdown
    assert "It is the same at every bet class." in same["en"].markdown
