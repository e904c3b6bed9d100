"""The blocking wallet client (``starfever.seamless.client.WalletClient``: the retrier, the
balance, the readiness probe) against a real TCP server of 127.0.0.1 that signs its replies:
a kept-alive connection the operator resets as a call goes out is not a failed call, a
timeout is not sent twice."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import pytest

from starfever.seamless import protocol as p
from starfever.seamless.client import WalletClient, WalletEndpoint, WalletUnavailable
from tests.seamless.raw_http import read_request, reset

SECRET = "s" * 40
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


def _signed(body: dict[str, object], request: bytes) -> bytes:
    """A signed ``200`` with ``body``, echoing the ``request_id`` of ``request`` (protocol v2)."""
    sent = json.loads(request.split(b"\r\n\r\n", 1)[1])
    raw = json.dumps({**body, "request_id": sent["request_id"]}).encode()
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(raw)).encode() + b"\r\n" + p.OPERATOR_SIGNATURE.encode() + b": "
            + p.sign(SECRET, raw).encode() + b"\r\n\r\n" + raw)


@contextmanager
def _serving(handler: Handler) -> Iterator[tuple[str, list[int]]]:
    """Serve ``handler`` (given the connection's number, from 1) on a free port in a thread
    of its own; the wallet URL and the list of connections seen."""
    connections: list[int] = []
    ready = threading.Event()
    found: dict[str, object] = {}

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(len(connections) + 1)
        try:
            await handler(reader, writer, connections[-1])
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        stop = asyncio.Event()
        found.update(port=server.sockets[0].getsockname()[1], stop=stop,
                     loop=asyncio.get_running_loop())
        ready.set()
        await stop.wait()
        server.close()
        await server.wait_closed()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    ready.wait(5)
    try:
        yield f"http://127.0.0.1:{found['port']}", connections
    finally:
        found["loop"].call_soon_threadsafe(found["stop"].set)  # type: ignore[attr-defined]
        thread.join(5)


def test_a_kept_alive_connection_reset_as_the_next_call_goes_out_is_not_a_failure() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      number: int) -> None:
        while True:
            request = await read_request(reader)
            if number == 1 and served:  # the first connection's second request: a reset
                reset(writer)
                return
            served.append(number)
            writer.write(_signed({"balance": 7}, request))
            await writer.drain()

    served: list[int] = []
    with _serving(handler) as (url, connections):
        client = WalletClient(WalletEndpoint(url, SECRET, 2.0))
        try:
            for _ in range(2):
                assert client.call(p.BALANCE, {"player_id": "p1"}).balance == 7
        finally:
            client.close()
    assert connections == [1, 2] and served == [1, 2]


def test_a_timeout_is_not_sent_again() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      number: int) -> None:
        await read_request(reader)
        await asyncio.sleep(1.0)

    with _serving(handler) as (url, connections):
        client = WalletClient(WalletEndpoint(url, SECRET, 0.2))
        try:
            with pytest.raises(WalletUnavailable, match="Timeout"):
                client.call(p.BALANCE, {"player_id": "p1"})
        finally:
            client.close()
    assert connections == [1]
