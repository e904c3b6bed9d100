"""Half-sent requests and idle connections are closed (issue 13): 300 raw sockets that send
nothing, half a head, a head and half a body, or one request and then nothing."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from tests.harness import Databases, start_server

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

HALVES = (b"",
          b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n",
          b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 100\r\n\r\n{\"username\": ",
          b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
"""Nothing; half a head; a whole head and half a body; a whole request, then keep-alive."""


def _closed(sock: socket.socket) -> bool:
    """Whether the server has closed the connection (after any answer it sent)."""
    sock.settimeout(0.5)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_half_sent_requests_and_idle_connections_are_closed(databases: Databases,
                                                            tmp_path: Path) -> None:
    server = start_server(databases, "sqlite", tmp_path, {
        "STARFEVER_REQUEST_READ_TIMEOUT_SECONDS": "2", "STARFEVER_KEEP_ALIVE_SECONDS": "1"})
    sockets: list[socket.socket] = []
    try:
        for i in range(300):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            if HALVES[i % len(HALVES)]:
                sock.sendall(HALVES[i % len(HALVES)])
            sockets.append(sock)
        time.sleep(0.5)  # well inside the timeout: still open, and a whole request is served
        assert not any(_closed(s) for s in sockets[:2])
        assert server.call("GET", "/health").status_code == 200
        time.sleep(3.0)
        still_open = sum(1 for s in sockets if not _closed(s))
        assert still_open == 0
        assert server.call("GET", "/health").status_code == 200  # the server itself is fine
    finally:
        for sock in sockets:
            sock.close()
        server.stop()
