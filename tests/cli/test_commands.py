"""The command contracts of eval, model, rtp and tune, through the command line's ``main`` in this
process (its exit codes, output and one-line refusals; the real process is tested in
test_one_line_errors.py)."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from starfever import commands
from starfever.cli import INTERNAL_ERROR, main
from starfever.engine.model import load_model
from starfever.math import exact
from tests.conftest import run_cli_here

DATA = Path(__file__).parent.parent / "data"


def test_eval_contract() -> None:
    case = json.loads((DATA / "grid_cases.json").read_text())["cases"][2]
    out = run_cli_here(["eval", "--line-bet", "10"], json.dumps({"grid": case["grid"]}))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data == {
        "line_wins": [{**w, "win": w["win"] * 10} for w in case["line_wins"]],
        "line_total": case["line_total"] * 10,
        "jackpot_lines": [],
        "star_coins": 0,
        "feature": None,
    }


def test_eval_default_line_bet_is_one_cent() -> None:
    case = json.loads((DATA / "grid_cases.json").read_text())["cases"][1]
    data = json.loads(run_cli_here(["eval"], json.dumps({"grid": case["grid"]})).stdout)
    assert data["line_total"] == 5


@pytest.mark.parametrize("stdin,args", [
    ('{"grid": [["LEMON","LEMON","PEAR"],["LEMON","LEMON","LEMON"],["LEMON","LEMON","LEMON"],'
     '["LEMON","LEMON","LEMON"],["LEMON","LEMON","LEMON"]]}', []),
    ('{"grid": [["LEMON","LEMON","LEMON"]]}', []),
    ("not json", []),
    ('{"reels": []}', []),
    ('{"grid": [["LEMON","LEMON","LEMON"],["LEMON","LEMON","LEMON"],["LEMON","LEMON","LEMON"],'
     '["LEMON","LEMON","LEMON"],["LEMON","LEMON","LEMON"]]}', ["--line-bet", "7"]),
])
def test_eval_bad_input(stdin: str, args: list[str]) -> None:
    out = run_cli_here(["eval", *args], stdin)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_model_contract() -> None:
    out = run_cli_here(["model", "--json"])
    data = json.loads(out.stdout)
    assert data["name"] == "default"
    assert len(data["reels"]["base"]) == 5 and len(data["reels"]["star_wild"]) == 5
    assert all("COIN" not in strip for strip in data["reels"]["star_wild"])
    hc = data["hold_and_cash"]
    assert set(hc["cell_weights"]) == {"BLANK", "CASH", "MINOR", "MAJOR", "UPGRADE", "MULTIPLIER"}
    assert set(hc["coin_values"]) == set(hc["cash_values"]) == {"1", "2", "3", "4", "5"}
    assert all(isinstance(w, int) for w in hc["cell_weights"].values())
    assert 0 < data["progressive"]["contribution_rate"] < 1
    assert isinstance(data["progressive"]["seed_cents"], int)


@pytest.mark.slow
def test_rtp_contract() -> None:
    out = run_cli_here(["rtp", "--json"])
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["model"] == "default"
    assert abs(data["total"] - 0.955) < 0.0002
    parts = data["components"]
    assert set(parts) == {"lines", "star_wild", "hold_and_cash", "progressive"}
    assert abs(sum(parts.values()) - data["total"]) < 1e-12
    assert parts["progressive"] == 0.01
    assert 0.25 <= data["hit_frequency"] <= 0.40
    assert data["star_wild_frequency"] > data["hold_and_cash_frequency"] > 0
    assert 1 < data["std_dev"] < 100
    # the contract of issue 12 (other tools read these keys)
    assert list(data["by_line_bet"]) == ["1", "2", "3", "4", "5", "10", "25", "50", "75", "100"]
    for row in data["by_line_bet"].values():
        assert abs(row["total"] - 0.955) < 0.0002 and row["progressive"] == 0.01
    assert data["std_dev_method"] == "exact"
    bands = data["win_bands"]
    assert [(b["from_x"], b["to_x"]) for b in bands] == [
        (0, 0), (0, 1), (1, 2), (2, 5), (5, 10), (10, 20), (20, 50), (50, 100), (100, 200),
        (200, 500), (500, 1000), (1000, 2000), (2000, 5000), (5000, None)]
    assert abs(sum(b["probability"] for b in bands) - 1) < 1e-9
    # band 0 = no game win; a round without a game win may still win a EUR share
    assert 0 <= bands[0]["probability"] - (1 - data["hit_frequency"]) < data["jackpot_frequency"]
    assert set(data["max_win_x"]) == {"base", "star_wild", "hold_and_cash"}
    assert data["max_win_x"]["hold_and_cash"] is None
    assert 0 < data["max_win_x"]["base"] < data["max_win_x"]["star_wild"]
    assert [t["k"] for t in data["hold_and_cash_tails"]] == [100, 500, 1000, 2000, 5000, 10000]
    model = load_model("default")
    assert data["model_sha256"] == model.sha256 and data["model_version"] == model.version
    refills = {name: run["refills"] for name, run in data["jackpot_long_run"].items()}
    assert set(refills) == {"all_1_cent", "all_eur_1", "uniform", "realistic"}
    assert refills["all_1_cent"] < refills["realistic"] < refills["uniform"] < refills["all_eur_1"]


def test_rtp_answers_a_model_seen_before_from_its_cache() -> None:
    # how fast that is, is measured by benchmarks/rtp.py, not asserted here
    out = run_cli_here(["rtp"])
    assert out.returncode == 0, out.stderr
    assert "hit cache" in out.stdout


def _write(tmp_path: Path, mutate: object) -> Path:
    data = json.loads(run_cli_here(["model", "--json"]).stdout)
    mutate(data)  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("mutate,needle", [
    (lambda d: d["hold_and_cash"]["cell_weights"].update(CASH=-1), "non-negative"),
    (lambda d: d["reels"]["base"][0].append("PEAR"), "unknown symbol"),
    (lambda d: d["reels"]["star_wild"][0].append("COIN"), "COIN"),
    (lambda d: d["reels"]["base"][4].append("JACKPOT"), "JACKPOT"),
    (lambda d: d["progressive"].update(contribution_rate=1.5), "contribution_rate"),
    (lambda d: d.pop("reels"), "reels"),
])
@pytest.mark.slow
def test_bad_model_file(tmp_path: Path, mutate: object, needle: str) -> None:
    out = run_cli_here(["rtp", "--model", str(_write(tmp_path, mutate))])
    assert out.returncode == 2
    assert needle in out.stderr and "Traceback" not in out.stderr


def test_unknown_model() -> None:
    out = run_cli_here(["model", "--model", "nope"])
    assert out.returncode == 2 and "unknown model 'nope'" in out.stderr


def test_tune_refuses_an_existing_out_file_before_searching(tmp_path: Path) -> None:
    """A file at --out is someone's model: refused at once (no search run), left as it was;
    a folder that does not exist is refused the same way."""
    out_file = tmp_path / "mine.json"
    out_file.write_text("my model\n", encoding="utf-8")
    out = run_cli_here(["tune", "--target", "95%", "--name", "m95", "--out", str(out_file)])
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and "exists; give --force to replace it" in out.stderr
    assert out_file.read_text(encoding="utf-8") == "my model\n"
    missing = tmp_path / "no-such-folder" / "m95.json"
    out = run_cli_here(["tune", "--target", "95%", "--name", "m95", "--out", str(missing)])
    assert out.returncode == 2 and "no folder" in out.stderr and not missing.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json"]


@pytest.mark.slow
def test_tune_produces_the_target(tmp_path: Path) -> None:
    out_file = tmp_path / "m95.json"
    out_file.write_text("an older try\n", encoding="utf-8")  # replaced with --force
    out = run_cli_here(["tune", "--target", "95%", "--name", "m95", "--out", str(out_file),
                   "--force"])
    assert out.returncode == 0, out.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["m95.json"]  # no part file left
    tuned = load_model(str(out_file))
    assert tuned.name == "m95"
    source = load_model("default")
    assert tuned.version != source.version and tuned.sha256 != source.sha256
    assert abs(exact.compute(tuned).total - Fraction(95, 100)) < Fraction(
        2, 10_000)


@pytest.mark.parametrize("target", ["0.5", "250%", "abc"])
def test_tune_impossible_target(tmp_path: Path, target: str) -> None:
    out = run_cli_here(["tune", "--target", target, "--out", str(tmp_path / "x.json")])
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert not (tmp_path / "x.json").exists()


def test_a_bug_is_reported_as_a_bug_and_bad_input_as_bad_input(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the project's own input errors become 'error: ..., exit 2'; a ValueError from a
    defect (here the evaluator failing on a valid grid) is reported as a bug, exit 70."""
    grid = json.loads((DATA / "grid_cases.json").read_text())["cases"][0]["grid"]

    def broken(_: object) -> None:
        raise ValueError("math domain error")

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"grid": grid})))
    monkeypatch.setattr(commands, "evaluate_grid", broken)
    assert main(["eval"]) == INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "Traceback" in err and "internal error (a bug in Star Fever" in err

    monkeypatch.setattr("sys.stdin", io.StringIO('{"grid": [["LEMON"]]}'))
    assert main(["eval"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("starfever eval: error: ") and err.count("\n") == 1
