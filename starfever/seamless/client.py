"""Star Fever's side of the wallet protocol: one signed call, its reply checked.

A reply counts only when it is ``200`` or ``4xx``, JSON, signed by the operator, and echoes
the ``request_id`` (and ``transaction_id``) of the very request it answers (protocol version 2);
anything else (a timeout, a refused connection, a 5xx, a missing or wrong signature, a body that
is not the method's reply, a signed reply to another request played back by a man in the
middle) is :class:`WalletUnavailable`, whose outcome on the operator's side is unknown. A
``4xx`` is :class:`WalletRefused`: final, with the operator's error code.

An ``https://`` wallet URL is verified against the system's trust store or a configured CA
file, optionally presenting a client certificate (mutual TLS): :meth:`WalletEndpoint.tls`.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from starfever.seamless import protocol as p
from starfever.seamless.http11 import AsyncHttpClient, HttpError


class WalletUnavailable(Exception):
    """No valid answer came: the call may or may not have been applied."""


class WalletRefused(Exception):
    """The operator refused the call (a ``4xx``): final."""

    def __init__(self, code: str, message: str, status: int) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class WalletReply:
    """A valid ``200`` reply."""

    balance: int
    operator_transaction_id: str | None = None


@dataclass(frozen=True, slots=True)
class WalletEndpoint:
    """Where and how to call: the operator's URL, the shared secret, the timeout, and for an
    ``https://`` URL the CA file to verify the wallet's certificate against (``None``: the
    system's trust store) and the client certificate and key of mutual TLS."""

    url: str
    secret: str
    timeout: float = 5.0
    ca_file: str | None = None
    client_cert: str | None = None
    client_key: str | None = None

    def tls(self) -> ssl.SSLContext | None:
        """The TLS context of an ``https://`` URL (``None`` for ``http://``): the certificate
        and the host name are always verified; ``ssl.SSLError`` or ``OSError`` for a CA file
        or client certificate that cannot be loaded."""
        if not self.url.startswith("https://"):
            return None
        context = ssl.create_default_context(cafile=self.ca_file)
        if self.client_cert is not None:
            context.load_cert_chain(self.client_cert, self.client_key)
        return context

    def request(self, method: str, fields: Mapping[str, Any], now: datetime | None = None,
                ) -> tuple[str, bytes, dict[str, str], dict[str, Any]]:
        """The URL, body and headers of one signed call, and the fields it sent: ``fields``
        with a fresh ``request_id`` (one of their own is kept: a test's)."""
        sent = {"request_id": p.new_request_id(), **fields}
        body = p.encode(sent, now or datetime.now(UTC))
        headers = {"Content-Type": "application/json",
                   p.STARFEVER_SIGNATURE: p.sign(self.secret, body)}
        return f"{self.url.rstrip('/')}/{method}", body, headers, sent

    def reply(self, method: str, response: httpx.Response,
              request: Mapping[str, Any]) -> WalletReply:
        """Check one response to ``request`` (the fields sent); :class:`WalletRefused` or
        :class:`WalletUnavailable` if it is not a valid ``200``."""
        return self.check(method, response.status_code,
                          response.headers.get(p.OPERATOR_SIGNATURE), response.content, request)

    def check(self, method: str, status: int, signature: str | None, raw: bytes,
              request: Mapping[str, Any]) -> WalletReply:
        """Check one response to ``request`` by its parts (status, ``X-Operator-Signature``,
        raw body): signed, JSON, ``200`` or ``4xx``, and echoing the request's ``request_id``
        and ``transaction_id`` (a refusal too: a recorded ``4xx`` played back must not close a
        call either)."""
        if not p.verify(self.secret, raw, signature):
            raise WalletUnavailable(f"{method}: reply {status} is not signed by the operator")
        try:
            body = json.loads(raw)
        except ValueError:
            raise WalletUnavailable(f"{method}: reply is not JSON") from None
        if not isinstance(body, dict):
            raise WalletUnavailable(f"{method}: reply is not a JSON object")
        if status != 200 and not 400 <= status < 500:
            raise WalletUnavailable(f"{method}: status {status}")
        mismatch = p.echo_mismatch(request, body)
        if mismatch is not None:
            raise WalletUnavailable(f"{method}: {mismatch} (a reply to another request)")
        if 400 <= status < 500:
            raise WalletRefused(str(body.get("error", p.BAD_REQUEST)),
                                str(body.get("message", "")), status)
        balance = body.get("balance")
        operator_id = body.get("operator_transaction_id")
        if type(balance) is not int or (method in (p.DEBIT, p.CREDIT)
                                        and not isinstance(operator_id, str)):
            raise WalletUnavailable(f"{method}: reply lacks balance or operator_transaction_id")
        return WalletReply(balance, operator_id if isinstance(operator_id, str) else None)


