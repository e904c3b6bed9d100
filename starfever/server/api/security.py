"""Security headers on every response (issue 13): the page may load only its own files and may
not be framed by any site; browsers may not guess content types or leak the page's address;
in production the browser is told to use HTTPS only."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = ("default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
                           "form-action 'self'; object-src 'none'")
"""Scripts, styles, images and connections from this origin only, no inline script or style
attribute (the client sets its CSS variables through the CSSOM, ``js/markup.js``); no
framing (clickjacking)."""
HSTS = "max-age=31536000; includeSubDomains"
"""A year of HTTPS-only (production only: a development server on plain HTTP would otherwise
teach the browser to refuse it)."""

_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


class SecurityHeaders:
    """ASGI middleware adding the headers above to every HTTP response (errors included)."""

    def __init__(self, app: ASGIApp, *, production: bool) -> None:
        self.app = app
        self.headers = _HEADERS + (((b"strict-transport-security", HSTS.encode()),)
                                   if production else ())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *(h for h in self.headers if h[0] not in present)]
            await send(message)

        await self.app(scope, receive, with_headers)
