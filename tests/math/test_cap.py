"""An optional max-win cap (``max_win_x``): the exact RTP with the cap against a simulation of
the capped game, and the model file's checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import ModelError, load_model, model_from_dict
from starfever.engine.rng import SeededSource
from starfever.engine.round import play_round
from starfever.math import exact
from starfever.sim.runner import simulate
from tests.conftest import run_cli_here
from tests.sim.models import hand_made


def _wild_model(cap: int | None) -> Any:
    data: dict[str, Any] = load_model("default").to_dict()
    data["name"] = "wild-hold"
    data["reels"]["base"] = [["COIN", "COIN", "COIN", "LEMON", "WILD", "BELL"]] * 5
    data["hold_and_cash"]["cell_weights"] = {
        "BLANK": 12, "CASH": 6, "MINOR": 1, "MAJOR": 2, "UPGRADE": 1, "MULTIPLIER": 6}
    if cap is not None:
        data["max_win_x"] = cap
    return model_from_dict(data)


@pytest.mark.slow
def test_the_capped_rtp_is_what_the_capped_game_returns() -> None:
    """A Hold & Cash that often passes 1,800 x: the cap takes most of its return, and the
    simulated capped game (kernel, which ends the feature like the engine) agrees with the
    exact capped figure."""
    capped = _wild_model(1800)
    report = exact.compute(capped)
    free = exact.compute(_wild_model(None))
    assert report.total < free.total / 2  # the cap bites hard here
    run = simulate(capped, 300_000, 11, workers=1)
    assert run.rtp.contains(float(report.total)), (run.rtp, float(report.total))
    assert run.max_win <= 1800


def test_the_shipped_capped_variant() -> None:
    model = load_model("capped")
    assert model.max_win_x == 1800
    default = load_model("default")
    assert (model.base_reels, model.hold_and_cash) == (default.base_reels, default.hold_and_cash)


@pytest.mark.parametrize("cap", [0, 100, 1799, 2.5, "1800"])
def test_a_cap_a_round_could_reach_outside_hold_and_cash_is_refused(cap: object) -> None:
    data = load_model("default").to_dict()
    data["max_win_x"] = cap
    with pytest.raises(ModelError, match="max_win_x"):
        model_from_dict(data)


def _star_wild_past_the_cap() -> Any:
    """Every paid spin a Star Wild with 3 coins on reel 3 (Multiplier Wilds) and 3 DIAMONDs on
    reels 0-2 (20 lines x 25 = 25 x total bet), every respin 20 lines x 600 x 3 = 1,800 x: each
    round 1,825 x, past a cap of 1,800."""
    diamond = "DIAMOND"
    return hand_made([[diamond] * 3] * 3 + [["COIN"] * 3, ["COIN", diamond, diamond]],
                     [[diamond] * 3] * 5, max_win_x=1800)


def test_a_star_wild_round_past_the_cap_stops_at_it_in_the_engine_and_the_kernel() -> None:
    """The cap is on the round's game win, whichever part reaches it: the engine cuts the
    respin's win (it used to book a negative Hold & Cash win), the kernel the same."""
    model = _star_wild_past_the_cap()
    played = play_round(model, 5, SeededSource(1))
    assert played.feature == "star_wild" and played.hold_and_cash_win == 0
    assert played.base_win == 25 * 100 and played.star_wild_win == (1800 - 25) * 100
    assert any(e["type"] == "max_win" for e in played.events)
    run = simulate(model, 1_000, 1, workers=1)
    assert run.max_win == 1800  # 1,825 before
    assert run.rtp.value == pytest.approx(1800 + 0.01)  # and the €€€ contribution


def test_the_exact_figures_refuse_a_cap_a_star_wild_round_can_pass(tmp_path: Path) -> None:
    """The exact mathematics cuts only Hold & Cash at the cap: for a model whose Star Wild round
    can pass it, ``starfever rtp`` says so in one line (exit 2) instead of stating figures of the
    uncapped round."""
    from starfever.math.figures import compute_figures

    model = _star_wild_past_the_cap()
    with pytest.raises(ModelError, match="Star Wild round"):
        compute_figures(model)
    path = tmp_path / "past.json"
    path.write_text(json.dumps(model.to_dict()), encoding="utf-8")
    done = run_cli_here(["rtp", "--model", str(path), "--no-cache"])
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "1,825" in done.stderr


def test_the_same_model_uncapped_is_stated_without_a_feature_it_lacks(tmp_path: Path) -> None:
    """Without the cap its figures are stated; it has neither Hold & Cash nor €€€ lines, which
    ``starfever rtp`` says as "never" (it was a division by zero, exit 70)."""
    data = _star_wild_past_the_cap().to_dict()
    data.pop("max_win_x", None)
    path = tmp_path / "free.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = run_cli_here(["rtp", "--model", str(path), "--no-cache"])
    assert done.returncode == 0, done.stderr
    assert "Hold & Cash never" in done.stdout and "EUR jackpot line never" in done.stdout
    assert "Star Wild round 1,825 x" in done.stdout or "Star Wild round 1825 x" in done.stdout


def test_rtp_says_the_capped_total_passes_a_float_step_and_the_uncapped_does_not(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The cap's cut of the Hold & Cash law is a float step (figures ``total_exact_rational``):
    ``starfever rtp`` labels that total for what it is, and the uncapped total as exact."""
    from starfever.commands import print_rtp
    from starfever.math.figures import figures

    print_rtp(figures(load_model("capped")), cache="hit", seconds=0.0)
    assert "computed exactly but for the max-win cap's cut" in capsys.readouterr().out
    print_rtp(figures(load_model("default")), cache="hit", seconds=0.0)
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("computed exactly)")