CallObserver = Callable[[str, float, str | None], None]
"""Told of every call: method, seconds, and ``None``, ``"refused"`` or ``"unavailable"``."""
observers: list[CallObserver] = []
"""The server's metrics register here (``starfever.server.metrics``)."""


def _observed(method: str, started: float, failure: str | None) -> None:
    for observer in observers:
        observer(method, time.perf_counter() - started, failure)


@contextmanager
def _watched(method: str) -> Iterator[None]:
    """Times one wallet call for the observers (the wallet metrics), with how it failed:
    ``refused`` (the wallet said no) or ``unavailable`` (no usable answer)."""
    started = time.perf_counter()
    try:
        yield
    except WalletRefused:
        _observed(method, started, "refused")
        raise
    except WalletUnavailable:
        _observed(method, started, "unavailable")
        raise
    _observed(method, started, None)


class WalletClient:
    """Blocking calls (for the command line, the reconciler and threads)."""

    def __init__(self, endpoint: WalletEndpoint,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.endpoint = endpoint
        context = endpoint.tls()
        self.http = httpx.Client(timeout=endpoint.timeout, transport=transport,
                                 verify=context if context is not None else True)

    def call(self, method: str, fields: Mapping[str, Any]) -> WalletReply:
        """One call; raises :class:`WalletRefused` or :class:`WalletUnavailable`. A call that
        ends in a reset or a closed connection without a reply (a kept-alive connection the
        operator closed as the call went out: its keep-alive timeout) goes out once more on a
        new connection; the protocol answers a repeated ``transaction_id`` with its first
        answer, and a balance moves nothing. A timeout is not sent again."""
        url, body, headers, sent = self.endpoint.request(method, fields)
        with _watched(method):
            try:
                try:
                    response = self.http.post(url, content=body, headers=headers)
                except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
                    response = self.http.post(url, content=body, headers=headers)
            except httpx.HTTPError as error:
                raise WalletUnavailable(f"{method}: {type(error).__name__}: {error}") from None
            return self.endpoint.reply(method, response, sent)

    def close(self) -> None:
        self.http.close()


class AsyncWalletClient:
    """The same calls on the event loop (the spin route), over :mod:`starfever.seamless.http11`
    (httpx's async pool cost a spin most of its CPU)."""

    def __init__(self, endpoint: WalletEndpoint) -> None:
        self.endpoint = endpoint
        self.http = AsyncHttpClient(endpoint.url, endpoint.timeout, tls=endpoint.tls())

    async def call(self, method: str, fields: Mapping[str, Any]) -> WalletReply:
        """One call; raises :class:`WalletRefused` or :class:`WalletUnavailable`."""
        _, body, headers, sent = self.endpoint.request(method, fields)
        with _watched(method):
            try:
                response = await self.http.post(f"/{method}", body, headers)
            except HttpError as error:
                raise WalletUnavailable(f"{method}: {error}") from None
            return self.endpoint.check(method, response.status,
                                       response.headers.get(p.OPERATOR_SIGNATURE.lower()),
                                       response.content, sent)

    async def close(self) -> None:
        await self.http.close()


__all__ = ["AsyncWalletClient", "WalletClient", "WalletEndpoint", "WalletRefused", "WalletReply",
           "WalletUnavailable"]
