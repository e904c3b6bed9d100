"""An optional max-win cap (``max_win_x``): the exact RTP with the cap against a simulation of
the capped game, and the model file's checks."""

from __future__ import annotations

from typing import Any

import pytest

from starfever.engine.model import ModelError, load_model, model_from_dict
from starfever.math import exact
from starfever.sim.runner import simulate


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
    report = exact.compute(capped, with_std_dev=False)
    free = exact.compute(_wild_model(None), with_std_dev=False)
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
