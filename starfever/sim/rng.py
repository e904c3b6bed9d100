"""The simulator's random streams: xoshiro256** inside the compiled kernel, seeded per chunk
from a spawned :class:`numpy.random.SeedSequence` child, with unbiased bounded draws.

Not for live play (live play uses the OS CSPRNG, see ``starfever.engine.rng``): the state of
this generator is 256 bits that anyone who knows the seed can rebuild, which is the point here.

- ``state`` is a ``uint64[4]`` array, advanced in place.
- :func:`below` maps the top 32 bits of one output to ``[0, n)`` with Lemire's multiply-shift
  and rejection of the biased low products, so every value is exactly equally likely.
- :func:`spin_stops` draws all five reel stops of a spin from **one** bounded draw below the
  product of the strip lengths (80^3 x 40^2 < 2^32 for the shipped models), read as mixed-radix
  digits by a chain of 32 x 32-bit multiplications (no division): one generator output per
  spin, still exactly uniform (the rejection is Lemire's, on the product).
- A weighted pick is one :func:`below` of the weights' sum, read as
  ``starfever.engine.rng.weighted_index`` reads it (``kernel._index``), so a round played by the
  kernel and by the engine from the same stream makes the same draws in the same order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from starfever.engine.model import ModelError

StreamState = npt.NDArray[np.uint64]
"""The 4 words of one xoshiro256** generator."""

# Draws are returned as np.int64, not uint64: numba compares uint64 with int64 weights in
# floating point, which is slow (and typed as ``int`` here for the callers' sake).
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
    return np.int64(product >> _SHIFT_32)  # type: ignore[return-value]


@njit(cache=True, inline="always")
def next_local(s0: np.uint64, s1: np.uint64, s2: np.uint64,
               s3: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """:func:`next_u64` on a state held in four locals: (output, new state words). Hot loops
    keep the state in registers this way even when they pass the array to rare, non-inlined
    feature code (which would otherwise force a store and a reload on every draw)."""
    result = _rotl(s1 * np.uint64(5), np.uint64(7)) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, np.uint64(45))
    return result, s0, s1, s2, s3


@njit(cache=True, inline="always")
def below_local(s0: np.uint64, s1: np.uint64, s2: np.uint64, s3: np.uint64, n: int
                ) -> tuple[int, np.uint64, np.uint64, np.uint64, np.uint64]:
    """:func:`below` on a state held in locals: (value, new state words)."""
    bound = np.uint64(n)
    out, s0, s1, s2, s3 = next_local(s0, s1, s2, s3)
    product = (out >> _SHIFT_32) * bound
    low = product & _U32_MASK
    if low < bound:
        threshold = (_TWO_32 - bound) % bound
        while low < threshold:
            out, s0, s1, s2, s3 = next_local(s0, s1, s2, s3)
            product = (out >> _SHIFT_32) * bound
            low = product & _U32_MASK
    return np.int64(product >> _SHIFT_32), s0, s1, s2, s3  # type: ignore[return-value]


Radix = tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]
"""The five strip lengths and the rejection threshold of :func:`spin_stops`, as unsigned scalars."""


@njit(cache=True, inline="always")
def spin_radix(lengths: npt.NDArray[np.int64], threshold: int) -> Radix:
    """:data:`Radix` from the lengths array, read once before a hot loop: read inside it, every
    store to an int64 array in the loop would make the compiler load them again (it cannot
    tell the arrays apart)."""
    return (np.uint64(lengths[0]), np.uint64(lengths[1]), np.uint64(lengths[2]),
            np.uint64(lengths[3]), np.uint64(lengths[4]), np.uint64(threshold))


@njit(cache=True, inline="always")
def spin_stops_local(s0: np.uint64, s1: np.uint64, s2: np.uint64, s3: np.uint64, radix: Radix
                     ) -> tuple[tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64],
                                tuple[np.uint64, np.uint64, np.uint64, np.uint64]]:
    """:func:`spin_stops` on a state held in locals: (stops, new state words).

    The stops stay unsigned: tables indexed by unsigned integers compile without numba's
    negative-index wraparound, which costs two instructions and a register per load."""
    n0, n1, n2, n3, n4, limit = radix
    while True:
        out, s0, s1, s2, s3 = next_local(s0, s1, s2, s3)
        r = out >> _SHIFT_32
        m = r * n0
        h0, low = m >> _SHIFT_32, m & _U32_MASK
        m = low * n1
        h1, low = m >> _SHIFT_32, m & _U32_MASK
        m = low * n2
        h2, low = m >> _SHIFT_32, m & _U32_MASK
        m = low * n3
        h3, low = m >> _SHIFT_32, m & _U32_MASK
        m = low * n4
        if (m & _U32_MASK) >= limit:
            return (h0, h1, h2, h3, m >> _SHIFT_32), (s0, s1, s2, s3)


@njit(cache=True, inline="always")
def spin_stops(state: StreamState, lengths: npt.NDArray[np.int64],
               threshold: int) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]:
    """Five stops, uniform on ``[0, lengths[r])`` each, from one draw below their product.

    ``x = floor(r * N / 2**32)`` for the top 32 bits ``r`` of one output and ``N`` the product
    (Lemire's draw below ``N``, rejecting the ``threshold = 2**32 mod N`` biased low products);
    its mixed-radix digits, reel 0 most significant, come out of the same product one
    multiplication at a time: ``r * n0 = h0 * 2**32 + l0``, ``l0 * n1 = h1 * 2**32 + l1``, ...
    so ``x = (((h0 n1 + h1) n2 + h2) n3 + h3) n4 + h4`` and the last low word is ``r N mod 2**32``.
    """
    stops, words = spin_stops_local(state[0], state[1], state[2], state[3],
                                    spin_radix(lengths, threshold))
    state[0], state[1], state[2], state[3] = words
    return stops


def spin_threshold(lengths: tuple[int, ...] | npt.NDArray[np.int64]) -> int:
    """``2**32 mod N`` for the product ``N`` of five strip lengths (``N <= 2**32``): the low
    products :func:`spin_stops` rejects. Raises ``ModelError`` if the product is too large."""
    product = 1
    for n in lengths:
        product *= int(n)
    if len(lengths) != 5 or not 1 <= product <= MAX_BOUND:
        raise ModelError(f"the product of the strip lengths {tuple(int(n) for n in lengths)!r} "
                         "must be at most 2**32 for one draw per spin")
    return MAX_BOUND % product


@njit(cache=True)
def draw_spin(state: StreamState, lengths: npt.NDArray[np.int64],
              threshold: int) -> tuple[int, int, int, int, int]:
    """:func:`spin_stops` callable from Python (for :class:`KernelSource`)."""
    s0, s1, s2, s3, s4 = spin_stops(state, lengths, threshold)
    return (np.int64(s0), np.int64(s1), np.int64(s2),  # type: ignore[return-value]
            np.int64(s3), np.int64(s4))


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


def chunk_state(seed: int, index: int) -> StreamState:
    """The state of chunk ``index`` alone: the ``index``-th child that
    ``SeedSequence(seed).spawn`` would make (same spawn key), so a worker on any machine can
    build its own chunks' streams from (seed, index)."""
    return stream_state(np.random.SeedSequence(seed, spawn_key=(index,)))


class KernelSource:
    """The kernel's stream as an engine ``RandomSource``: the engine's :func:`play_round` fed by
    this source makes exactly the draws the kernel makes from the same state. For tests and
    audits of the simulator; never for live play.

    The kernel draws a paid spin's five stops at once (:func:`spin_stops`). Call
    :meth:`start_round` before each round: the engine's next five ``randbelow`` calls (one per
    base reel, ranges ``spin_lengths``) then get the digits of that one draw; every other call is
    one :func:`below` draw, as in the kernel."""

    live = False

    def __init__(self, state: StreamState, spin_lengths: tuple[int, ...] = ()) -> None:
        self.state = np.array(state, dtype=np.uint64)
        self.spin_lengths = tuple(int(n) for n in spin_lengths)
        self._lengths = np.array(self.spin_lengths, dtype=np.int64)
        self._threshold = spin_threshold(self.spin_lengths) if self.spin_lengths else 0
        self._round_due = False
        self._pending: list[int] = []

    def start_round(self) -> None:
        """The next five draws are a paid spin's stops, decoded from one combined draw."""
        if not self.spin_lengths:
            raise ValueError("this source was made without spin_lengths")
        self._round_due = True
        self._pending = []

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` from the kernel's generator."""
        if not 1 <= n <= MAX_BOUND:
            raise ValueError(f"range {n!r} is outside 1..2**32")
        if self._round_due:
            self._round_due = False
            self._pending = [int(x) for x in draw_spin(self.state, self._lengths,
                                                       self._threshold)]
        if self._pending:
            reel = len(self.spin_lengths) - len(self._pending)
            if n != self.spin_lengths[reel]:
                raise ValueError(f"the engine asks for a draw below {n!r} where the kernel "
                                 f"draws the stop of reel {reel} (length "
                                 f"{self.spin_lengths[reel]})")
            return self._pending.pop(0)
        return int(draw_below(self.state, n))
