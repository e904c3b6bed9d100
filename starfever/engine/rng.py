"""Sources of random draws. The engine asks only for ``randbelow(n)``: an integer in ``[0, n)``.

Live play uses :class:`SystemRandomSource`: bytes from the operating system's CSPRNG
(``os.urandom``), mapped to the range by rejection, never by a plain modulo. Every draw of a
round can be recorded and replayed, which is how game recall and the audit re-derive a round.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol


class RandomSource(Protocol):
    """Anything that can draw a uniform integer in ``[0, n)``."""

    def randbelow(self, n: int) -> int:
        """A uniform integer ``0 <= x < n``."""
        ...


class ReplayError(ValueError):
    """Recorded draws that do not fit the round being replayed."""


class SystemRandomSource:
    """The operating system's cryptographically secure generator: the only live-play source.

    ``randbelow(n)`` reads the fewest whole bytes that hold ``k = (n - 1).bit_length()`` bits,
    keeps the top ``k`` bits as an integer ``r`` and returns it if ``r < n``; otherwise it reads
    again. Every value below ``n`` therefore comes from exactly the same number of byte strings
    (``2 ** (8 * nbytes - k)``): the mapping is exactly uniform, which tests check exhaustively by
    feeding every byte string through ``read``.
    """

    live = True

    def __init__(self, read: Callable[[int], bytes] = os.urandom) -> None:
        self._read = read

    @property
    def reader(self) -> Callable[[int], bytes]:
        """The raw byte source (for statistical batteries such as dieharder)."""
        return self._read

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection sampling of CSPRNG bytes."""
        if type(n) is not int or n < 1:
            raise ValueError(f"randbelow needs a positive integer bound, got {n!r}")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        size = (bits + 7) // 8
        shift = 8 * size - bits
        while True:
            value = int.from_bytes(self._read(size), "big") >> shift
            if value < n:
                return value


class SeededSource:
    """A reproducible Mersenne Twister source for tests and examples. Not for live play."""

    live = False

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (``random.Random.randrange`` rejects, never folds)."""
        return self._random.randrange(n)


class RecordingSource:
    """Wraps a source and keeps every draw, in order, so the round can be replayed."""

    def __init__(self, source: RandomSource) -> None:
        self._source = source
        self.draws: list[int] = []

    @property
    def live(self) -> bool:
        """Whether the wrapped source may be used for live play."""
        return bool(getattr(self._source, "live", False))

    def randbelow(self, n: int) -> int:
        """Draw from the wrapped source and record the result."""
        value = self._source.randbelow(n)
        self.draws.append(value)
        return value


class ReplaySource:
    """Gives back recorded draws in order, checking each against the range asked for."""

    live = False

    def __init__(self, draws: Iterable[int]) -> None:
        self._draws = list(draws)
        self._next = 0

    def randbelow(self, n: int) -> int:
        """The next recorded draw; :class:`ReplayError` if none is left or it is out of range."""
        if self._next >= len(self._draws):
            raise ReplayError(f"the round asks for draw #{self._next + 1}, only "
                              f"{len(self._draws)} were recorded")
        value = self._draws[self._next]
        if not isinstance(value, int) or not 0 <= value < n:
            raise ReplayError(f"recorded draw #{self._next + 1} is {value!r}, "
                              f"outside [0, {n})")
        self._next += 1
        return value

    def check_used_up(self) -> None:
        """Raise :class:`ReplayError` if recorded draws were left over."""
        if self._next != len(self._draws):
            raise ReplayError(f"{len(self._draws) - self._next} recorded draws were not used")


def weighted_index(source: RandomSource, weights: Sequence[int]) -> int:
    """Pick an index with probability ``weights[i] / sum(weights)`` from one exact draw."""
    total = sum(weights)
    draw = source.randbelow(total)
    for index, weight in enumerate(weights):
        if draw < weight:
            return index
        draw -= weight
    raise AssertionError("unreachable: draw below the total weight")
