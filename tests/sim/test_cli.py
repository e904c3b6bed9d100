"""``starfever simulate`` through the real command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess
from typing import Any

import pytest

Cli = Callable[..., CompletedProcess[str]]


@pytest.mark.parametrize(("args", "message"), [
    (["--spins", "0", "--seed", "1"], "--spins must be a whole number >= 1"),
    (["--spins", "-10", "--seed", "1"], "--spins must be a whole number >= 1"),
    (["--spins", "1.5", "--seed", "1"], "--spins must be a whole number"),
    (["--spins", "ten", "--seed", "1"], "--spins must be a whole number"),
    (["--spins", "10", "--seed", "-1"], "--seed must be a whole number >= 0"),
    (["--spins", "10", "--seed", "1", "--workers", "0"], "--workers must be a whole number >= 1"),
    (["--spins", "10", "--seed", "1", "--model", "no-such-model"], "unknown model"),
    (["--spins", "10", "--seed", "1", "--line-bet", "7"], "line bet 7 is not a bet class"),
    (["--spins", "10", "--seed", "1", "--line-bet", "0.05"], "line bet '0.05' is not a bet"),
])
def test_bad_input_is_one_line_and_exit_2(cli: Cli, args: list[str], message: str) -> None:
    done = cli(["simulate", *args])
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("starfever simulate: error: ")
    assert message in lines[0]
    assert "Traceback" not in done.stderr


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
    assert data["components"]["progressive"]["rtp"] == 0.01
    assert data["exact"] == pytest.approx(0.95499, abs=1e-5)
    for key in ("hit_frequency", "star_wild_frequency", "hold_and_cash_frequency",
                "jackpot_frequency", "spins_per_second"):
        assert isinstance(data[key], float)
    assert data["frequencies"]["jackpot"]["exact"] == pytest.approx(3.3203125e-05)
