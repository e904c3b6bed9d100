"""The UPGRADE unit of a model (``hold_and_cash.upgrade_unit``): one UPGRADE adds 1 x line bet
(RULES.md) or 1 x total bet (the earlier reading), worked out by hand on forced draws, and
every round of a total-bet model plays exactly as when values were kept in total bets."""

from __future__ import annotations

from typing import Any

import pytest

from starfever.engine.holdcash import play_hold_and_cash
from starfever.engine.model import (
    UPGRADE_LINE_BET,
    UPGRADE_TOTAL_BET,
    HoldAndCashModel,
    ModelError,
    load_model,
    model_from_dict,
    upgrade_line_bets,
)
from starfever.engine.rng import ReplaySource, SeededSource
from starfever.engine.round import play_round
from starfever.engine.symbols import BET_CLASSES, Cents

# Every cell kind and every value equally weighted: draw k picks kind k (BLANK, CASH, MINOR,
# MAJOR, UPGRADE, MULTIPLIER) and value k + 1.
_EVEN = (1, 1, 1, 1, 1, 1)
_FIVE = (1, 1, 1, 1, 1)
_BLANK, _CASH, _UPGRADE, _MULTIPLIER = 0, 1, 4, 5
_COINS = [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]


def _forced_feature() -> list[int]:
    """Coins worth 1..5 x total bet; respin 1: an UPGRADE at (0, 1) and a CASH 1 at (0, 2)
    after it in reading order (held before the UPGRADE acts); respin 2: a MULTIPLIER;
    then three empty respins."""
    draws = [0, 1, 2, 3, 4]  # the coins' values 1, 2, 3, 4, 5
    draws += [_UPGRADE, _CASH, 0] + [_BLANK] * 8  # 10 empty cells; the CASH is worth 1
    draws += [_MULTIPLIER] + [_BLANK] * 8  # 9 empty cells
    draws += [_BLANK] * 27  # 3 respins with nothing new
    return draws


@pytest.mark.parametrize(("unit", "line_bets"), [
    # (1+2+3+4+5+1) x 20 line bets + 6 UPGRADEs of 1, then doubled
    (UPGRADE_LINE_BET, (16 * 20 + 6) * 2),
    # the same with UPGRADEs of 20 line bets: 44 x total bet
    (UPGRADE_TOTAL_BET, (16 * 20 + 6 * 20) * 2),
])
@pytest.mark.parametrize("bet", [1, 5, 100])
def test_an_upgrade_adds_one_unit_to_every_held_cash_value(unit: str, line_bets: int,
                                                           bet: int) -> None:
    weights = HoldAndCashModel(_EVEN, _FIVE, _FIVE, upgrade_unit=unit)
    source = ReplaySource(_forced_feature())
    events: list[dict[str, Any]] = []
    outcome = play_hold_and_cash(list(_COINS), weights, Cents(bet), source, events)
    source.check_used_up()
    assert outcome.line_bets == line_bets and outcome.respins == 5
    assert outcome.cash_line_bets == line_bets and not outcome.mega
    step = 1 if unit == UPGRADE_LINE_BET else 20
    first = next(e for e in events if e["type"] == "respin")
    upgraded = first["boosters"][0]["values"]
    # the CASH that landed after the UPGRADE in reading order was held first, and raised too
    assert [v["value"] for v in upgraded] == [bet * (20 * v + step) for v in (1, 1, 2, 3, 4, 5)]
    end = events[-1]
    assert end == {"type": "hold_and_cash_end", "cash": bet * line_bets, "minor": 0,
                   "major": 0, "mega": False, "win": bet * line_bets}


def test_the_unit_in_line_bets() -> None:
    assert upgrade_line_bets(UPGRADE_LINE_BET) == 1
    assert upgrade_line_bets(UPGRADE_TOTAL_BET) == 20
    with pytest.raises(ModelError, match="upgrade_unit"):
        upgrade_line_bets("half_bet")


def _with_unit(unit: str) -> Any:
    data = load_model("default").to_dict()
    data["hold_and_cash"]["upgrade_unit"] = unit
    return model_from_dict(data)


def test_the_units_differ_only_where_an_upgrade_acts() -> None:
    """Same draws, two units: rounds without an UPGRADE in a Hold & Cash are identical; a
    feature whose held values an UPGRADE raised pays more under the total-bet unit."""
    line, total = _with_unit(UPGRADE_LINE_BET), _with_unit(UPGRADE_TOTAL_BET)
    upgraded = 0
    for seed in range(6000):
        a = play_round(line, 5, SeededSource(seed), pool=100_000)
        b = play_round(total, 5, SeededSource(seed), pool=100_000)
        assert a.draws == b.draws  # the unit never changes what is drawn
        acted = [x for e in a.events if e["type"] == "respin" for x in e["boosters"]
                 if x["kind"] == "UPGRADE" and x["values"]]
        if acted:
            upgraded += 1
            assert b.hold_and_cash_win > a.hold_and_cash_win
            assert a.hold_and_cash_win % 5 == 0 and b.hold_and_cash_win % 100 == 0
        else:
            assert a == b
    assert upgraded > 0


@pytest.mark.parametrize("bet", BET_CLASSES)
def test_a_line_bet_model_pays_whole_cents_at_every_class(bet: int) -> None:
    model = _with_unit(UPGRADE_LINE_BET)
    for seed in range(300):
        result = play_round(model, bet, SeededSource(seed))
        assert result.hold_and_cash_win % bet == 0


@pytest.mark.parametrize("bad", [None, "", "Line_Bet", "total", 1])
def test_a_model_with_an_unknown_or_missing_unit_is_refused(bad: object) -> None:
    data = load_model("default").to_dict()
    if bad is None:
        del data["hold_and_cash"]["upgrade_unit"]
    else:
        data["hold_and_cash"]["upgrade_unit"] = bad
    with pytest.raises(ModelError, match="upgrade_unit") as refused:
        model_from_dict(data)
    assert "\n" not in str(refused.value)
