"""The simulator's generator: known answers, Lemire's bounded draws, independent chunk streams."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from starfever.sim.rng import (
    KernelSource,
    chunk_state,
    chunk_states,
    draw_below,
    draw_spin,
    spin_threshold,
    stream_state,
)

MASK = (1 << 64) - 1


class ReferenceXoshiro:
    """xoshiro256** in plain Python, from the authors' C reference."""

    def __init__(self, state: list[int]) -> None:
        self.s = list(state)

    def next(self) -> int:
        s = self.s

        def rotl(x: int, k: int) -> int:
            return ((x << k) | (x >> (64 - k))) & MASK

        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n: int) -> int:
        """Lemire's method on the top 32 bits, rejecting the 2**32 mod n biased products."""
        m = (self.next() >> 32) * n
        if (m & 0xFFFFFFFF) < n:
            threshold = (1 << 32) % n
            while (m & 0xFFFFFFFF) < threshold:
                m = (self.next() >> 32) * n
        return m >> 32


def test_known_answer_from_state_1_2_3_4() -> None:
    source = KernelSource(np.array([1, 2, 3, 4], dtype=np.uint64))
    reference = ReferenceXoshiro([1, 2, 3, 4])
    outputs = [reference.next() for _ in range(4)]
    assert outputs[:3] == [11520, 0, 1509978240]
    assert outputs[3] == 1215971899390074240
    # the kernel's bounded draw at n = 2**32 returns the top 32 bits unchanged
    assert [source.randbelow(1 << 32) for _ in range(4)] == [x >> 32 for x in outputs]


@pytest.mark.parametrize("n", [1, 2, 3, 40, 80, 22106, 3 << 30, (1 << 32) - 1])
def test_bounded_draws_match_the_reference(n: int) -> None:
    state = stream_state(np.random.SeedSequence(12345))
    reference = ReferenceXoshiro([int(x) for x in state])
    kernel_state = state.copy()
    for _ in range(2000):
        assert draw_below(kernel_state, n) == reference.below(n)


def test_rejection_removes_the_bias_of_a_large_range() -> None:
    # n = 3 * 2**30: a plain multiply-shift would favour some values; with rejection the three
    # thirds of the range are equally likely
    source = KernelSource(stream_state(np.random.SeedSequence(7)))
    n = 3 << 30
    thirds = Counter(source.randbelow(n) // (1 << 30) for _ in range(30_000))
    assert all(9_500 < thirds[k] < 10_500 for k in range(3))


def test_chunk_streams_are_spawned_children_and_distinct() -> None:
    states = chunk_states(99, 64)
    assert len({tuple(int(x) for x in s) for s in states}) == 64
    children = np.random.SeedSequence(99).spawn(3)
    assert np.array_equal(states[2], children[2].generate_state(4, np.uint64))
    assert np.array_equal(chunk_states(99, 64)[5], states[5])


def test_kernel_source_refuses_ranges_it_cannot_draw() -> None:
    source = KernelSource(np.ones(4, dtype=np.uint64))
    with pytest.raises(ValueError, match="outside"):
        source.randbelow(0)
    with pytest.raises(ValueError, match="outside"):
        source.randbelow((1 << 32) + 1)


def _reference_spin(reference: ReferenceXoshiro, lengths: tuple[int, ...]) -> list[int]:
    """Lemire's draw below the product, split into mixed-radix digits (reel 0 first)."""
    x = reference.below(math.prod(lengths))
    digits = []
    for n in reversed(lengths):
        x, digit = divmod(x, n)
        digits.append(digit)
    return digits[::-1]


@pytest.mark.parametrize("lengths", [(80, 80, 80, 40, 40), (10, 9, 8, 7, 6), (1, 1, 1, 1, 1),
                                     (256, 256, 256, 256, 1), (255, 255, 255, 255, 1)])
def test_one_draw_per_spin_is_the_mixed_radix_digits_of_one_bounded_draw(
        lengths: tuple[int, ...]) -> None:
    state = stream_state(np.random.SeedSequence(2024))
    reference = ReferenceXoshiro([int(x) for x in state])
    array = np.array(lengths, dtype=np.int64)
    threshold = spin_threshold(lengths)
    for _ in range(3000):
        assert list(draw_spin(state, array, threshold)) == _reference_spin(reference, lengths)


def test_spin_stops_are_uniform_per_reel_and_jointly() -> None:
    lengths = (3, 2, 2, 1, 5)
    state = stream_state(np.random.SeedSequence(8))
    array = np.array(lengths, dtype=np.int64)
    seen = Counter(tuple(draw_spin(state, array, spin_threshold(lengths)))
                   for _ in range(60_000))
    assert len(seen) == 60
    assert all(850 < count < 1150 for count in seen.values())


def test_product_of_strip_lengths_must_fit_one_draw() -> None:
    assert spin_threshold((80, 80, 80, 40, 40)) == (1 << 32) % 819_200_000
    with pytest.raises(ValueError, match="at most 2\\*\\*32"):
        spin_threshold((100, 100, 100, 100, 100))


def test_kernel_source_hands_the_engine_the_spin_digits_then_plain_draws() -> None:
    lengths = (80, 80, 80, 40, 40)
    state = stream_state(np.random.SeedSequence(9))
    reference = ReferenceXoshiro([int(x) for x in state])
    source = KernelSource(state, spin_lengths=lengths)
    source.start_round()
    assert [source.randbelow(n) for n in lengths] == _reference_spin(reference, lengths)
    assert source.randbelow(31) == reference.below(31)  # e.g. a Star Wild respin reel
    source.start_round()
    with pytest.raises(ValueError, match="reel 0"):
        source.randbelow(31)
    with pytest.raises(ValueError, match="without spin_lengths"):
        KernelSource(state).start_round()


def test_a_chunk_state_is_its_spawned_child() -> None:
    states = chunk_states(77, 40)
    assert all(np.array_equal(chunk_state(77, i), states[i]) for i in (0, 1, 17, 39))
