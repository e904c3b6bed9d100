"""The figures as typed objects: format 5's JSON is read and written in one place, and a
file read and written again is the same bytes (the cache, the shipped figures and the
certification bundle's ``figures/exact.json`` do not change)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path

import pytest

from starfever.engine.model import load_model
from starfever.engine.symbols import BET_CLASSES
from starfever.math import figures
from starfever.math.figures_format import Figures

SHIPPED = sorted(Path(figures.__file__).resolve().parent.parent.joinpath(
    "models", "figures").glob(f"rtp-*-f{figures.FORMAT}.json"))


def test_every_shipped_figures_file_is_read_and_written_back_byte_for_byte() -> None:
    assert len(SHIPPED) >= 7  # the seven shipped models, and the versions kept for old rounds
    for path in SHIPPED:
        text = path.read_text(encoding="utf-8")
        typed = Figures.from_json(json.loads(text))
        assert json.dumps(typed.to_json(), indent=1) + "\n" == text, path.name
        # and the cache's compact form, which ``_store`` writes
        assert json.dumps(typed.to_json()) == json.dumps(json.loads(text)), path.name


def test_the_typed_figures_say_what_the_file_says() -> None:
    model = load_model("capped")
    typed = figures.cached(model)
    assert typed is not None
    raw = json.loads(figures.shipped_path(model).read_text(encoding="utf-8"))
    assert typed.model_sha256 == model.sha256 and typed.format == figures.FORMAT
    assert typed.exact.total == Fraction(raw["exact"]["total"])
    assert typed.exact.game == typed.exact.total - Fraction(raw["exact"]["progressive"])
    assert typed.max_win_x.hold_and_cash == model.max_win_x == typed.max_win_cap_x
    assert tuple(typed.by_line_bet) == tuple(BET_CLASSES)  # keyed by line bet, in cents
    assert typed.by_line_bet[BET_CLASSES[-1]].total == raw["by_line_bet"][
        str(BET_CLASSES[-1])]["total"]
    assert typed.win_bands[-1].to_x is None and typed.win_bands[0].to_x == 0
    assert [t.k for t in typed.hold_and_cash_tails] == [
        t["k"] for t in raw["hold_and_cash_tails"]]
    assert set(typed.jackpot_long_run) == set(raw["jackpot_long_run"])


def test_the_figures_are_frozen() -> None:
    typed = figures.cached(load_model("default"))
    assert typed is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        typed.total = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        typed.exact.total = Fraction(1)  # type: ignore[misc]


@pytest.mark.parametrize("drop", ["exact", "win_bands", "jackpot_long_run", "std_dev_game"])
def test_a_file_of_another_shape_is_refused_not_half_read(drop: str) -> None:
    raw = json.loads(figures.shipped_path(load_model("default")).read_text(encoding="utf-8"))
    del raw[drop]
    with pytest.raises(KeyError):
        Figures.from_json(raw)


def test_the_shipped_figures_are_written_back_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``starfever rtp --write-shipped`` over figures read from the shipped file writes the
    same bytes (what a maintainer's rewrite of unchanged figures does)."""
    model = load_model("default")
    source = figures.shipped_path(model)
    typed = figures.cached(model)
    assert typed is not None
    target = tmp_path / source.name
    monkeypatch.setattr(figures, "shipped_path", lambda _model: target)
    assert figures.write_shipped(model, typed) == target
    assert target.read_bytes() == source.read_bytes()
