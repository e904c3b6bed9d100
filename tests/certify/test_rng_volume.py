"""The RNG evidence at volume (``certify --rng full``): its block sampler gives exactly what
``SystemRandomSource.randbelow`` gives on the same bytes, its streaming tests agree with the
project's tests on the same draws, the full battery is planned from dieharder's own listing,
and the full path runs end to end at a small size on the live generator."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from starfever.certify import bundle, rng_evidence
from starfever.certify.rng_volume import StreamTests, plan_full_battery, stops
from starfever.engine.model import load_model
from starfever.engine.rng import SystemRandomSource
from starfever.math.figures import figures
from starfever.math.stats import chi_square_uniform, runs_test, serial_correlation


def _reader(seed: int, size: int = 200_000) -> Callable[[int], bytes]:
    """A fixed byte stream, read in order (the same bytes for every reader of one seed)."""
    data = random.Random(seed).randbytes(size)
    position = 0

    def read(k: int) -> bytes:
        nonlocal position
        chunk = data[position:position + k]
        position += k
        assert len(chunk) == k, "the test's byte stream ran out"
        return chunk

    return read


@pytest.mark.parametrize("n", [2, 3, 7, 80, 255, 256, 257, 1000, 65_537])
def test_a_block_of_stops_is_what_randbelow_draws_from_the_same_bytes(n: int) -> None:
    live = SystemRandomSource(read=_reader(n))
    one_by_one = [live.randbelow(n) for _ in range(2000)]
    assert stops(n, 2000, _reader(n)).tolist() == one_by_one


@pytest.mark.parametrize("n", [2, 3, 80])
def test_the_streaming_tests_agree_with_the_projects_tests(n: int) -> None:
    draws = stops(n, 5000, _reader(n + 1))
    streamed = StreamTests(n)
    for start in range(0, 5000, 777):  # blocks of odd sizes: the seams must not count
        streamed.add(draws[start:start + 777])
    result = streamed.result()
    values = [float(v) for v in draws]
    assert result["stops"] == 5000
    assert result["chi_square_p"] == pytest.approx(chi_square_uniform(draws.tolist(), n).p_value,
                                                   rel=1e-9)
    assert result["serial_correlation_p"] == pytest.approx(
        serial_correlation(values).p_value, rel=1e-9)
    if n <= 3:  # the sample median is the law's: the runs test is the same test
        assert result["runs_p"] == pytest.approx(runs_test(values).p_value, rel=1e-9)


def test_the_streaming_tests_find_a_generator_that_is_not_uniform() -> None:
    test = StreamTests(10)
    test.add(stops(10, 50_000, _reader(5, 200_000)) % 9)  # never a 9
    assert test.result()["chi_square_p"] < 1e-100
    runs = StreamTests(10)
    runs.add(np.sort(stops(10, 20_000, _reader(6))))  # sorted: one long run of each side
    assert runs.result()["runs_p"] < 1e-100 and runs.result()["serial_correlation_p"] < 1e-100


LISTING = """#=============================================================================#
#            dieharder version 3.31.1 Copyright 2003 Robert G. Brown          #
#=============================================================================#
Installed dieharder tests:
 Test Number	                     Test Name	                Test Reliability
===============================================================================
  -d 0  	                  Diehard Birthdays Test	      Good
  -d 1  	                     Diehard OPERM5 Test	      Good
  -d 100	                            STS Monobit Test	      Good
  -d 200	                        RGB Bit Distribution Test	      Good
  -d 201	            RGB Generalized Minimum Distance Test	      Good
  -d 202	                        RGB Permutations Test	      Good
  -d 203	                          RGB Lagged Sum Test	      Good
"""


def test_the_full_battery_is_every_listed_test_with_the_ntuples_of_dash_a() -> None:
    plan = plan_full_battery(LISTING)
    assert plan[:3] == [["-d", "0"], ["-d", "1"], ["-d", "100"]]
    assert [r for r in plan if r[1] == "200"] == [["-d", "200", "-n", str(k)]
                                                  for k in range(1, 13)]
    assert [r[3] for r in plan if r[1] == "201"] == ["2", "3", "4", "5"]
    assert len([r for r in plan if r[1] == "203"]) == 33
    assert len(plan) == 3 + 12 + 4 + 4 + 33


def test_the_full_path_runs_on_the_live_generator_at_a_small_size(tmp_path: Path) -> None:
    model = load_model("default")
    options = bundle.Options(out=tmp_path / "b", rng="full", rng_volume=20_000,
                             rng_stops=1000, rng_rounds=1000, dieharder_runs=1)
    evidence = bundle._rng(model, figures(model), options)
    assert evidence["mode"] == "full"
    strips = evidence["volume"]["strips"]
    assert len(strips) == len(model.base_reels) + len(model.star_wild_reels)
    assert sum(row["stops"] for row in strips.values()) == 20_000
    for row in strips.values():
        for key in ("chi_square_p", "runs_p", "serial_correlation_p"):
            assert 0 <= row[key] <= 1
    battery = evidence["dieharder"]
    assert battery["battery"] == "full"
    if shutil.which("dieharder") is None:
        assert battery["ran"] is False and "not installed" in battery["note"]
    else:
        assert battery["ran"] is True and battery["runs"] == 1
    assert isinstance(rng_evidence.failures(evidence), list)


def test_the_quick_path_is_the_default_and_runs_for_real(tmp_path: Path) -> None:
    model = load_model("default")
    options = bundle.Options(out=tmp_path / "b", rng_stops=2000, rng_rounds=1000,
                             dieharder=False)
    assert options.rng == "quick"
    evidence = bundle._rng(model, figures(model), options)
    assert "volume" not in evidence
    assert all(p["proved"] for p in evidence["scaling_proofs"].values())
    assert evidence["live_rounds"]["rounds"] == 1000
    assert {row["stops"] for name, row in evidence["live_reels"].items()
            if "x" not in name} == {2000}
    assert "--rng full runs the whole battery" in evidence["dieharder"]["note"]
