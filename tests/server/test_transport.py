"""The server's connections write each response in one piece: uvicorn writes a response's head
and body in two calls, which ``transport._CoalescingTransport`` sends as one write (one system
call, one TCP segment) at the end of the event loop's turn."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from starfever.server.transport import _CoalescingTransport
from tests.harness import run_coroutine


class _Recorder:
    """A transport that records what it is asked to do."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.done: list[str] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.done.append("close")
        self.closing = True

    def abort(self) -> None:
        self.done.append("abort")
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return f"extra {name}"



def _run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """``main()`` on a loop of its own (``tests.harness.run_coroutine``)."""
    run_coroutine(main())

def test_writes_in_one_turn_go_out_as_one_write_after_it() -> None:
    async def main() -> None:
        under = _Recorder()
        transport = _CoalescingTransport(under, asyncio.get_running_loop())
        transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n")
        transport.write(bytearray(b"body"))
        assert under.writes == []  # nothing yet: the turn is not over
        await asyncio.sleep(0)
        assert under.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nbody"]
        transport.write(b"next")
        await asyncio.sleep(0)
        assert under.writes[1:] == [b"next"]
        assert transport.get_extra_info("peername") == "extra peername"  # the rest: its own

    _run(main)


def test_close_sends_what_is_waiting_first_and_abort_drops_it() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        under = _Recorder()
        transport = _CoalescingTransport(under, loop)
        transport.write(b"last answer")
        transport.close()
        assert under.writes == [b"last answer"] and under.done == ["close"]
        await asyncio.sleep(0)
        assert under.writes == [b"last answer"]  # sent once
        dropped = _Recorder()
        transport = _CoalescingTransport(dropped, loop)
        transport.write(b"never sent")
        transport.abort()
        await asyncio.sleep(0)
        assert dropped.writes == [] and dropped.done == ["abort"]
        closed = _Recorder()
        transport = _CoalescingTransport(closed, loop)
        transport.write(b"too late")
        closed.closing = True  # the peer went away meanwhile
        await asyncio.sleep(0)
        assert closed.writes == []

    _run(main)
