"""Bounded password hashing per source (ADR 0052, ``services.hash_gate``): a flood from many
addresses queues or is refused at its own addresses and is served after everyone else, so it
never slows a real log-in by more than the hashes already running. The gate's decisions, in
process, with a clock the test moves (no thread needed: a ticket says whether it was granted)."""

from __future__ import annotations

import pytest

from starfever.server.services.errors import TooManyRequests, Unavailable
from starfever.server.services.hash_gate import GRANTED, RECENT_S, WAITING, HashGate


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _served(gate: HashGate, source: str, times: int) -> None:
    for _ in range(times):
        ticket = gate.enter(source)
        assert ticket.state == GRANTED
        gate.leave(ticket)


FLOOD = [f"198.51.100.{i}" for i in range(40)]


def test_a_flood_from_40_addresses_is_served_after_a_fresh_address() -> None:
    gate = HashGate(slots=1, per_source=2, max_waiting=64, clock=Clock())
    for address in FLOOD:
        _served(gate, address, 5)  # each flooding address has been served recently
    running = gate.enter(FLOOD[0])
    queued = [gate.enter(address) for address in FLOOD]  # 40 wait for the one slot
    real = gate.enter("203.0.113.7")  # the real player, last to arrive
    assert real.state == WAITING and gate.waiting == 41
    gate.leave(running)
    assert real.state == GRANTED  # next, not 41st
    assert all(t.state == WAITING for t in queued)
    gate.leave(real)
    served = [t for t in queued if t.state == GRANTED]
    # then the flood, the least served first: FLOOD[0] had one more, the one that ran
    assert len(served) == 1 and served[0] is queued[1]


def test_a_known_device_comes_before_every_address() -> None:
    gate = HashGate(slots=1, per_source=2, max_waiting=64, clock=Clock())
    running = gate.enter("203.0.113.7")
    fresh = gate.enter("192.0.2.1")  # never served: ranks high among addresses
    device = gate.enter("device:0f0f", trusted=True)
    gate.leave(running)
    assert device.state == GRANTED and fresh.state == WAITING


def test_an_address_has_at_most_its_share_running_or_waiting() -> None:
    gate = HashGate(slots=1, per_source=2, max_waiting=64, clock=Clock())
    first, second = gate.enter(FLOOD[0]), gate.enter(FLOOD[0])
    with pytest.raises(TooManyRequests) as refused:
        gate.enter(FLOOD[0])
    assert (refused.value.code, refused.value.retry_after) == ("too_many_concurrent", 1)
    assert gate.enter(FLOOD[1]).state == WAITING  # another address still queues
    gate.leave(second)  # it stopped waiting: the address has room again
    assert gate.enter(FLOOD[0]).state == WAITING
    gate.leave(first)


def test_a_full_queue_refuses_whoever_would_be_served_last() -> None:
    gate = HashGate(slots=1, per_source=2, max_waiting=3, clock=Clock())
    for address in FLOOD[:3]:
        _served(gate, address, 3)
    _served(gate, FLOOD[3], 9)
    running = gate.enter(FLOOD[4])
    waiting = [gate.enter(address) for address in FLOOD[:3]]
    with pytest.raises(Unavailable) as refused:  # full, and it would come last (9 served)
        gate.enter(FLOOD[3])
    assert (refused.value.status, refused.value.code, refused.value.retry_after) == \
        (503, "server_busy", 1)
    real = gate.enter("203.0.113.7")  # would come first: the last waiter makes room
    assert real.state == WAITING and gate.waiting == 3
    assert [t.state for t in waiting] == [WAITING, WAITING, "evicted"]
    assert not waiting[2].wait(0)  # its request answers 503 server_busy
    gate.leave(waiting[2])  # its leave() does nothing more
    gate.leave(running)
    assert real.state == GRANTED


def test_hashes_count_against_an_address_for_a_minute_only() -> None:
    clock = Clock()
    gate = HashGate(slots=1, per_source=2, max_waiting=8, clock=clock)
    _served(gate, FLOOD[0], 5)
    running = gate.enter(FLOOD[2])
    old = gate.enter(FLOOD[0])
    new = gate.enter(FLOOD[1])
    clock.now += RECENT_S + 1  # FLOOD[0]'s hashes no longer count: arrival decides
    gate.leave(running)
    assert old.state == GRANTED and new.state == WAITING


def test_a_request_that_gets_no_slot_in_time_is_503_and_leaves_the_gate() -> None:
    gate = HashGate(slots=1, per_source=1, max_waiting=8, clock=Clock())
    running = gate.enter(FLOOD[0])
    with pytest.raises(Unavailable, match="busy checking passwords"), \
            gate.held(FLOOD[1], False, wait_s=0.01):
        pass
    assert gate.waiting == 0
    gate.leave(running)
    with gate.held(FLOOD[1], False, wait_s=0.01):  # the address's share was given back
        assert gate.waiting == 0
