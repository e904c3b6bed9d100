"""One reading of counts for every command (``1e4`` where ``simulate`` takes it), model files
refused where they are read (weights beyond the draws' range, a rate given as a string), and
``rtp --exact`` refused where it would be ignored: one line on stderr, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from starfever.engine.model import ModelError, load_model, model_from_dict
from tests.conftest import run_cli

GRID = {"grid": [["LEMON", "LEMON", "LEMON"], ["WILD", "BAR", "GOLD"],
                 ["LEMON", "BELL", "SEVEN"], ["BAR", "BAR", "BAR"], ["GOLD", "GOLD", "GOLD"]]}


def _one_line(done: object, command: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr  # type: ignore[attr-defined]
    err: str = done.stderr  # type: ignore[attr-defined]
    assert err.startswith(f"starfever {command}: error: ") and err.count("\n") == 1, err
    return err


def test_eval_and_rng_stream_read_counts_as_simulate_does() -> None:
    ten = run_cli(["eval", "--line-bet", "1e1"], json.dumps(GRID))
    assert ten.returncode == 0, ten.stderr
    assert json.loads(ten.stdout)["line_total"] == json.loads(
        run_cli(["eval", "--line-bet", "10"], json.dumps(GRID)).stdout)["line_total"]
    assert "--line-bet must be a whole number from 1 to 100" in _one_line(
        run_cli(["eval", "--line-bet", "0.05"], json.dumps(GRID)), "eval")
    assert "line bet 7 is not a bet class" in _one_line(
        run_cli(["eval", "--line-bet", "7"], json.dumps(GRID)), "eval")
    raw = subprocess.run([sys.executable, "-m", "starfever.cli", "rng-stream", "--bytes", "1e1"],
                         capture_output=True, timeout=120, check=False)  # bytes, not text
    assert raw.returncode == 0 and len(raw.stdout) == 10 and raw.stderr == b""
    assert "--bytes must be a whole number from 0" in _one_line(
        run_cli(["rng-stream", "--bytes", "-1"]), "rng-stream")


def test_rtp_exact_without_json_is_refused() -> None:
    """``--exact`` adds the rationals to the JSON; without ``--json`` it would be ignored."""
    done = run_cli(["rtp", "--exact"])
    assert "--exact adds the rationals to the JSON: give it with --json" in _one_line(
        done, "rtp")
    assert done.stdout == ""


def _model_file(tmp_path: Path, change: object, name: str) -> Path:
    data = load_model("default").to_dict()
    data["name"] = name
    change(data)  # type: ignore[operator]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [["rtp"], ["simulate", "--spins", "1000", "--seed", "1"],
                                     ["model"]])
def test_weights_beyond_the_draws_range_are_refused_where_the_model_is_read(
        tmp_path: Path, command: list[str]) -> None:
    """A BLANK weight of 10**40 was played by the server (GET /game then failed), refused by
    the simulator and a crash of ``rtp``: every command now refuses it alike."""
    path = _model_file(tmp_path, lambda d: d["hold_and_cash"]["cell_weights"].update(
        BLANK=10**40), "huge")
    says = _one_line(run_cli([*command, "--model", str(path)]), command[0])
    assert "hold_and_cash.cell_weights weights sum to more than 2**32" in says


def test_every_weight_group_may_reach_the_draws_range_and_no_further() -> None:
    data = load_model("default").to_dict()
    coins = data["hold_and_cash"]["coin_values"]
    coins["1"] += 2**32 - sum(coins.values())
    assert sum(model_from_dict(data).hold_and_cash.coin_values) == 2**32
    coins["1"] += 1
    with pytest.raises(ModelError, match="coin_values weights sum to more than 2"):
        model_from_dict(data)


@pytest.mark.parametrize("rate", ["0.01", True, None, [0.01]])
def test_the_contribution_rate_must_be_a_json_number(tmp_path: Path, rate: object) -> None:
    """``"0.01"`` (a string) read as 0.01 and gave the model the hash of the file with the
    number; only a JSON number is a rate."""
    path = _model_file(tmp_path, lambda d: d["progressive"].update(contribution_rate=rate),
                       "default")
    says = _one_line(run_cli(["rtp", "--model", str(path)]), "rtp")
    assert "progressive.contribution_rate must be a JSON number in [0, 1)" in says


def test_an_infinite_rate_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "inf.json"
    text = json.dumps(load_model("default").to_dict()).replace(
        '"contribution_rate": 0.01', '"contribution_rate": Infinity')
    assert "Infinity" in text
    path.write_text(text, encoding="utf-8")
    assert "must be a JSON number" in _one_line(run_cli(["rtp", "--model", str(path)]), "rtp")
