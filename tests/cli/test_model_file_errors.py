"""Every command that reads a model refuses a model file whose UPGRADE unit is missing or
unknown, whose cap scope is unknown, or whose cap lies below the largest line win of a paid
spin: one line on stderr, exit 2, nothing on stdout, nothing written (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import load_model
from starfever.engine.symbols import LINE_COUNT, PAYTABLE
from tests.harness import run_cli

LARGEST_LINE_WIN_X = LINE_COUNT * max(max(pays) for pays in PAYTABLE.values()) // LINE_COUNT
"""Largest line win of a paid spin in total bets: 20 lines x 600 line bets (the base reels hold
no MWILD) / 20 = 600."""


def _without_unit(data: dict[str, Any]) -> None:
    del data["hold_and_cash"]["upgrade_unit"]


def _unknown_unit(data: dict[str, Any]) -> None:
    data["hold_and_cash"]["upgrade_unit"] = "half_bet"


def _unknown_scope(data: dict[str, Any]) -> None:
    data["max_win_x"], data["max_win_scope"] = 1800, "jackpot"


def _cap_below_a_line_win(data: dict[str, Any]) -> None:
    data["max_win_x"] = LARGEST_LINE_WIN_X - 1


@pytest.mark.parametrize(("spoil", "needle"), [
    (_without_unit, "hold_and_cash.upgrade_unit is missing"),
    (_unknown_unit, "hold_and_cash.upgrade_unit must be one of line_bet, total_bet, got "
                    "'half_bet'"),
    (_unknown_scope, "max_win_scope must be one of round, game"),
    (_cap_below_a_line_win, "max_win_x must be null or a whole number >= 1800"),
], ids=["missing-unit", "unknown-unit", "unknown-scope", "cap-below-line-win"])
@pytest.mark.parametrize("command", [
    ["rtp"],
    ["simulate", "--spins", "1000"],
    ["tune", "--rtp", "95.5%", "--out", "tuned.json"],
    ["par-sheet", "--out", "sheet", "--spins", "1000000"],
], ids=["rtp", "simulate", "tune", "par-sheet"])
def test_a_bad_model_file_is_one_line_exit_2_and_nothing_written(
        tmp_path: Path, spoil: Any, needle: str, command: list[str]) -> None:
    assert LARGEST_LINE_WIN_X < 1800  # the loader's floor lies above every paid spin's win
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
