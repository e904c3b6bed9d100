"""Golden line-evaluation cases computed by hand, and properties of the evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starfever.engine.lines import InvalidGrid, check_grid, evaluate_grid, evaluate_line
from starfever.engine.symbols import (
    COIN,
    JACKPOT,
    LINES,
    MWILD,
    PAYING_SYMBOLS,
    PAYTABLE,
    SYMBOLS,
    WILD,
)

DATA = Path(__file__).parent.parent / "data"
LINE_CASES = json.loads((DATA / "line_cases.json").read_text())["cases"]
GRID_CASES = json.loads((DATA / "grid_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", LINE_CASES, ids=lambda c: "-".join(c["cells"]))
def test_golden_line(case: dict) -> None:
    pay = evaluate_line(case["cells"])
    if case["symbol"] is None:
        assert pay is None
    else:
        assert pay is not None
        assert (pay.symbol, pay.count, pay.multiplier, pay.factor) == (
            case["symbol"], case["count"], case["multiplier"], case["factor"])


@pytest.mark.parametrize("case", GRID_CASES, ids=lambda c: c["name"])
def test_golden_grid(case: dict) -> None:
    result = evaluate_grid(check_grid(case["grid"]))
    wins = [{"line": w.line, "symbol": w.pay.symbol, "count": w.pay.count,
             "multiplier": w.pay.multiplier, "win": w.pay.factor} for w in result.line_wins]
    assert wins == case["line_wins"]
    assert result.line_factor == case["line_total"]
    assert list(result.jackpot_lines) == case["jackpot_lines"]
    assert result.star_coins == case["star_coins"]
    assert result.feature == case["feature"]


def test_lines_table_is_rules_md() -> None:
    assert len(LINES) == 20
    assert len(set(LINES)) == 20
    assert LINES[0] == (1, 1, 1, 1, 1) and LINES[19] == (0, 1, 1, 1, 0)


@pytest.mark.parametrize("bad", [
    [], [["LEMON"] * 3] * 4, [["LEMON"] * 2] * 5, [["LEMON", "LEMON", "PEAR"]] * 5,
    "LEMON", [["LEMON", "LEMON", 3]] * 5,
])
def test_bad_grid_is_refused(bad: object) -> None:
    with pytest.raises(InvalidGrid):
        check_grid(bad)


base_symbols = st.sampled_from([s for s in SYMBOLS if s != MWILD])
lines_5 = st.lists(base_symbols, min_size=5, max_size=5)


@given(lines_5)
def test_pay_is_a_paytable_entry(cells: list[str]) -> None:
    pay = evaluate_line(cells)
    if pay is not None:
        assert 3 <= pay.count <= 5
        assert pay.factor == PAYTABLE[pay.symbol][pay.count - 3] * pay.multiplier
        assert pay.multiplier == 1  # no MWILD on these lines


@given(lines_5, st.integers(0, 4))
def test_a_wild_never_lowers_the_pay(cells: list[str], where: int) -> None:
    if cells[where] not in PAYING_SYMBOLS:
        return
    before = evaluate_line(cells)
    after = evaluate_line([*cells[:where], WILD, *cells[where + 1:]])
    assert (after.factor if after else 0) >= (before.factor if before else 0)


@given(lines_5)
def test_coin_and_jackpot_are_never_substituted(cells: list[str]) -> None:
    pay = evaluate_line(cells)
    if pay is not None:
        assert COIN not in cells[: pay.count] and JACKPOT not in cells[: pay.count]


@given(lines_5, st.integers(0, 4))
def test_mwild_triples_the_wild_reading(cells: list[str], where: int) -> None:
    if cells[where] != WILD:
        return
    plain = evaluate_line(cells)
    tripled = evaluate_line([*cells[:where], MWILD, *cells[where + 1:]])
    # the MWILD reading is at least the plain pay, and at most three times it
    assert (plain is not None and tripled is not None) or (plain is None and tripled is None)
    if plain and tripled:
        assert plain.factor <= tripled.factor <= 3 * plain.factor


@given(st.lists(st.lists(st.sampled_from(SYMBOLS), min_size=3, max_size=3), min_size=5,
                max_size=5))
def test_a_window_pays_what_each_of_its_lines_pays_alone(grid: list[list[str]]) -> None:
    """evaluate_grid skips a line whose reels 0-2 cannot start a run (remembered per
    prefix): the result must equal every line read through evaluate_line on its own."""
    evaluation = evaluate_grid(grid)
    cells = [[grid[reel][row] for reel, row in enumerate(rows)] for rows in LINES]
    expected = [(number, evaluate_line(line)) for number, line in enumerate(cells, start=1)]
    assert [(w.line, w.pay) for w in evaluation.line_wins] == \
        [(number, pay) for number, pay in expected if pay is not None]
    assert list(evaluation.jackpot_lines) == \
        [number for number, line in enumerate(cells, start=1) if line[:3] == [JACKPOT] * 3]
    assert evaluation.star_coins == sum(cell == COIN for reel in grid for cell in reel)
