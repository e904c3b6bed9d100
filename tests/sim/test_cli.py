"""``starfever simulate`` through the real command line."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

Cli = Callable[..., CompletedProcess[str]]


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), [
    (["--spins", "0", "--seed", "1"], "--spins must be a whole number from 1 to"),
    (["--spins", "-10", "--seed", "1"], "--spins must be a whole number from 1 to"),
    (["--spins", "1.5", "--seed", "1"], "--spins must be a whole number"),
    (["--spins", "ten", "--seed", "1"], "--spins must be a whole number"),
    (["--spins", "10", "--seed", "-1"], "--seed must be a whole number from 0 to"),
    (["--spins", "10", "--seed", "1", "--workers", "0"],
     "--workers must be a whole number from 1 to"),
    (["--spins", "10", "--seed", str(2**128)], "--seed must be a whole number from 0 to"),
    (["--spins", "10", "--seed", "1", "--model", "no-such-model"], "unknown model"),
    (["--spins", "10", "--seed", "1", "--line-bet", "7"], "line bet 7 is not a bet class"),
    (["--spins", "10", "--seed", "1", "--line-bet", "0.05"],
     "--line-bet must be a whole number from 1 to 100"),
    (["--spins", "1000", "--cluster", "nonsense"], "--cluster 'nonsense' is not a Dask"),
    (["--spins", "1000", "--cluster", "tcp://host:99999"], "port 99999 is not from 1"),
    (["--spins", "10", "--seed", "1", "--line-bet", "all", "--mix", "{tmp}/list.json"],
     "must hold a JSON object"),
    (["--spins", "10", "--seed", "1", "--line-bet", "all", "--mix", "{tmp}/other.json"],
     'has no "spin_shares"'),
    (["--spins", "10", "--seed", "1", "--mix", "uniform"], "--mix needs --line-bet all"),
    (["--spins", "10", "--seed", "1", "--line-bet", "all", "--mix", "nowhere"],
     "cannot read bet-class mix 'nowhere'"),
])
@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(cli: Cli, args: list[str], message: str,
                                          tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text("[]")  # mix files that are not mixes
    (tmp_path / "other.json").write_text('{"shares": {"1": 1}}')
    done = cli(["simulate", *(a.replace("{tmp}", str(tmp_path)) for a in args)])
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("starfever simulate: error: ")
    assert message in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_printed_fresh_seed_repeats_the_run(cli: Cli) -> None:
    fresh = json.loads(cli(["simulate", "--spins", "100_000", "--workers", "1",
                            "--json"]).stdout)
    assert fresh["seed"] >= 2**64  # 128 bits of entropy: it must be accepted back
    again = json.loads(cli(["simulate", "--spins", "100_000", "--workers", "1", "--seed",
                            str(fresh["seed"]), "--json"]).stdout)
    assert again["rtp"] == fresh["rtp"]


@pytest.mark.slow
def test_json_contract(cli: Cli) -> None:
    done = cli(["simulate", "--spins", "300_000", "--seed", "5", "--workers", "1", "--json"])
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    assert data["spins"] == 300_000
    assert (data["seed"], data["workers"]) == (5, 1)
    lo, hi = data["ci99"]
    assert lo < data["rtp"] < hi
    assert set(data["components"]) == {"lines", "star_wild", "hold_and_cash", "progressive"}
    for name in ("lines", "star_wild", "hold_and_cash"):
        part = data["components"][name]
        assert set(part) >= {"rtp", "ci99", "exact", "inside"}
        assert part["inside"] == (part["ci99"][0] <= part["exact"] <= part["ci99"][1])
    progressive = data["components"]["progressive"]
    assert progressive["rtp"] == 0.01 and progressive["simulated"] is False
    assert "ci99" not in progressive and "inside" not in progressive  # no verdict that can't fail
    assert data["exact"] == pytest.approx(0.955, abs=0.0002)  # RULES.md: 95.50 +/- 0.02 pp
    for key in ("hit_frequency", "star_wild_frequency", "hold_and_cash_frequency",
                "jackpot_frequency", "spins_per_second"):
        assert isinstance(data[key], float)
    assert data["frequencies"]["jackpot"]["exact"] == pytest.approx(3.3203125e-05)


def test_every_bet_class_with_its_pool(cli: Cli) -> None:
    done = cli(["simulate", "--spins", "200_000", "--seed", "3", "--workers", "1",
                "--line-bet", "all", "--json"])
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    classes = data["bet_classes"]
    assert [c["line_bet"] for c in classes] == [1, 2, 3, 4, 5, 10, 25, 50, 75, 100]
    assert [c["seed"] for c in classes] == list(range(3, 13))
    for c in classes:
        pool = c["progressive_pool"]
        assert pool["line_bet"] == c["line_bet"]
        assert pool["balanced"] is True
        assert pool["staked_cents"] == 200_000 * 20 * c["line_bet"]
        assert pool["seed_cents"] == 100_000
        assert c["average_win_cents"] == pytest.approx(c["rtp"] * 20 * c["line_bet"])
    # a full share empties the pool: at EUR 1.00 every round with a hit ends in a refill
    top = classes[-1]["progressive_pool"]
    assert top["hits"] > 0
    assert 1 <= top["refill_count"] <= top["hits"]
    assert top["paid_cents"] >= top["refill_count"] * 100_000
    human = cli(["simulate", "--spins", "20_000", "--seed", "3", "--workers", "1",
                 "--line-bet", "all"])
    assert human.returncode == 0, human.stderr
    assert "per bet class" in human.stdout
    rows = [line.split()[0] for line in human.stdout.splitlines()
            if re.match(r"\s+\d+\s+[\d,]+\s+\d+\.\d+%", line)]
    assert rows == ["1", "2", "3", "4", "5", "10", "25", "50", "75", "100"]
    assert "20,000 spins per class" in human.stdout


def test_variance_reduction_is_a_separate_labelled_block(cli: Cli) -> None:
    done = cli(["simulate", "--spins", "500_000", "--seed", "4", "--workers", "1",
                "--variance-reduction", "--json"])
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    vr = data["variance_reduced"]
    assert "NOT independent" in vr["label"]
    assert vr["variance_ratio"] > 1
    assert vr["std_error"] < vr["plain_std_error"]
    assert vr["exact"] == data["exact"]
    plain = cli(["simulate", "--spins", "500_000", "--seed", "4", "--workers", "1", "--json"])
    plain_data = json.loads(plain.stdout)
    assert "variance_reduced" not in plain_data
    assert plain_data["rtp"] == data["rtp"]  # the plain estimate is unchanged


def test_a_mix_plays_every_class_on_one_shared_pool(cli: Cli) -> None:
    done = cli(["simulate", "--spins", "400_000", "--seed", "3", "--workers", "1",
                "--line-bet", "all", "--mix", "realistic", "--json"])
    assert done.returncode == 0, done.stderr
    pool = json.loads(done.stdout)["shared_pool"]
    assert pool["balanced"] and pool["mix"] == "realistic"
    spins = {row["line_bet"]: row["spins"] for row in pool["classes"]}
    assert sum(spins.values()) == pytest.approx(400_000, abs=10)
    assert spins[1] > spins[100] > 0
    for row in pool["classes"]:
        assert row["total_players_money"] == pytest.approx(row["game_rtp"] + 0.01)
    human = cli(["simulate", "--spins", "400_000", "--seed", "3", "--workers", "1",
                 "--line-bet", "all", "--mix", "realistic"])
    assert human.returncode == 0, human.stderr
    # the classes play different numbers of spins: the header says so, each row its own count
    assert "spins per class" not in human.stdout and "its share of the mix" in human.stdout
    first = human.stdout.splitlines()[2].split()
    assert first[0] == "1" and int(first[1].replace(",", "")) == spins[1]


def test_the_cached_figures_are_the_computed_ones() -> None:
    """``simulate`` compares with the figures ``starfever rtp`` cached or shipped for the model
    when there are any (no 1.2 CPU-s of computation per run): they are the computed ones."""
    from starfever.engine.model import load_model
    from starfever.math.exact import compute
    from starfever.math.figures import cached
    from starfever.sim.cli import _Exact, cached_exact_figures, exact_figures

    model = load_model("default")
    stored = cached(model)
    assert stored is not None  # the shipped models ship their figures
    computed = exact_figures(compute(model, rational_hold=False))
    from_cache = cached_exact_figures(stored)
    assert from_cache.keys() == computed.keys()
    for name, value in computed.items():
        assert from_cache[name] == pytest.approx(value, rel=1e-12, abs=1e-15), name
    assert _Exact(model).figures() == from_cache


def test_a_model_without_cached_figures_has_them_computed(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from starfever.engine.model import load_model, model_from_dict
    from starfever.math.exact import compute
    from starfever.math.figures import cached
    from starfever.sim.cli import _Exact, exact_figures

    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path))
    data = load_model("default").to_dict()
    data["name"] = "not-seen-before"
    data["hold_and_cash"]["cell_weights"]["BLANK"] += 1
    model = model_from_dict(data)
    assert cached(model) is None
    exact = _Exact(model)
    exact.prepare()
    assert exact.figures() == exact_figures(compute(model, rational_hold=False))
