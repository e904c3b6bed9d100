"""A man in the middle on the wallet link: a real TCP proxy between Star Fever and the reference
wallet (plain HTTP, as an attacker on the network sees it). It forwards every call and records
each signed reply as it came from the wallet, byte for byte; told to ``replay`` a method, it
stops forwarding that method's calls and answers each with the last reply it recorded for it
(a genuine reply, correctly signed by the operator, to an earlier request)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from starfever.seamless.http11 import AsyncHttpClient, Response
from tests.seamless.raw_http import read_request


def _raw(response: Response) -> bytes:
    """The response as bytes on the wire (its signature header kept as it came)."""
    head = [f"HTTP/1.1 {response.status} X", f"Content-Length: {len(response.content)}"]
    head += [f"{name}: {value}" for name, value in response.headers.items()
             if name not in ("content-length", "transfer-encoding", "connection")]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.content


class ManInTheMiddle:
    """The proxy, on a free port of 127.0.0.1 in a thread of its own (:func:`mitm`)."""

    def __init__(self, wallet_url: str) -> None:
        parts = urlsplit(wallet_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.recorded: dict[str, bytes] = {}
        """The last genuine reply to each method (``debit``, ``credit``, ...)."""
        self.replaying: set[str] = set()
        self.replayed: Counter[str] = Counter()
        """How many calls of each method got a recorded reply instead of the wallet's."""
        self.requests: list[tuple[str, dict[str, Any]]] = []
        """Every call that came through: its method and its JSON body."""
        self.url = ""

    def replay(self, *methods: str) -> None:
        """From now on, answer these methods' calls with recorded replies (none forwarded)."""
        missing = [m for m in methods if m not in self.recorded]
        if missing:
            raise AssertionError(f"no reply recorded yet for {missing}")
        self.replaying = set(methods)

    def honest(self) -> None:
        """Forward every call again."""
        self.replaying = set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await read_request(reader)
                method = request.split(b" ", 2)[1].decode().rsplit("/", 1)[-1]
                self.requests.append((method, json.loads(request.split(b"\r\n\r\n", 1)[1])))
                if method in self.replaying:
                    self.replayed[method] += 1
                    writer.write(self.recorded[method])
                else:
                    response = await self._forward(request)
                    raw = _raw(response)
                    if response.status == 200:
                        self.recorded[method] = raw
                    writer.write(raw)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _forward(self, request: bytes) -> Response:
        reader, writer = await asyncio.open_connection(*self.upstream)
        try:
            writer.write(request)
            await writer.drain()
            response, _ = await AsyncHttpClient._read(reader)  # the client's own parser
            return response
        finally:
            writer.close()


@contextmanager
def mitm(wallet_url: str) -> Iterator[ManInTheMiddle]:
    """A :class:`ManInTheMiddle` in front of ``wallet_url`` for the ``with`` block."""
    proxy = ManInTheMiddle(wallet_url)
    ready = threading.Event()
    loop_box: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def main() -> None:
        server = await asyncio.start_server(proxy._serve, "127.0.0.1", 0)
        proxy.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        stop = asyncio.Event()
        loop_box.append((asyncio.get_running_loop(), stop))
        ready.set()
        await stop.wait()
        server.close()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the proxy did not start")
    try:
        yield proxy
    finally:
        loop, stop = loop_box[0]
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)


__all__ = ["ManInTheMiddle", "mitm"]
