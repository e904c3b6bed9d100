"""The launch's optional fields as ``services.launch.check_launch`` checks them, and the
session time rules, without a server: pure functions at a fixed instant (``now`` is an
argument). The end-to-end behaviour is in ``tests/seamless/test_launch_options.py``."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from starfever.seamless import protocol
from starfever.server.services.errors import ServiceError
from starfever.server.services.launch import (
    MAX_SESSION_TIME_LIMIT_SECONDS,
    MIN_INTERVAL_SECONDS,
    Launch,
    Options,
    check_launch,
)
from starfever.server.services.protection_rules import check_play_time, play_time_left

SECRET = "launch-checks-secret-0123456789"
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
TTL = 12 * 3600
"""The session token's lifetime: the longest reality-check interval a launch may set."""


def _check(**options: Any) -> Launch:
    body = protocol.encode({"launch_id": "l-1", "player_id": "p-1", "operator_session": "s-1",
                            "currency": "EUR", "language": "de", "market": "at",
                            "mode": "real", "return_url": "https://operator.example/lobby",
                            **options}, NOW)
    return check_launch(SECRET, body, protocol.sign(SECRET, body), NOW,
                        max_reality_check_seconds=TTL)


def _refusal(**options: Any) -> tuple[int, str]:
    with pytest.raises(ServiceError) as refused:
        _check(**options)
    return refused.value.status, refused.value.code


def test_a_launch_may_carry_the_contracts_optional_fields() -> None:
    assert _check(brand="casino-nord", reality_check_seconds=900,
                  session_time_limit_seconds=1800, birth_date="1990-05-17").options == Options(
        brand="casino-nord", reality_check_seconds=900, session_time_limit_seconds=1800,
        birth_date=date(1990, 5, 17))
    assert _check().options == Options()
    assert _check(brand=None, reality_check_seconds=None, session_time_limit_seconds=None,
                  birth_date=None).options == Options()  # null: not sent


def test_interval_and_time_limit_bounds_are_inclusive_and_refused_beyond() -> None:
    assert _check(reality_check_seconds=MIN_INTERVAL_SECONDS,
                  session_time_limit_seconds=MIN_INTERVAL_SECONDS).options.birth_date is None
    assert _check(reality_check_seconds=TTL,
                  session_time_limit_seconds=MAX_SESSION_TIME_LIMIT_SECONDS).options \
        .reality_check_seconds == TTL
    out_of_range = (422, "reality_check_out_of_range")
    assert _refusal(reality_check_seconds=MIN_INTERVAL_SECONDS - 1) == out_of_range
    assert _refusal(reality_check_seconds=TTL + 1) == out_of_range
    assert _refusal(reality_check_seconds=0) == out_of_range
    too_long = (422, "session_time_limit_out_of_range")
    assert _refusal(session_time_limit_seconds=MIN_INTERVAL_SECONDS - 1) == too_long
    assert _refusal(session_time_limit_seconds=MAX_SESSION_TIME_LIMIT_SECONDS + 1) == too_long


@pytest.mark.parametrize("options", [
    {"reality_check_seconds": True}, {"reality_check_seconds": 600.0},
    {"reality_check_seconds": "600"}, {"session_time_limit_seconds": [600]},
    {"brand": ""}, {"brand": "a" * 65}, {"brand": "nord casino"}, {"brand": 7},
    {"birth_date": "1990-5-17"}, {"birth_date": "17.05.1990"}, {"birth_date": 19900517},
    {"birth_date": "1990-02-30"}, {"birth_date": "1899-12-31"}, {"birth_date": "2026-12-05"},
    {"birth_date": "1990-05-17T00:00:00"}, {"age": 30}])
def test_a_malformed_optional_field_is_invalid_launch(options: dict[str, Any]) -> None:
    assert _refusal(**options) == (422, "invalid_launch")


def test_a_birth_date_under_18_is_refused_and_18_today_is_launched() -> None:
    assert _refusal(birth_date="2008-12-05") == (403, "under_age")  # 18 tomorrow
    assert _refusal(birth_date="2026-01-01") == (403, "under_age")
    assert _check(birth_date="2008-12-04").options.birth_date == date(2008, 12, 4)


def test_the_session_time_limit_refuses_from_its_instant_and_counts_down() -> None:
    ends = NOW + timedelta(seconds=90)
    check_play_time(None, NOW)
    check_play_time(ends, ends - timedelta(microseconds=1))
    for late in (ends, ends + timedelta(hours=1)):
        with pytest.raises(ServiceError) as refused:
            check_play_time(ends, late)
        assert (refused.value.status, refused.value.code) == (403, "session_time_limit_reached")
    assert play_time_left(None, NOW) is None
    assert play_time_left(ends, NOW) == 90
    assert play_time_left(ends, ends + timedelta(seconds=5)) == 0
