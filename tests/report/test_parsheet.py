"""The PAR sheet command writes a complete report with real plots."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from starfever.engine.model import load_model
from tests.conftest import run_cli

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_par_sheet(tmp_path: Path) -> None:
    out = tmp_path / "par"
    result = run_cli(["par-sheet", "--out", str(out), "--spins", "300000", "--workers", "1"])
    assert result.returncode == 0, result.stderr
    md = (out / "par-sheet.md").read_text()
    html = (out / "par-sheet.html").read_text()
    for section in ("Return to player", "Frequencies", "Paytable", "Reel strips", "Hold & Cash",
                    "Volatility and max win", "Plots", "Model identity", "RTP per bet class",
                    "Strip listings", "Combination counts", "Confidence intervals",
                    "Star Wild split", "Hold & Cash split", "Exact and simulated, side by side"):
        assert f"## {section}" in md
        assert section.replace("&", "&amp;") in html
    assert "95.5011 %" in md  # the exact total of the default model 3.0
    assert "| EUR progressive contribution | 1.0000 % | not simulated |" in md
    assert "Spins to confirm RTP to +/-0.1 pp at 99 %" in md
    for plot in ("win-distribution.png", "rtp-convergence.png", "hold-and-cash.png",
                 "rtp-split.png"):
        data = (out / plot).read_bytes()
        assert data.startswith(PNG) and len(data) > 10_000
        assert f"({plot})" in md and f'src="{plot}"' in html
    assert "| DIAMOND x5 | 600 |" in md
    model = load_model("default")
    assert model.sha256 in md and "| UPGRADE adds | 1 x line bet |" in md
    # the combination counts are integers that add up to every base stop combination
    table = md.split("## Combination counts")[1].split("##")[0]
    counts = [int(row.split("|")[2].replace(",", "")) for row in table.splitlines()
              if row.startswith("| ") and row.split("|")[2].strip().replace(",", "").isdigit()]
    assert sum(counts) == math.prod(len(s) for s in model.base_reels) == 819_200_000
    assert "| 79 | " in md  # the last stop of an 80-stop strip is listed


@pytest.mark.slow
@pytest.mark.parametrize("name", ["low-volatility", "high-volatility"])
def test_par_sheet_of_a_tuned_model(tmp_path: Path, name: str) -> None:
    """A model made by the tuner gets the same lab-complete sheet, its own identity in it, and
    the simulated win bands beside the exact ones."""
    out = tmp_path / name
    result = run_cli(["par-sheet", "--model", name, "--out", str(out), "--spins", "200000",
                      "--workers", "1"])
    assert result.returncode == 0, result.stderr
    md = (out / "par-sheet.md").read_text()
    model = load_model(name)
    assert f"model '{name}' (version {model.version})" in md and model.sha256 in md
    for section in ("Model identity", "Return to player", "RTP per bet class", "Strip listings",
                    "Combination counts", "Confidence intervals", "Star Wild split",
                    "Hold & Cash split", "Exact and simulated, side by side",
                    "Volatility and max win"):
        assert f"## {section}" in md
    assert "| UPGRADE adds | 1 x line bet |" in md and "confirms the RTP to +/-" in md
    bands = md.split("Win bands of a round's game win")[1].split("Hold & Cash tail")[0]
    rows = [r for r in bands.splitlines() if r.startswith("| ") and not r.startswith("| x ")]
    assert len(rows) == 14  # 0, (0,1], ..., (2000,5000], > 5000
    simulated = sum(int(r.split("|")[4].replace(",", "")) for r in rows)
    assert simulated == 200_000  # every simulated round in exactly one band
    table = md.split("## Combination counts")[1].split("##")[0]
    counts = [int(row.split("|")[2].replace(",", "")) for row in table.splitlines()
              if row.startswith("| ") and row.split("|")[2].strip().replace(",", "").isdigit()]
    assert sum(counts) == math.prod(len(s) for s in model.base_reels)


@pytest.mark.slow
def test_par_sheet_bad_input(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for args in (["--spins", "5"], ["--out", str(blocker)], ["--model", "nope"]):
        full = ["par-sheet", "--out", str(tmp_path / "o"), *args]
        result = run_cli(full)
        assert result.returncode == 2, args
        assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_par_sheet_shows_its_sections_on_a_progress_bar(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The sheet's own minute (certify's longest quiet step before) runs under a bar that
    counts its sections."""
    from starfever.math.exact import compute
    from starfever.report.parsheet import build
    from starfever.sim.runner import simulate

    model = load_model("default")
    sim = simulate(model, 20_000, 5, workers=1)
    build(model, compute(model), sim, tmp_path, progress=True)
    shown = capsys.readouterr().err
    assert "PAR sheet" in shown and "13/13" in shown and "plots" in shown
    build(model, compute(model), sim, tmp_path)
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_par_sheet_of_the_de_model_names_no_jackpot(tmp_path: Path) -> None:
    """ADR 0072: the de model has no progressive and calls no prize a jackpot; its sheet says
    so, states only its five classes and has no row or bar for a pool."""
    out = tmp_path / "de"
    result = run_cli(["par-sheet", "--model", "de", "--out", str(out), "--spins", "200000",
                      "--workers", "1"])
    assert result.returncode == 0, result.stderr
    md = (out / "par-sheet.md").read_text()
    assert "jackpot" not in md.lower() and "€€€" not in md and "EUR progressive" not in md
    assert "| Progressive | none: no pool, no contribution, no pool symbol on any strip |" in md
    assert "Line bet classes: EUR 0.01, EUR 0.02, EUR 0.03, EUR 0.04, EUR 0.05." in md
    assert "| EUR 0.10 |" not in md
    assert "| full-screen x1000 prize |" in md and "x20 prize" in md
    assert load_model("de").sha256 in md
