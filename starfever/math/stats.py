"""Classical randomness tests with p-values (standard library maths only, no scipy).

Used by the RNG tests and ``tests/assurance/rng_report.py``: chi-square goodness of fit to the
uniform law, the Wald-Wolfowitz runs test above/below the median, and lag-1 serial correlation.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import NormalDist

Z99 = NormalDist().inv_cdf(0.995)
"""The two-sided 99 % normal quantile (2.5758...), behind every 99 % interval in the project."""


@dataclass(frozen=True)
class TestResult:
    """A test statistic and its p-value."""

    statistic: float
    p_value: float


def _regularized_upper_gamma(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a), by series or continued fraction (Numerical Recipes)."""
    if x <= 0:
        return 1.0
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - math.lgamma(a)))
    b = x + 1 - a
    c = 1 / 1e-300
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi_square_uniform(values: Sequence[int], categories: int) -> TestResult:
    """Chi-square test that ``values`` are uniform over ``0 .. categories - 1``."""
    counts = Counter(values)
    expected = len(values) / categories
    stat = sum((counts.get(k, 0) - expected) ** 2 / expected for k in range(categories))
    return TestResult(stat, _regularized_upper_gamma((categories - 1) / 2, stat / 2))


def _normal_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2))


def runs_test(values: Sequence[float]) -> TestResult:
    """Wald-Wolfowitz runs test. Two-valued data (e.g. win / no win) are runs of the two values;
    otherwise runs of values above / below the median (values equal to it dropped)."""
    distinct = sorted(set(values))
    if len(distinct) == 2:
        signs = [v == distinct[1] for v in values]
    else:
        median = sorted(values)[len(values) // 2]
        signs = [v > median for v in values if v != median]
    n1 = sum(signs)
    n2 = len(signs) - n1
    if n1 == 0 or n2 == 0:
        return TestResult(0.0, 1.0)
    runs = 1 + sum(a != b for a, b in pairwise(signs))
    n = n1 + n2
    mean = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    z = (runs - mean) / math.sqrt(var)
    return TestResult(z, _normal_two_sided(z))


def serial_correlation(values: Sequence[float]) -> TestResult:
    """Lag-1 autocorrelation; under independence sqrt(n) * r is about standard normal."""
    n = len(values)
    mean = sum(values) / n
    dev = [v - mean for v in values]
    var = sum(d * d for d in dev)
    r = sum(a * b for a, b in pairwise(dev)) / var if var else 0.0
    return TestResult(r, _normal_two_sided(r * math.sqrt(n)))
