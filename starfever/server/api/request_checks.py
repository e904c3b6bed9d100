"""What every request must be before a route reads it: its body JSON, one object key once,
and its ``Idempotency-Key`` sent once.

- A request with a body (``Content-Length`` above 0, or ``Transfer-Encoding``) must say
  ``Content-Type: application/json`` (or ``application/<something>+json``; a ``charset``, if
  given, ``utf-8``), once: anything else is ``415 unsupported_media_type``. FastAPI read a
  form or a text body as a string and answered ``422 "Input should be a valid dictionary"``.
- The body must be JSON as RFC 8259 says it: UTF-8, no key twice in one object, no ``NaN`` or
  ``Infinity``, and within what Python can read (a number of 5,000 digits, arrays nested 5,000
  deep): anything else is ``400 malformed_json``. FastAPI answered the last kinds ``400
  bad_request`` ("There was an error parsing the body"), and took the last of two equal keys.
- ``Idempotency-Key`` sent twice is ``400 invalid_idempotency_key``: FastAPI and Starlette
  read the first one, a proxy or a log may read the other.

:class:`RequestChecks` sits between the spin's lean door and FastAPI, so the routes never see
such a request; the lean door (``spin_route``) serves only requests that pass these checks
(it reads the body with :func:`loads` and passes anything else on), so it pays for nothing
here but the object hook.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from starfever.server.api.errors import error_response


class MalformedJson(ValueError):
    """A body that is not one JSON text (the reason is the message)."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) != len(pairs):  # the rare case: find the key to name it
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise MalformedJson(f"the key {key[:40]!r} appears twice in one object")
            seen.add(key)
    return made


def _no_constant(name: str) -> NoReturn:
    raise MalformedJson(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_object, parse_constant=_no_constant)
"""Made once: ``json.loads`` with arguments builds a new decoder on every call."""


def loads(body: bytes) -> Any:
    """The JSON value of ``body``; :class:`MalformedJson` for anything that is not strictly
    one JSON text in UTF-8 (a key twice in an object, ``NaN``, a number or a nesting too big
    to read included)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedJson("the body is not UTF-8") from None
    try:
        return _DECODER.decode(text)
    except MalformedJson:
        raise
    except json.JSONDecodeError as error:
        raise MalformedJson(f"{error.msg} at character {error.pos}") from None
    except RecursionError:
        raise MalformedJson("nested too deeply") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise MalformedJson("a number too long") from None


def is_json_media(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` names JSON: ``application/json`` or ``application/*+json``,
    with no ``charset`` but ``utf-8``."""
    if content_type is None:
        return False
    media, _, parameters = content_type.partition(";")
    media = media.strip().lower()
    if media != "application/json" and not (media.startswith("application/")
                                            and media.endswith("+json")):
        return False
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and \
                value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


async def read_body(receive: Receive, read: list[Message], max_bytes: int) -> bytes | None:
    """The whole body (every message kept in ``read``), or ``None`` when it is over
    ``max_bytes`` or the client went away first."""
    size = 0
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            return None
        size += len(message.get("body", b""))
        if size > max_bytes:
            return None
        if not message.get("more_body", False):
            return b"".join(m.get("body", b"") for m in read)


def replaying(read: list[Message], receive: Receive) -> Receive:
    """``receive`` that first gives back the messages already read."""
    pending = list(read)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def _carries_body(length: bytes | None, chunked: bool) -> bool:
    if chunked:
        return True
    if length is None:
        return False
    try:
        return int(length) != 0
    except ValueError:
        return True  # the body limit refuses it (413)


class RequestChecks:
    """ASGI middleware: the checks above, each answered with the one error body."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        keys = 0
        content_types: list[bytes] = []
        length: bytes | None = None
        chunked = False
        for name, value in scope.get("headers", ()):
            if name == b"idempotency-key":
                keys += 1
            elif name == b"content-type":
                content_types.append(value)
            elif name == b"content-length":
                length = value
            elif name == b"transfer-encoding":
                chunked = True
        if keys > 1:
            await error_response(400, "invalid_idempotency_key", "send the Idempotency-Key "
                                 "header once")(scope, receive, send)
            return
        if not _carries_body(length, chunked):
            await self.app(scope, receive, send)
            return
        if len(content_types) != 1 or \
                not is_json_media(bytes(content_types[0]).decode("latin-1")):
            await error_response(415, "unsupported_media_type", "request bodies must be JSON "
                                 "sent as Content-Type: application/json")(scope, receive, send)
            return
        read: list[Message] = []
        body = await read_body(receive, read, self.max_bytes)
        if body:  # over the limit, or gone: the body limit and the route answer as before
            try:
                loads(body)
            except MalformedJson as error:
                await error_response(400, "malformed_json", f"the body is not valid JSON: "
                                     f"{error}")(scope, receive, send)
                return
        await self.app(scope, replaying(read, receive), send)


__all__ = ["MalformedJson", "RequestChecks", "is_json_media", "loads", "read_body",
           "replaying"]
