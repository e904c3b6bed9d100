"""The figures of ``starfever rtp``: cached per model hash, and the shipped ones are what a
fresh computation gives."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import load_model, model_from_dict
from starfever.math import figures, holdcash_law
from starfever.math.figures_format import Figures
from starfever.math.holdcash_law import PayoutLaw


def _count_computations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    shipped = figures.cached(load_model("default"))
    assert shipped is not None

    def fake(model: Any) -> Figures:
        calls.append(model.sha256)
        return replace(shipped, model=model.name, model_sha256=model.sha256, total=0.5)

    monkeypatch.setattr(figures, "compute_figures", fake)
    return calls


def test_a_model_seen_before_is_answered_from_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path))
    calls = _count_computations(monkeypatch)
    data = load_model("default").to_dict()
    data["name"] = "cache-test"
    model = model_from_dict(data)
    assert figures.look_up(model).cache == "miss"
    found = figures.look_up(model)
    assert found.cache == "hit" and found.figures.total == 0.5
    assert found.figures.model_sha256 == model.sha256
    assert len(calls) == 1
    data["hold_and_cash"]["cell_weights"]["BLANK"] += 1  # another model: another hash
    other = model_from_dict(data)
    assert other.sha256 != model.sha256
    assert figures.look_up(other).cache == "miss"
    figures.cache_path(model).write_text("{not json")  # a damaged file is recomputed
    assert figures.look_up(model).cache == "miss"
    # a file of this model and format but another shape is recomputed too
    figures.cache_path(model).write_text(json.dumps(
        {"model_sha256": model.sha256, "format": figures.FORMAT, "total": 0.5}))
    assert figures.look_up(model).cache == "miss"
    assert figures.look_up(model, use_cache=False).cache == "off"
    assert len(calls) == 5


def test_the_hash_follows_the_content_not_the_layout() -> None:
    model = load_model("default")
    text = json.dumps(model.to_dict(), indent=4)
    assert model_from_dict(json.loads(text)).sha256 == model.sha256
    assert len({load_model(n).sha256 for n in ("default", "rtp94", "rtp96", "capped")}) == 4


def _close(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15), (where, a, b)
    else:
        assert a == b, where


LawsKey = tuple[Any, int, tuple[int, ...] | None, bool]


@pytest.fixture(scope="module")
def solved_laws() -> Iterator[dict[LawsKey, dict[int, PayoutLaw]]]:
    """The payout laws solved in this module, by the DP's inputs (freed at its end)."""
    solved: dict[LawsKey, dict[int, PayoutLaw]] = {}
    yield solved
    solved.clear()


@pytest.fixture
def payout_laws_once(solved_laws: dict[LawsKey, dict[int, PayoutLaw]],
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``holdcash_law.payout_laws`` solved once per input in the module: ``default`` and
    ``capped`` have the same Hold & Cash weights, coin counts and DP cap (the cap of 1,800
    is below the DP's 12,000), so ``capped``'s fresh figures take the laws that ``default``'s
    fresh computation solved with the same code (14 CPU s, ADR 0045). The laws are read-only:
    a computation that wrote into one would fail rather than pass on another's result."""
    real = holdcash_law.payout_laws

    def once(weights: Any, *, cap: int = holdcash_law.DEFAULT_CAP,
             coins: tuple[int, ...] | None = None, direct: bool = False,
             threads: int | None = None) -> dict[int, PayoutLaw]:
        key = (weights, cap, coins, direct)
        if key not in solved_laws:
            given = {} if coins is None else {"coins": coins}
            laws = real(weights, cap=cap, direct=direct, threads=threads, **given)
            for law in laws.values():
                law.probabilities.setflags(write=False)
            solved_laws[key] = laws
        return dict(solved_laws[key])

    monkeypatch.setattr(holdcash_law, "payout_laws", once)


@pytest.mark.slow
@pytest.mark.usefixtures("payout_laws_once")
@pytest.mark.parametrize("name", ["default", "capped", "low-volatility", "high-volatility",
                                  "default-total-bet", "de"])
def test_the_shipped_figures_are_a_fresh_computation(name: str) -> None:
    """Minutes: every base and respin stop combination and the Hold & Cash DP, recomputed."""
    model = load_model(name)
    shipped = json.loads(figures.shipped_path(model).read_text(encoding="utf-8"))
    fresh = json.loads(json.dumps(figures.compute_figures(model).to_json()))
    if not shipped["total_exact_rational"]:
        # a cap's cut comes from the payout DP in floats, whose last bits follow the CPU's
        # vector width (AVX2 or AVX-512 summation order): the rational written from it agrees
        # to the DP's stated relative error, not digit for digit
        for part in sorted(shipped["exact"]):  # the cut enters the totals and the moments
            got = Fraction(fresh["exact"].pop(part))
            want = Fraction(shipped["exact"].pop(part))
            assert abs(got - want) <= Fraction(1, 10**12) * abs(want), (name, part)
    _close(fresh, shipped, name)


@pytest.mark.parametrize("name", ["default", "low-volatility", "high-volatility", "capped",
                                  "rtp94", "rtp96", "default-total-bet"])
def test_the_hold_and_cash_split_names_the_jackpots_and_adds_up(name: str) -> None:
    """``starfever rtp`` states the Minor, Major and Mega jackpots' return apart from the cash
    values; without a cap the parts add up to the feature's return."""
    model = load_model(name)
    data = figures.cached(model)
    assert data is not None
    split = data.hold_and_cash_split
    parts = (split.cash, split.minor, split.major, split.mega)
    assert min(parts) > 0
    assert data.hold_and_cash_split_before_cap == (model.max_win_x is not None)
    whole = data.components.hold_and_cash
    if model.max_win_x is None:
        assert math.isclose(sum(parts), whole, rel_tol=1e-12)
    else:  # the cap cuts only the largest features
        assert whole <= sum(parts) < whole * 1.01


@pytest.mark.parametrize("name", ["default", "low-volatility", "high-volatility", "capped",
                                  "rtp94", "rtp96", "default-total-bet"])
def test_every_shipped_model_has_figures_that_name_its_rules(name: str) -> None:
    """Each shipped model ships its figures (format, hash), states its UPGRADE unit, both Star
    Wild "pays nothing" figures (the respin alone pays nothing at least as often as the whole
    round), and whether its total is a pure rational (not with a cap)."""
    model = load_model(name)
    data = figures.cached(model)
    assert data is not None, name
    assert data.upgrade_unit == model.hold_and_cash.upgrade_unit
    assert data.total_exact_rational == (model.max_win_x is None)
    assert 0 < data.star_wild_round_pays_nothing <= data.star_wild_respin_pays_nothing < 1
    assert "star_wild_pays_nothing" not in data.to_json()
    assert data.jackpot_long_run["all_eur_1"].method == "closed form"
    assert data.jackpot_long_run["uniform"].method == "grid"
