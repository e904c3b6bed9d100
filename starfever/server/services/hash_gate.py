"""Bounded password hashing per source (ADR 0052): a flood of log-ins or registrations queues
or is refused at its own addresses and never slows everyone.

An argon2 hash or check takes 64 MiB and tens of milliseconds of a core, so a process runs only
``max_concurrent_hashes`` at once. Before this gate, everyone else waited in one queue behind
a flood: 40 addresses flooding made a real log-in take 3.9 s instead of 0.12 s. Now:

- a source (an address; a known device counts as a source of its own) has at most
  ``max_hashes_per_address`` checks running or waiting; one more is ``429
  too_many_concurrent`` at once, with ``Retry-After: 1``;
- at most ``max_hash_waiters`` requests wait; a free slot goes to the waiter that comes
  first by (a known device before anything else, then the fewest hashes its source was given
  in the last :data:`RECENT_S` seconds, then arrival): an address that has just been served
  many times waits behind one that has not, so a flood from 40 addresses serves itself last;
- when the queue is full, a newcomer that would come before the last waiter takes its place
  (that waiter is answered ``503 server_busy``); one that would not is answered so itself.

The gate is per process (each worker has its own slots); measured durations (how recent a
hash was, how long to wait) read ``time.monotonic``, not the settable clock: they count the
real seconds a process works (ADR 0041).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from starfever.server.services.errors import TooManyRequests, Unavailable

RECENT_S = 60.0
"""How long a hash given to a source counts against it when the next slot is handed out."""
MAX_SOURCES = 10_000
"""Sources whose recent hashes are remembered at most (the oldest are forgotten first)."""
WAITING, GRANTED, EVICTED = "waiting", "granted", "evicted"


@dataclass(eq=False)
class Ticket:
    """One request's place at the gate."""

    source: str
    trusted: bool
    seq: int
    state: str = WAITING
    ready: threading.Event = field(default_factory=threading.Event)

    def wait(self, timeout: float) -> bool:
        """Wait until granted or evicted; whether it was granted."""
        self.ready.wait(timeout)
        return self.state == GRANTED


class HashGate:
    """The slots, the per-source bound and the fair queue described above."""

    def __init__(self, slots: int, per_source: int, max_waiting: int, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.slots = slots
        self.per_source = per_source
        self.max_waiting = max_waiting
        self._clock = clock
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: list[Ticket] = []
        self._in_gate: dict[str, int] = {}
        self._recent: dict[str, deque[float]] = {}
        self._seq = itertools.count()

    @property
    def waiting(self) -> int:
        """How many requests wait for a slot now."""
        with self._lock:
            return len(self._waiting)

    def _uses(self, source: str, now: float) -> int:
        uses = self._recent.get(source)
        if uses is None:
            return 0
        while uses and uses[0] <= now - RECENT_S:
            uses.popleft()
        if not uses:
            del self._recent[source]
            return 0
        return len(uses)

    def _rank(self, ticket: Ticket, now: float) -> tuple[int, int, int]:
        return (0 if ticket.trusted else 1, self._uses(ticket.source, now), ticket.seq)

    def _grant(self, ticket: Ticket, now: float) -> None:
        ticket.state = GRANTED
        uses = self._recent.pop(ticket.source, None) or deque()
        uses.append(now)
        self._recent[ticket.source] = uses  # re-inserted: the newest source last
        if len(self._recent) > MAX_SOURCES:
            del self._recent[next(iter(self._recent))]
        ticket.ready.set()

    def enter(self, source: str, trusted: bool = False) -> Ticket:
        """A place at the gate: granted at once when a slot is free and nobody waits, else
        waiting (:meth:`Ticket.wait`); refused as described in the module's docstring."""
        with self._lock:
            now = self._clock()
            if self._in_gate.get(source, 0) >= self.per_source:
                raise TooManyRequests("a password check from this address is already under way; "
                                      "try again in 1 s", retry_after=1,
                                      code="too_many_concurrent")
            ticket = Ticket(source, trusted, next(self._seq))
            if self._free > 0 and not self._waiting:
                self._free -= 1
                self._grant(ticket, now)
            else:
                if len(self._waiting) >= self.max_waiting:
                    last = max(self._waiting, key=lambda t: self._rank(t, now))
                    if self._rank(last, now) < self._rank(ticket, now):
                        raise _busy()
                    self._waiting.remove(last)
                    self._leave_source(last.source)
                    last.state = EVICTED
                    last.ready.set()
                self._waiting.append(ticket)
            self._in_gate[source] = self._in_gate.get(source, 0) + 1
            return ticket

    def leave(self, ticket: Ticket) -> None:
        """The ticket's request is done with the gate (its hash done, or it stopped
        waiting): a held slot goes to the first waiter."""
        with self._lock:
            if ticket.state == EVICTED:
                return  # its source was let go when it was evicted
            self._leave_source(ticket.source)
            if ticket.state == WAITING:
                self._waiting.remove(ticket)
                ticket.state = EVICTED
                return
            ticket.state = EVICTED  # a second leave() does nothing
            if not self._waiting:
                self._free += 1
                return
            now = self._clock()
            first = min(self._waiting, key=lambda t: self._rank(t, now))
            self._waiting.remove(first)
            self._grant(first, now)

    def _leave_source(self, source: str) -> None:
        left = self._in_gate.get(source, 0) - 1
        if left > 0:
            self._in_gate[source] = left
        else:
            self._in_gate.pop(source, None)

    @contextmanager
    def held(self, source: str, trusted: bool, wait_s: float) -> Iterator[None]:
        """Hold a slot for one hash (``503 server_busy`` if none comes within ``wait_s``)."""
        ticket = self.enter(source, trusted)
        try:
            if not ticket.wait(wait_s):
                raise _busy()
            yield
        finally:
            self.leave(ticket)


def _busy() -> Unavailable:
    return Unavailable("the server is busy checking passwords; try again in 1 s",
                       code="server_busy", retry_after=1)
