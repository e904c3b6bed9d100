"""Small hand-made models for the simulator's tests: the default model with other strips."""
from __future__ import annotations

from typing import Any

from starfever.engine.model import MathModel, load_model, model_from_dict


def hand_made(base: list[list[str]], star_wild: list[list[str]] | None = None,
              max_win_x: int | None = None, upgrade_unit: str | None = None,
              **hold: dict[str, int]) -> MathModel:
    """The default model with ``base`` (and ``star_wild``) strips, Hold & Cash weights
    updated by ``hold`` and, if given, another win cap and UPGRADE unit. Not a game to offer:
    its strips may leave a reel without Star Coins to isolate one mechanism (``check_offered``
    refuses it)."""
    data: dict[str, Any] = load_model("default").to_dict()
    data["name"] = "hand-made"
    data["reels"]["base"] = base
    if star_wild is not None:
        data["reels"]["star_wild"] = star_wild
    data["hold_and_cash"].update(hold)
    if upgrade_unit is not None:
        data["hold_and_cash"]["upgrade_unit"] = upgrade_unit
    if max_win_x is not None:
        data["max_win_x"] = max_win_x
    return model_from_dict(data)


def with_upgrade_unit(model: MathModel, unit: str) -> MathModel:
    """``model`` with another UPGRADE unit (``line_bet`` or ``total_bet``)."""
    data: dict[str, Any] = model.to_dict()
    data["hold_and_cash"]["upgrade_unit"] = unit
    return model_from_dict(data)
