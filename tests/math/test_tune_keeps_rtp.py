"""``starfever tune`` without ``--rtp`` keeps the source's total RTP (a search aimed only at
other figures once wrote a model returning 1,101 %), and refuses an ``--out`` that is not a
regular file and an empty ``--name`` before any search."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from starfever.engine.model import load_model
from starfever.math import exact
from starfever.math.tune import RTP_TOLERANCE
from tests.conftest import run_cli, run_cli_here


@pytest.mark.slow
def test_without_rtp_the_tuner_keeps_the_sources_total(tmp_path: Path) -> None:
    out = tmp_path / "calm.json"
    done = run_cli(["tune", "--hit-frequency", "34%", "--name", "calm", "--out", str(out),
                    "--json"], timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    kept = data["targets"][0]
    assert kept["key"] == "total" and "the source's, kept" in kept["given"] and kept["met"]
    source = exact.compute(load_model("default")).total
    tuned = load_model(str(out))
    total = exact.compute(tuned).total
    assert abs(total - source) < RTP_TOLERANCE  # not 1,101 %: the source's 95.49897 %
    assert "total RTP" in tuned.description and "kept" in tuned.description
    hit = exact.compute(tuned).hit_frequency
    assert 0.338 <= hit <= 0.342


def _refused(args: list[str], out: Path) -> str:
    done = run_cli_here(["tune", "--out", str(out), *args])  # a refusal: in process (ADR 0042)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("starfever tune: error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    return done.stderr


def test_an_out_that_is_not_a_regular_file_is_never_replaced(tmp_path: Path) -> None:
    """``--force`` replaces a regular file; a FIFO (or a device) is refused before the search
    and left as it was."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    says = _refused(["--rtp", "95.5%", "--force"], fifo)
    assert "exists and is not a regular file" in says
    assert fifo.is_fifo()
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_an_empty_name_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "x.json"
    says = _refused(["--rtp", "95.5%", "--name", ""], out)
    assert "--name ''" in says and not out.exists()


def test_a_source_outside_the_tuners_range_needs_an_rtp(tmp_path: Path) -> None:
    """Kept, a source's total must be one the tuner may aim at (as with --rtp)."""
    data = load_model("default").to_dict()
    data["name"] = "generous"
    data["hold_and_cash"]["cell_weights"]["BLANK"] = 1  # Hold & Cash far above 100 %
    source = tmp_path / "generous.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "x.json"
    says = _refused(["--model", str(source), "--hit-frequency", "33%"], out)
    assert "outside the tuner's range" in says and "--rtp" in says and not out.exists()
