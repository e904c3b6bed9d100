"""The simulator's generator: known answers, Lemire's bounded draws, independent chunk streams."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from starfever.sim.rng import KernelSource, chunk_states, draw_below, stream_state

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
