"""A lean HTTP/1.1 client on asyncio streams for the wallet calls of the spin route: POST a
body, read one response, keep the connection for the next call.

Why not httpx here: its async connection pool looks at every pooled connection (a ``poll``
system call each) for every request, and each call cost the server 1.4 ms of CPU alone and
4 ms with 32 calls in flight (measured against the reference wallet), two calls per spin:
most of a spin's CPU in operator mode. This client takes an idle connection from a list or
opens one, so a call costs what its bytes cost. It reads ``Content-Length`` and chunked
bodies, and a body that ends with the connection; anything else is an error of the call,
which the protocol treats as a failed call (an unknown outcome, resolved by resending the same
``transaction_id``). The blocking client (the retrier, the balance) stays on httpx.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024
MAX_BODY = 1024 * 1024
"""A wallet reply is a small JSON object: anything larger is refused as broken."""


class HttpError(Exception):
    """The exchange failed: no connection, a timeout, or a response that is not HTTP/1.1."""


@dataclass(frozen=True, slots=True)
class Response:
    """One response: status, headers (names lower-case) and the raw body."""

    status: int
    headers: dict[str, str]
    content: bytes


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        self.writer.close()


class AsyncHttpClient:
    """POSTs to one origin (scheme, host, port) over kept-alive connections."""

    def __init__(self, base_url: str, timeout: float, max_idle: int = 64, *,
                 tls: ssl.SSLContext | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        # https: the given context (the wallet's CA file, a client certificate) or the
        # system's trust store; the certificate and the host name are verified either way
        self.ssl = (tls or ssl.create_default_context()) if parts.scheme == "https" else None
        self.authority = parts.netloc
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.max_idle = max_idle
        self._idle: list[_Connection] = []

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """POST ``body`` to ``prefix + path``; :class:`HttpError` if no whole response came
        within the timeout. A kept-alive connection that the server had closed meanwhile (it
        answers with the end of the stream before any byte of a response, or with a reset) is
        replaced by another, within the same timeout."""
        head = [f"POST {self.prefix}{path} HTTP/1.1", f"Host: {self.authority}",
                f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        try:
            async with asyncio.timeout(self.timeout):
                while self._idle:
                    connection = self._idle.pop()
                    try:
                        return await self._exchange(connection, request)
                    except _Stale:
                        continue  # closed by the server while idle: take another
                connection = _Connection(*await asyncio.open_connection(
                    self.host, self.port, ssl=self.ssl))
                try:
                    return await self._exchange(connection, request)
                except _Stale as stale:
                    raise HttpError(str(stale) or "the connection closed before a response") \
                        from None
        except TimeoutError:
            raise HttpError(f"Timeout: no response within {self.timeout} s") from None
        except OSError as error:
            raise HttpError(f"{type(error).__name__}: {error}") from None

    async def _exchange(self, connection: _Connection, request: bytes) -> Response:
        try:
            connection.writer.write(request)
            await connection.writer.drain()
            response, keep = await self._read(connection.reader)
        except _RESET as error:
            # a kept-alive connection the server closed as this call went out (its keep-alive
            # timeout; uvicorn's is 5 s): the request answered by a reset, not a response
            connection.close()
            raise _Stale(f"{type(error).__name__}: {error}") from None
        except BaseException:
            connection.close()
            raise
        if keep and len(self._idle) < self.max_idle:
            self._idle.append(connection)
        else:
            connection.close()
        return response

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> tuple[Response, bool]:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if not error.partial:
                raise _Stale from None
            raise HttpError("the response ended inside its head") from None
        except asyncio.LimitOverrunError:
            raise HttpError("the response head is too long") from None
        if len(head) > MAX_HEAD:
            raise HttpError("the response head is too long")
        lines = head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if version not in ("HTTP/1.1", "HTTP/1.0") or not code.isdigit():
            raise HttpError(f"not an HTTP/1.1 response: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, colon, value = line.partition(":")
                if not colon:
                    raise HttpError("a malformed response header")
                headers[name.strip().lower()] = value.strip()
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        try:
            if "chunked" in headers.get("transfer-encoding", "").lower():
                content = await _chunked(reader)
            elif "content-length" in headers:
                length = int(headers["content-length"])
                if not 0 <= length <= MAX_BODY:
                    raise HttpError(f"a body of {length} bytes")
                content = await reader.readexactly(length)
            else:
                content = await reader.read(MAX_BODY + 1)  # to the end of the connection
                keep = False
                while len(content) <= MAX_BODY and (more := await reader.read(MAX_BODY)):
                    content += more
                if len(content) > MAX_BODY:
                    raise HttpError("the body is too large")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as error:
            raise HttpError(f"a broken response body ({type(error).__name__})") from None
        return Response(int(code), headers, content), keep

    async def close(self) -> None:
        """Close the idle connections."""
        while self._idle:
            self._idle.pop().close()


class _Stale(Exception):
    """A kept-alive connection answered nothing, or a reset: the server had closed it. The
    call goes out again on another connection (the wallet protocol answers a repeated
    ``transaction_id`` with its first answer, so a request that did arrive moves nothing
    twice); on a new connection it is a failure of the call."""


_RESET = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    content = b""
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass  # trailers
            return content
        if len(content) + size > MAX_BODY:
            raise HttpError("the body is too large")
        content += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise HttpError("a broken chunk")


__all__ = ["AsyncHttpClient", "HttpError", "Response"]
