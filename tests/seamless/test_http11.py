"""The spin route's HTTP/1.1 client (``starfever.seamless.http11``) against a real TCP server
of 127.0.0.1 that answers with canned bytes: every way a response can end, kept-alive
connections reused and replaced, and the failures it must report as failures."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from starfever.seamless.http11 import AsyncHttpClient, HttpError
from tests.harness import run_coroutine
from tests.seamless.raw_http import read_request, reset

_own_loop = run_coroutine

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _run(handler: Handler, test: Callable[[AsyncHttpClient, list[int]], Awaitable[None]],
         timeout: float = 2.0) -> list[int]:
    """Serve ``handler`` on a free port and run ``test`` with a client of it; the number of
    connections the server saw."""
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = AsyncHttpClient(f"http://127.0.0.1:{port}/wallet", timeout)
        try:
            await test(client, connections)
        finally:
            await client.close()
            server.close()

    _own_loop(main())
    return connections


def _reply(body: bytes, extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\nX-Operator-Signature: ab\r\n" + extra + b"\r\n"
            + body)


def test_kept_alive_calls_share_one_connection_and_read_the_whole_reply() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                request = await read_request(reader)
            except asyncio.IncompleteReadError:
                return
            assert request.startswith(b"POST /wallet/debit HTTP/1.1\r\n")
            assert request.endswith(b'{"n": 1}') and b"X-Test: yes" in request
            writer.write(_reply(b'{"balance": 5}'))
            await writer.drain()

    async def test(client: AsyncHttpClient, _: list[int]) -> None:
        for _ in range(5):
            answer = await client.post("/debit", b'{"n": 1}', {"X-Test": "yes"})
            assert (answer.status, answer.content) == (200, b'{"balance": 5}')
            assert answer.headers["x-operator-signature"] == "ab"

    assert _run(handler, test) == [1]


def test_chunked_and_connection_close_bodies() -> None:
    replies = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5\r\n{\"bal\r\n9;x=y\r\nance\": 7}\r\n0\r\n\r\n",
               b"HTTP/1.0 402 Payment Required\r\n\r\n{\"error\": \"insufficient_funds\"}"]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(replies.pop(0))
        await writer.drain()
        if not replies:
            return  # closes: the body ends with the connection
        await read_request(reader)
        writer.write(replies.pop(0))

    async def test(client: AsyncHttpClient, _: list[int]) -> None:
        first = await client.post("/credit", b"{}", {})
        assert first.content == b'{"balance": 7}'
        second = await client.post("/credit", b"{}", {})
        assert (second.status, second.content) == (402, b'{"error": "insufficient_funds"}')

    _run(handler, test)


def test_a_connection_closed_while_idle_is_replaced() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(_reply(b"{}"))
        await writer.drain()  # and close: the client still holds it as idle

    async def test(client: AsyncHttpClient, _: list[int]) -> None:
        await client.post("/balance", b"{}", {})
        await asyncio.sleep(0.05)
        assert (await client.post("/balance", b"{}", {})).content == b"{}"

    assert _run(handler, test) == [1, 1]


def test_a_kept_alive_connection_reset_as_the_next_call_goes_out_is_replaced() -> None:
    """What a wallet's keep-alive timeout does to a call that reuses the connection at that
    moment (seen against uvicorn: about one call in a hundred reused at 1 s with a 1 s
    timeout was reset): the call goes out again on a new connection, not a failure."""
    served = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        served += 1
        first = served == 1
        await read_request(reader)
        writer.write(_reply(b'{"n": 1}'))
        await writer.drain()
        if first:  # the next request on this connection gets a reset
            await read_request(reader)
            reset(writer)

    async def test(client: AsyncHttpClient, _: list[int]) -> None:
        for _ in range(2):
            assert (await client.post("/debit", b"{}", {})).content == b'{"n": 1}'

    assert _run(handler, test) == [1, 1]


def test_a_reset_on_a_new_connection_is_an_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        reset(writer)

    async def test(client: AsyncHttpClient, _: list[int]) -> None:
        with pytest.raises(HttpError, match=r"ConnectionResetError|closed before a response"):
            await client.post("/debit", b"{}", {})

    _run(handler, test)


@pytest.mark.parametrize("reply", [
    b"", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
    b"SMTP ready\r\n\r\n", b"HTTP/1.1 200 OK\r\nbroken header\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    # a chunk-size line longer than the stream's limit, and a head that never ends
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 70_000 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"])
def test_a_broken_or_missing_response_is_an_error(reply: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(reply)
        await writer.drain()

    async def test(client: AsyncHttpClient, _: list[int]) -> None:
        with pytest.raises(HttpError):
            await client.post("/debit", b"{}", {})

    _run(handler, test)


def test_a_late_reply_is_a_timeout_and_no_server_is_an_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(1.0)

    async def test(client: AsyncHttpClient, _: list[int]) -> None:
        with pytest.raises(HttpError, match="Timeout"):
            await client.post("/debit", b"{}", {})

    _run(handler, test, timeout=0.2)

    async def nobody() -> None:
        client = AsyncHttpClient("http://127.0.0.1:9/", 1.0)  # the discard port: refused
        with pytest.raises(HttpError):
            await client.post("/debit", b"{}", {})

    _own_loop(nobody())
    with pytest.raises(ValueError):
        AsyncHttpClient("ftp://example.org/", 1.0)
