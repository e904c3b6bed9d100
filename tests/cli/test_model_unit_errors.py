"""A model whose UPGRADE unit is missing or unknown, or whose cap scope is unknown, is refused
by the commands that read models in one line on stderr, exit 2, nothing written (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import load_model
from tests.harness import run_cli


def _without_unit(data: dict[str, Any]) -> None:
    del data["hold_and_cash"]["upgrade_unit"]


def _unknown_unit(data: dict[str, Any]) -> None:
    data["hold_and_cash"]["upgrade_unit"] = "half_bet"


def _unknown_scope(data: dict[str, Any]) -> None:
    data["max_win_x"], data["max_win_scope"] = 1800, "jackpot"


@pytest.mark.parametrize(("spoil", "needle"), [
    (_without_unit, "hold_and_cash.upgrade_unit is missing"),
    (_unknown_unit, "hold_and_cash.upgrade_unit must be one of line_bet, total_bet, got "
                    "'half_bet'"),
    (_unknown_scope, "max_win_scope must be one of round, game"),
], ids=["missing-unit", "unknown-unit", "unknown-scope"])
@pytest.mark.parametrize("command", [["rtp"], ["simulate", "--spins", "1000"]],
                         ids=["rtp", "simulate"])
def test_a_model_with_a_bad_unit_is_one_line_and_exit_2(tmp_path: Path, spoil: Any,
                                                        needle: str, command: list[str]) -> None:
    data = load_model("default").to_dict()
    spoil(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    out = run_cli(*command, "--model", str(bad), cwd=work)
    assert out.returncode == 2, out.stdout + out.stderr
    assert needle in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stdout == ""
    assert list(work.iterdir()) == []  # nothing written
