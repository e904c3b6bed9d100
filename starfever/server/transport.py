"""The HTTP protocol ``starfever serve`` runs: uvicorn's (httptools where installed), with
Nagle's algorithm off on every accepted TCP connection.

uvicorn with ``--workers N > 1`` binds the listening socket itself with ``proto`` 0, and asyncio
(and uvloop) only set ``TCP_NODELAY`` on accepted sockets that say ``IPPROTO_TCP``; so each
response written in two pieces (head, then body) waited for the client's delayed ACK: about
40 ms per keep-alive request on Linux (uvicorn issue #3149). Measured here before the fix: a
``/api/v1/health`` round trip took 44 ms with two workers and well under 1 ms with one.
"""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.auto import AutoHTTPProtocol


class NoDelayHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol that switches ``TCP_NODELAY`` on for its connection."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
