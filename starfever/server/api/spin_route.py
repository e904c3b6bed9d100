"""The spin's lean front door (ADR 0025): ``POST /api/v1/spins`` served without FastAPI's
routing, dependency solving and response validation, which cost about as much CPU as the
spin's own work.

It serves only the plain case: one JSON body within the size limit that is strict JSON
(``request_checks.loads``: UTF-8, no key twice) and a valid :class:`SpinCreate`, a bearer
token this process already knows valid for a player (:func:`auth.known_spinner`) and one
well-formed ``Idempotency-Key``. Anything else (a first spin of a token, a missing, bad or
repeated header, a body to refuse) goes on, with the body already read handed on unchanged,
to ``request_checks.RequestChecks`` and the documented FastAPI route, which answer it.
Both doors play the spin with the same function (``routes.spins.play``) and answer errors with
the same one (``errors.answer``), so they differ only in what they cost.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from starfever.server import logs
from starfever.server.api import errors
from starfever.server.api.deps import Context, bearer_token
from starfever.server.api.request_checks import (
    MalformedJson,
    is_json_media,
    loads,
    read_body,
    replaying,
)
from starfever.server.api.routes.spins import play
from starfever.server.models import PLAYER
from starfever.server.observe import SPIN_PATH
from starfever.server.schemas import SpinCreate, is_idempotency_key
from starfever.server.services import auth
from starfever.server.services.errors import Unauthorized

_WANTED = (b"content-type", b"authorization", b"idempotency-key")


class SpinRoute:
    """ASGI middleware: the plain spin answered here, everything else passed to ``app``."""

    path = SPIN_PATH
    """The route's template, as the HTTP metrics read it from ``scope["route"]``."""

    def __init__(self, app: ASGIApp, *, context: Context, max_bytes: int) -> None:
        self.app = app
        self.context = context
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != SPIN_PATH or scope["method"] != "POST" \
                or scope.get("query_string"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        read: list[Message] = []
        body = None
        if headers is not None and is_json_media(headers.get(b"content-type")):
            body = await read_body(receive, read, self.max_bytes)
        spin = _plain_spin(self.context, headers, body) if headers is not None else None
        if spin is None:
            await self.app(scope, replaying(read, receive), send)
            return
        principal, request, key = spin
        logs.bind(account_id=principal.account_id, role=principal.role)
        scope["route"] = self
        response: Response
        try:
            played = await play(self.context, principal, request, key)
        except Exception as error:  # every failure gets the one error body
            response = errors.answer(error)
        else:
            response = Response(played.model_dump_json().encode(),
                                status_code=200 if played.replayed else 201,
                                media_type="application/json")
        await response(scope, receive, send)


def _headers(scope: Scope) -> dict[bytes, str] | None:
    """The three headers the spin reads, each sent at most once; ``None`` for a repeat (the
    route's own parsing decides that case)."""
    found: dict[bytes, str] = {}
    for name, value in scope.get("headers", ()):
        if name in _WANTED:
            if name in found:
                return None
            found[name] = bytes(value).decode("latin-1")  # ASGI header values are Latin-1
    return found


def _plain_spin(context: Context, headers: dict[bytes, str], body: bytes | None,
                ) -> tuple[auth.Principal, SpinCreate, str] | None:
    """The caller, the spin and its key when this door may serve it; ``None`` otherwise."""
    key = headers.get(b"idempotency-key")
    authorization = headers.get(b"authorization")
    if body is None or key is None or not is_idempotency_key(key):
        return None
    try:
        token = bearer_token(authorization)
    except Unauthorized:
        return None
    principal = auth.known_spinner(context.db, context.settings, token)
    if principal is None or principal.role != PLAYER:
        return None
    try:  # json's parser with a hook (a key twice), then the strict model on its value
        request = SpinCreate.model_validate(loads(body))
    except (MalformedJson, ValidationError):
        return None
    return principal, request, key


__all__ = ["SpinRoute"]
