"""The multi-target tuner (ADR 0016): its fast figures are the exact ones, it reaches every kind
of target with the real exact math, the models it writes have their own identity, and the two
models it made for shipping return 95.50 % at every bet class."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import (
    MathModel,
    ModelError,
    check_offered,
    load_model,
    load_model_version,
    shipped_models,
)
from starfever.engine.symbols import BET_CLASSES
from starfever.math import exact, figures
from starfever.math.tune import TuneError, apply_move, parse_target, strip_moves
from starfever.math.tune_eval import Evaluator
from tests.conftest import run_cli, run_cli_here

NEW_MODELS = ("low-volatility", "high-volatility")


# -- targets --------------------------------------------------------------------------------

def test_targets_read_points_ranges_percentages_and_one_in_n() -> None:
    rtp = parse_target("rtp", "95.5%")
    assert math.isclose(rtp.low, 0.9549) and math.isclose(rtp.high, 0.9551)
    hit = parse_target("hit_frequency", "36")  # a probability above 1: a percentage
    assert math.isclose(hit.low, 0.358) and math.isclose(hit.high, 0.362)
    sd = parse_target("std_dev", "6.5:7.5")
    assert (sd.low, sd.high) == (6.5, 7.5)
    mega = parse_target("mega_frequency", "1/40,000")
    assert math.isclose((mega.low + mega.high) / 2, 1 / 40_000)
    assert math.isclose(mega.high - mega.low, 0.1 / 40_000)


@pytest.mark.parametrize(("option", "text"), [
    ("rtp", "abc"), ("rtp", "0.5"), ("rtp", "250%"), ("std_dev", "9:7"),
    ("hit_frequency", "0.5:150"), ("mega_frequency", "1/0"), ("std_dev", "-3"), ("rtp", "nan")])
def test_malformed_and_out_of_range_targets_are_refused(option: str, text: str) -> None:
    with pytest.raises(TuneError):
        parse_target(option, text)


@pytest.mark.parametrize("args", [
    ["--rtp", "abc"], ["--rtp", "50%"], ["--std-dev", "9:7"],
    ["--hit-frequency", "0.001", "--hold-and-cash-frequency", "0.01"],  # below P(H&C)
    ["--hold-and-cash-frequency", "1/200", "--mega-frequency", "1/100"],  # Mega above H&C
    ["--rtp", "95.5%", "--name", "default"],  # the source's name
    ["--rtp", "95.5%", "--levers", "reels"],
    ["--rtp", "95.5%", "--model", "capped"],  # the fast figures leave a cap out
    [],  # no target at all
])
def test_bad_targets_end_in_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "x.json"
    result = run_cli_here(["tune", "--out", str(out), *args])
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("starfever tune: error: ")
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_strip_moves_keep_jackpot_stops_and_only_use_base_symbols() -> None:
    model = load_model("default")
    moves = list(strip_moves(model.base_reels))
    assert moves and all(model.base_reels[r][s] != "JACKPOT" for r, s, _ in moves)
    assert {symbol for _, _, symbol in moves} <= {
        "LEMON", "CHERRY", "MELON", "BAR", "GOLD", "BELL", "SEVEN", "DIAMOND", "WILD", "COIN"}


def test_strip_moves_never_take_a_reels_last_coin() -> None:
    """The conditions let Star Coins appear on every reel: reel 4 of the default holds one COIN,
    and no move takes it; reel 3 holds four, which moves may take."""
    model = load_model("default")
    assert [strip.count("COIN") for strip in model.base_reels][3:] == [4, 1]
    taken = {r for r, s, new in strip_moves(model.base_reels)
             if model.base_reels[r][s] == "COIN" and new != "COIN"}
    assert 3 in taken and 4 not in taken


def test_every_shipped_model_can_be_offered() -> None:
    """Every base reel holds a COIN (the conditions let Star Coins appear on every reel)."""
    for name in shipped_models():
        model = load_model(name)
        check_offered(model)
        assert all("COIN" in strip for strip in model.base_reels), name


def test_the_first_low_volatility_model_is_kept_only_to_replay_its_rounds() -> None:
    """It had no COIN on reel 0: it cannot be offered, and the archive gives it back,
    unchanged, for the rounds played under it."""
    first = load_model_version("low-volatility", "1.0+01fa0cc592c6")
    assert first is not None and "COIN" not in first.base_reels[0]
    with pytest.raises(ModelError, match="base reel 0 holds no COIN"):
        check_offered(first)
    assert load_model("low-volatility").version != first.version


# -- the fast figures are the exact ones ----------------------------------------------------

@pytest.mark.slow
def test_the_fast_figures_are_the_exact_figures() -> None:
    """The evaluator against ``starfever rtp``'s figures of the default model, and a changed
    stop against the rational calculator (incrementally updated counts included)."""
    model = load_model("default")
    shipped = figures.figures(model)
    ev = Evaluator(model)
    fig = ev.figures(model.base_reels, model.hold_and_cash, exact_sd=True)
    assert math.isclose(fig.total, shipped.total, rel_tol=1e-12)
    assert math.isclose(fig.hit_frequency, shipped.hit_frequency, rel_tol=1e-12)
    assert math.isclose(fig.std_dev, shipped.std_dev, rel_tol=1e-9)
    assert math.isclose(fig.mega_frequency, shipped.mega_frequency, rel_tol=1e-9)
    assert math.isclose(fig.jackpot_frequency, shipped.jackpot_frequency, rel_tol=1e-12)
    # one stop of reel 2 (in the incremental head counts) turned into a COIN
    reel, stop = 1, 5
    strip = list(model.base_reels[reel])
    strip[stop] = "COIN"
    strips = (*model.base_reels[:reel], tuple(strip), *model.base_reels[reel + 1:])
    changed = ev.figures(strips, model.hold_and_cash, parent=(model.base_reels, reel, stop),
                         want_sd=False)
    report = exact.compute(replace(model, base_reels=strips))
    assert math.isclose(changed.total, float(report.total), rel_tol=1e-12)
    assert math.isclose(changed.hit_frequency, float(report.hit_frequency), rel_tol=1e-12)
    assert math.isclose(changed.star_wild_frequency, float(report.star_wild_frequency),
                        rel_tol=1e-12)
    assert math.isclose(changed.jackpot_frequency, float(report.jackpot_frequency),
                        rel_tol=1e-12)


# -- every kind of target, reached -----------------------------------------------------------

def _reachable() -> tuple[MathModel, dict[str, str]]:
    """A small problem with a known answer: the figures of the default model with one COIN of
    reel 3 turned WILD (one strip step away), each as a target of its kind; the total RTP as a
    point the fit must hit."""
    source = load_model("default")
    answer = replace(source, base_reels=apply_move(source.base_reels, 2, 10, "WILD"))
    report = exact.compute(answer)
    sd = Evaluator(answer).figures(answer.base_reels, answer.hold_and_cash,
                                   exact_sd=True).std_dev
    return answer, {
        "--rtp": f"{float(report.total):.8f}",
        "--hit-frequency": f"{float(report.hit_frequency):.8f}",
        "--star-wild-frequency": f"{float(report.star_wild_frequency):.10f}",
        "--hold-and-cash-frequency": f"{float(report.hold_and_cash_frequency):.10f}",
        "--base-share": f"{float(report.lines / report.game):.8f}",
        "--std-dev": f"{sd - 0.3:.4f}:{sd + 0.3:.4f}",
        "--mega-frequency": f"{float(report.mega_frequency):.12f}",
    }


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    _, targets = _reachable()
    out = tmp_path_factory.mktemp("tune") / "all-targets.json"
    args = ["tune", "--model", "default", "--name", "all-targets", "--out", str(out), "--json",
            "--max-steps", "20", "--levers", "strips"]
    for option, value in targets.items():
        args += [option, value]
    result = run_cli(args, timeout=1800)
    assert result.returncode == 0, result.stderr[-2000:]
    return out, json.loads(result.stdout)


@pytest.mark.slow
def test_the_tuner_meets_every_kind_of_target_exactly(
        tuned: tuple[Path, dict[str, Any]]) -> None:
    """Seven targets at once, a strip step from the default model (strips only); the
    written model's figures recomputed from nothing (rational calculator, full figures) meet
    them all, and every bet class returns the total."""
    out, data = tuned
    assert data["met"] and len(data["targets"]) == 7
    model = load_model(str(out))
    report = exact.compute(model)
    fig = figures.compute_figures(model)
    got = {
        "total": float(report.total),
        "hit_frequency": float(report.hit_frequency),
        "star_wild_frequency": float(report.star_wild_frequency),
        "hold_and_cash_frequency": float(report.hold_and_cash_frequency),
        "base_share": float(report.lines / report.game),
        "std_dev": fig.std_dev,
        "mega_frequency": float(report.mega_frequency),
    }
    for row in data["targets"]:
        assert row["low"] <= got[row["key"]] <= row["high"], row
        assert math.isclose(row["achieved"], got[row["key"]], rel_tol=1e-9), row
    goal = next(r["low"] + r["high"] for r in data["targets"] if r["key"] == "total") / 2
    assert abs(float(report.total) - goal) < 1e-4
    for bet in BET_CLASSES:
        assert abs(fig.by_line_bet[bet].total - goal) < 2e-4


@pytest.mark.slow
def test_a_tuned_model_has_its_own_identity(tuned: tuple[Path, dict[str, Any]]) -> None:
    out, data = tuned
    source = load_model("default")
    model = load_model(str(out))
    assert model.name == "all-targets" != source.name
    assert model.version != source.version and model.version.startswith("1.0+")
    assert model.sha256 == data["model_sha256"] != source.sha256
    assert data["source_sha256"] == source.sha256 and source.sha256[:12] in model.description
    assert model.base_reels != source.base_reels or model.hold_and_cash != source.hold_and_cash
    assert [len(s) for s in model.base_reels] == [len(s) for s in source.base_reels]
    assert model.star_wild_reels == source.star_wild_reels
    assert model.to_dict() == load_model(str(out)).to_dict()  # loads back as written


# -- the shipped tuned models --------------------------------------------------------------

@pytest.mark.parametrize("name", NEW_MODELS)
def test_the_tuned_models_return_95_50_at_every_class(name: str) -> None:
    """From the figures shipped with the model (the test below recomputes them)."""
    assert name in shipped_models()
    model = load_model(name)
    data = figures.cached(model)
    assert data is not None, f"no figures shipped for {name}"
    assert data.model_sha256 == model.sha256
    for bet in BET_CLASSES:
        assert abs(data.by_line_bet[bet].total - 0.955) <= 0.0002, bet
    assert "starfever tune" in model.description


def test_the_tuned_models_differ_in_volatility() -> None:
    low, default, high = (figures.cached(load_model(n)) for n in
                          ("low-volatility", "default", "high-volatility"))
    assert low is not None and default is not None and high is not None
    assert low.std_dev < default.std_dev - 2 < high.std_dev - 4
    assert low.hit_frequency > default.hit_frequency > high.hit_frequency


@pytest.mark.slow
@pytest.mark.parametrize("name", NEW_MODELS)
def test_the_tuned_models_total_is_exact(name: str) -> None:
    model = load_model(name)
    report = exact.compute(model)
    assert abs(report.total - Fraction(955, 1000)) < Fraction(2, 10_000)
    shipped = json.loads(figures.shipped_path(model).read_text(encoding="utf-8"))
    assert math.isclose(shipped["total"], float(report.total), rel_tol=1e-12)
    assert math.isclose(shipped["hit_frequency"], float(report.hit_frequency), rel_tol=1e-12)
