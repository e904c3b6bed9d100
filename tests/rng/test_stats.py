"""The test statistics against textbook critical values."""

from __future__ import annotations

import pytest

from starfever.math.stats import (
    _regularized_upper_gamma,
    chi_square_uniform,
    runs_test,
    serial_correlation,
)


@pytest.mark.parametrize("df,x,p", [(1, 3.841, 0.05), (4, 13.277, 0.01), (79, 100.749, 0.05),
                                    (99, 123.225, 0.05), (10, 2.558, 0.99)])
def test_chi_square_tail(df: int, x: float, p: float) -> None:
    assert _regularized_upper_gamma(df / 2, x / 2) == pytest.approx(p, abs=2e-4)


def test_tests_reject_what_is_not_random() -> None:
    assert chi_square_uniform([0] * 900 + [1] * 100, 2).p_value < 1e-10
    assert chi_square_uniform([0, 1] * 500, 2).p_value > 0.99
    alternating = [0, 10] * 500
    assert runs_test(alternating).p_value < 1e-10
    assert serial_correlation(alternating).p_value < 1e-10
    trend = list(range(1000))
    assert serial_correlation(trend).p_value < 1e-10
    assert runs_test(trend).p_value < 1e-10
