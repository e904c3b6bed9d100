"""Live-play randomness: the scaling from CSPRNG bytes to draws is exactly uniform, and stops and
outcomes drawn through the whole live path pass frequency, runs and serial-correlation tests.

The statistical tests use fresh OS randomness, so each fails by chance with probability 1e-4
(a true defect fails far harder); docs/assurance.md lists the p-values of full-size runs.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import product

import pytest

from starfever.engine.model import load_model
from starfever.engine.rng import SystemRandomSource, weighted_index
from starfever.engine.round import play_round
from starfever.math.stats import chi_square_uniform, runs_test, serial_correlation

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

ALPHA = 1e-4


class EveryByteString:
    """A byte source that yields every byte string of one length, in order, once."""

    def __init__(self, size: int) -> None:
        self._strings = iter(product(range(256), repeat=size))
        self.size = size

    def __call__(self, size: int) -> bytes:
        assert size == self.size
        return bytes(next(self._strings))


@pytest.mark.parametrize("n", [2, 3, 5, 31, 40, 80, 100, 200, 255, 256, 257, 1000, 21_706])
def test_byte_to_range_mapping_is_exactly_uniform(n: int) -> None:
    """Feed all 2^(8*size) byte strings through randbelow: every value below n is returned
    equally often, and the rejected strings are exactly those whose top bits reach n."""
    size = ((n - 1).bit_length() + 7) // 8
    source = SystemRandomSource(read=EveryByteString(size))
    bits = (n - 1).bit_length()
    accepted = n * 2 ** (8 * size - bits)  # strings whose top bits are < n
    counts: Counter[int] = Counter()
    for _ in range(accepted):
        counts[source.randbelow(n)] += 1
    assert set(counts) == set(range(n))
    assert len(set(counts.values())) == 1


def test_weighted_pick_is_exact() -> None:
    """One draw below the total weight: each index is chosen by exactly its weight's share."""
    weights = (3, 0, 5, 1)

    class Sweep:
        def __init__(self) -> None:
            self.next = 0

        def randbelow(self, n: int) -> int:
            value = self.next % n
            self.next += 1
            return value

    sweep = Sweep()
    counts = Counter(weighted_index(sweep, weights) for _ in range(sum(weights)))
    assert counts == {0: 3, 2: 5, 3: 1}


def test_live_reel_stops_are_uniform_and_independent() -> None:
    model = load_model("default")
    source = SystemRandomSource()
    spins = 60_000
    stops = [[source.randbelow(len(strip)) for strip in model.base_reels] for _ in range(spins)]
    for reel, strip in enumerate(model.base_reels):
        column = [s[reel] for s in stops]
        assert chi_square_uniform(column, len(strip)).p_value > ALPHA
        assert runs_test(column).p_value > ALPHA
        assert serial_correlation(column).p_value > ALPHA
    # reels are independent of each other: stop of reel 0 against stop of reel 1, 10 x 10 cells
    pairs = [(s[0] * 10 // 80) * 10 + s[1] * 10 // 80 for s in stops]
    assert chi_square_uniform(pairs, 100).p_value > ALPHA


def test_outcomes_through_the_live_path() -> None:
    """Whole rounds on the live source: the base stops recorded in the event log are uniform,
    and the feature frequency agrees with the exact value."""
    model = load_model("default")
    source = SystemRandomSource()
    rounds = 20_000
    results = [play_round(model, 1, source) for _ in range(rounds)]
    first = [r.events[0]["stops"][0] for r in results]
    assert chi_square_uniform(first, 80).p_value > ALPHA
    wins = [int(r.total_win > 0) for r in results]
    assert runs_test(wins).p_value > ALPHA
    features = sum(r.feature is not None for r in results)
    p = 0.018609306640625 + 0.005831767578125  # exact Star Wild + Hold & Cash frequency
    z = (features - rounds * p) / math.sqrt(rounds * p * (1 - p))
    assert abs(z) < 3.9  # two-sided p ~ 1e-4
