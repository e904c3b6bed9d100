"""The simulator's random streams: xoshiro256** inside the compiled kernel, seeded per chunk
from a spawned :class:`numpy.random.SeedSequence` child, with unbiased bounded draws.

Not for live play (live play uses the OS CSPRNG, see ``starfever.engine.rng``): the state of
this generator is 256 bits that anyone who knows the seed can rebuild, which is the point here.

- ``state`` is a ``uint64[4]`` array, advanced in place.
- :func:`below` maps the top 32 bits of one output to ``[0, n)`` with Lemire's multiply-shift
  and rejection of the biased low products, so every value is exactly equally likely.
- :func:`pick` draws a weighted index from integer weights with one :func:`below` of their sum,
  exactly as ``starfever.engine.rng.weighted_index`` does, so a round played by the kernel and by
  the engine from the same stream makes the same draws in the same order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

StreamState = npt.NDArray[np.uint64]
"""The 4 words of one xoshiro256** generator."""

_U32_MASK = np.uint64(0xFFFFFFFF)
_SHIFT_32 = np.uint64(32)
_TWO_32 = np.uint64(1 << 32)
MAX_BOUND = 1 << 32
""":func:`below` serves ranges ``1 <= n <= 2**32``."""


@njit(cache=True, inline="always")
def _rotl(x: np.uint64, k: np.uint64) -> np.uint64:
    return (x << k) | (x >> (np.uint64(64) - k))


@njit(cache=True, inline="always")
def next_u64(state: StreamState) -> np.uint64:
    """The next 64-bit output of xoshiro256** (Blackman & Vigna, 2018)."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    result = _rotl(s1 * np.uint64(5), np.uint64(7)) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, np.uint64(45))
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    return result


@njit(cache=True, inline="always")
def below(state: StreamState, n: int) -> int:
    """A uniform integer in ``[0, n)`` for ``1 <= n <= 2**32`` (Lemire 2019, with rejection)."""
    bound = np.uint64(n)
    product = (next_u64(state) >> _SHIFT_32) * bound
    low = product & _U32_MASK
    if low < bound:
        threshold = (_TWO_32 - bound) % bound  # 2**32 mod n: the biased low products
        while low < threshold:
            product = (next_u64(state) >> _SHIFT_32) * bound
            low = product & _U32_MASK
    return int(product >> _SHIFT_32)


@njit(cache=True, inline="always")
def pick(state: StreamState, weights: npt.NDArray[np.int64], total: int) -> int:
    """Index ``i`` with probability ``weights[i] / total`` (``total`` = the weights' sum)."""
    draw = below(state, total)
    for index in range(weights.shape[0]):
        if draw < weights[index]:
            return index
        draw -= weights[index]
    return -1  # unreachable while total is the weights' sum


@njit(cache=True)
def draw_below(state: StreamState, n: int) -> int:
    """:func:`below` callable from Python (for :class:`KernelSource`)."""
    return below(state, n)


def stream_state(seed_sequence: np.random.SeedSequence) -> StreamState:
    """A generator state from a seed sequence (never the all-zero state xoshiro cannot leave)."""
    state = np.asarray(seed_sequence.generate_state(4, np.uint64), dtype=np.uint64)
    if not state.any():
        state[0] = np.uint64(0x9E3779B97F4A7C15)
    return state


def chunk_states(seed: int, chunks: int) -> list[StreamState]:
    """One independent generator state per chunk: ``SeedSequence(seed).spawn(chunks)``."""
    return [stream_state(child) for child in np.random.SeedSequence(seed).spawn(chunks)]


class KernelSource:
    """The kernel's stream as an engine ``RandomSource``: the engine's :func:`play_round` fed by
    this source makes exactly the draws the kernel makes from the same state. For tests and
    audits of the simulator; never for live play."""

    live = False

    def __init__(self, state: StreamState) -> None:
        self.state = np.array(state, dtype=np.uint64)

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` from the kernel's generator."""
        if not 1 <= n <= MAX_BOUND:
            raise ValueError(f"range {n!r} is outside 1..2**32")
        return int(draw_below(self.state, n))
