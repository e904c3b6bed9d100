"""What wraps every request: its id, the access log, the HTTP metrics, and the drain.

**Request id.** A caller's ``X-Request-ID`` (a plain token of at most 64 characters) is kept,
anything else replaced by a fresh one; it is answered in the same header and carried by every
log line written while the request is served (:data:`logs.REQUEST_ID`).

**Drain (SIGTERM).** ``starfever serve`` stops on SIGTERM in three steps. First a grace
(``STARFEVER_DRAIN_GRACE_SECONDS``, ``--drain-grace``; 5 s by default): ``/readyz`` answers
``503`` while everything is still served, so that the load balancer takes the node out
before it refuses anything. Then it drains: it answers every new spin ``503 draining`` (with
``Retry-After``; the client sends it again, same Idempotency-Key, to another server), while
the spins already taken finish: their batches are settled and answered. When none is left (or
after ``STARFEVER_DRAIN_SECONDS``), uvicorn's own graceful shutdown follows: it stops
listening, lets open responses finish and runs the shutdown of the app. A second SIGTERM
skips the waits.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable
from types import FrameType
from typing import Any

from starfever.server import logs, metrics

log = logging.getLogger("starfever.server")
SPIN_PATH = "/api/v1/spins"
LOGIN_PATHS = {"/api/v1/sessions": "player", "/api/v1/operator/sessions": "operator"}
"""Where a 401 or 429 to a POST is a refused log-in (of that role)."""
Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]
ASGIApp = Callable[[Scope, Receive, Send], Any]


class Drain:
    """The drain state of one server process."""

    def __init__(self, seconds: float, grace: float = 0.0) -> None:
        self.seconds = seconds
        self.grace = grace
        """Seconds between SIGTERM (``/readyz`` 503 from then on) and the drain."""
        self.stopping = False
        """SIGTERM came: not ready (``/readyz`` 503), whether still in the grace or not."""
        self.draining = False
        """The grace is over: new spins are refused."""
        self._handed_on = False
        self.spins_in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: Any = None

    def install(self) -> None:
        """Take over SIGTERM (uvicorn's handler runs when the drain is done); only where
        signals can be handled: the main thread of a process with a running loop."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._loop = asyncio.get_running_loop()
        self._previous = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, self._on_sigterm)

    def uninstall(self) -> None:
        """Give SIGTERM back (the app's shutdown)."""
        if self._loop is not None and threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) == self._on_sigterm:
            signal.signal(signal.SIGTERM, self._previous or signal.SIG_DFL)
        self._loop = None

    def _on_sigterm(self, sig: int, frame: FrameType | None) -> None:
        if self.stopping or self._loop is None:
            self.draining = True
            self._hand_on(sig, frame)
            return
        self.stopping = True
        self._loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self._finish(sig)))

    async def _finish(self, sig: int) -> None:
        if self.grace > 0:
            log.warning("SIGTERM: not ready (/readyz 503) for %g s while still serving, then "
                        "draining", self.grace)
            deadline = time.monotonic() + self.grace
            while time.monotonic() < deadline and not self._handed_on:
                await asyncio.sleep(0.05)
        if self._handed_on:  # a second SIGTERM skipped the waits
            return
        self.draining = True
        log.warning("SIGTERM: draining (%d spins in flight; new spins answered 503)",
                    self.spins_in_flight)
        deadline = time.monotonic() + self.seconds
        while self.spins_in_flight and time.monotonic() < deadline and not self._handed_on:
            await asyncio.sleep(0.02)
        if self._handed_on:
            return
        if self.spins_in_flight:
            log.error("drain: %d spins still in flight after %.0f s; shutting down",
                      self.spins_in_flight, self.seconds)
        else:
            log.warning("drained: every spin taken was answered; shutting down")
        self._hand_on(sig, None)

    def _hand_on(self, sig: int, frame: FrameType | None) -> None:
        self._handed_on = True
        previous = self._previous
        if callable(previous):
            previous(sig, frame)
        else:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGTERM)


_DRAINING_BODY = json.dumps({"error": {
    "code": "draining", "message": "this server is shutting down: send the spin again (same "
    "Idempotency-Key); nothing was played"}}).encode()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            try:
                return bytes(value).decode("latin-1")
            except UnicodeDecodeError:
                return None
    return None


class RequestMiddleware:
    """Request id, access log, HTTP metrics and the drain's refusals (plain ASGI, so the spin
    path pays a few microseconds, not a second task)."""

    def __init__(self, app: ASGIApp, drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = logs.accepted_request_id(_header(scope, b"x-request-id")) or \
            uuid.uuid4().hex
        token = logs.REQUEST_ID.set(request_id)
        fields_token = logs.FIELDS.set({})
        status = 500
        encoded_id = request_id.encode()

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), (b"x-request-id",
                                                                    encoded_id)]
            await send(message)

        spin = scope["method"] == "POST" and scope["path"] == SPIN_PATH
        try:
            if spin and self.drain.draining:
                metrics.DRAINING.inc()
                await send_with_id({"type": "http.response.start", "status": 503,
                                    "headers": [(b"content-type", b"application/json"),
                                                (b"retry-after", b"1"),
                                                (b"content-length",
                                                 str(len(_DRAINING_BODY)).encode())]})
                await send({"type": "http.response.body", "body": _DRAINING_BODY})
                return
            if spin:
                self.drain.spins_in_flight += 1
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                if spin:
                    self.drain.spins_in_flight -= 1
        finally:
            seconds = time.perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope["method"]
            metrics.HTTP_SECONDS.labels(method, template).observe(seconds)
            metrics.HTTP_RESPONSES.labels(method, template, str(status)).inc()
            if status in (401, 429) and method == "POST" and scope["path"] in LOGIN_PATHS:
                metrics.LOGIN_FAILURES.labels(LOGIN_PATHS[scope["path"]]).inc()
            client = scope.get("client")
            logs.access(method, scope["path"], status, seconds,
                        client[0] if client else None, request_id)
            logs.FIELDS.reset(fields_token)
            logs.REQUEST_ID.reset(token)


__all__ = ["Drain", "RequestMiddleware"]
