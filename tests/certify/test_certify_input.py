"""``starfever certify`` refuses, in one line and before any work, a model it cannot certify
(one the server would not offer, or one no draw can play) and an ``--out`` whose parent folder
does not exist; nothing is created."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from starfever.engine.model import load_model
from tests.conftest import run_cli_here


def _all_wild(data: dict[str, Any]) -> None:
    data["reels"]["base"] = [["WILD"] * 10 for _ in range(5)]


def _huge_blank(data: dict[str, Any]) -> None:
    data["hold_and_cash"]["cell_weights"]["BLANK"] = 10**40


@pytest.mark.parametrize(("change", "says"), [
    (_all_wild, "cannot be offered: base reel 0 holds no COIN"),
    (_huge_blank, "weights sum to more than 2**32"),
])
def test_a_model_that_cannot_be_certified_is_refused_before_simulating(
        tmp_path: Path, change: Callable[[dict[str, Any]], None], says: str) -> None:
    data = load_model("default").to_dict()
    data["name"] = "hand-made"
    change(data)
    model = tmp_path / "hand-made.json"
    model.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "bundle"
    done = run_cli_here(["certify", "--out", str(out), "--model", str(model), "--spins", "1e6",
                         "--no-dieharder"])
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("starfever certify: error: ")
    assert done.stderr.count("\n") == 1 and says in done.stderr
    assert "certify: simulation" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hand-made.json"]


def test_a_missing_parent_folder_is_refused_and_not_created(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "bundle"
    done = run_cli_here(["certify", "--out", str(out), "--spins", "1e6", "--seed", "1e3"])
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "the parent folder must exist" in done.stderr
    assert list(tmp_path.iterdir()) == []
