"""The HTTP protocol ``starfever serve`` runs: uvicorn's (httptools where installed), with
Nagle's algorithm off on every accepted TCP connection, and a read timeout: a request must
arrive whole within ``STARFEVER_REQUEST_READ_TIMEOUT_SECONDS`` of the connection opening (or of
the previous response), or the connection is closed. uvicorn itself closes only idle
keep-alive connections (``timeout_keep_alive``): a connection that never sent a byte, or sent
half a head or half a body, stayed open for good (300 of them, all open after 20 s).

uvicorn with ``--workers N > 1`` binds the listening socket itself with ``proto`` 0, and asyncio
(and uvloop) only set ``TCP_NODELAY`` on accepted sockets that say ``IPPROTO_TCP``; so each
response written in two pieces (head, then body) waited for the client's delayed ACK: about
40 ms per keep-alive request on Linux (uvicorn issue #3149). Measured here before the fix: a
``/api/v1/health`` round trip took 44 ms with two workers and well under 1 ms with one.

With Nagle off, the head and the body then went out as two system calls and two segments,
which the client read in two reads; the connection's writes within one turn of the event loop
now go out as one (:class:`_CoalescingTransport`, ADR 0027).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from starfever.server.settings import get_settings


class _CoalescingTransport:
    """A connection's transport whose writes within one turn of the event loop go out as one:
    uvicorn writes a response's head and its body in two calls, and with Nagle's algorithm off
    each call was a system call and a TCP segment of its own (and a read of its own for the
    client). Everything else is the transport's own."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol with ``TCP_NODELAY`` on and a response's head and body written
    as one (:class:`_CoalescingTransport`); the reference operator wallet runs it as it is."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(_CoalescingTransport(transport, asyncio.get_running_loop()))


class NoDelayHTTPProtocol(CoalescingHTTPProtocol):
    """:class:`CoalescingHTTPProtocol` with the server's read timeout."""

    _read_timer: asyncio.TimerHandle | None = None
    _timed_cycle: Any = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm_read_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        cycle = self.cycle
        if self._read_timer is not None and cycle is not None and \
                cycle is not self._timed_cycle and not cycle.more_body:
            self._cancel_read_timer()  # this request has arrived whole

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_read_timer()  # the next request, too, must arrive in time

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_read_timer()
        super().connection_lost(exc)

    def _arm_read_timer(self) -> None:
        self._cancel_read_timer()
        self._timed_cycle = self.cycle
        self._read_timer = self.loop.call_later(get_settings().request_read_timeout_seconds,
                                                self._read_timed_out)

    def _cancel_read_timer(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _read_timed_out(self) -> None:
        self._read_timer = None
        if not self.transport.is_closing():
            self.transport.close()
