"""Pieces of the canned-bytes HTTP servers that test the wallet clients over real TCP
(``test_http11.py``, ``test_client.py``): read one request, close with a reset."""

from __future__ import annotations

import asyncio
import socket
import struct


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One whole request (head and ``Content-Length`` body)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    return head + await reader.readexactly(length)


def reset(writer: asyncio.StreamWriter) -> None:
    """Close the connection with a reset, as a server does that closes a connection with a
    request unread (SO_LINGER 0)."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
