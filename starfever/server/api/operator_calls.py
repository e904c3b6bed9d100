"""The calls the operator's back end makes on Star Fever (OPERATOR-WALLET.md "Calls the operator
makes": terminate, maintenance, free rounds): signed like the launch and taken only inside the
launch's timestamp window (ADR 0055, 0067). One check for every such call, so that no route
keeps a window or a signature rule of its own."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from starfever.seamless import protocol as p
from starfever.server.api.deps import Context
from starfever.server.services.errors import BadRequest, NotFound, Unauthorized, utcnow
from starfever.server.services.launch import check_window

STALE_REQUEST = "stale_request"
"""The code of a signed call outside the window (a launch's is ``stale_launch``)."""


async def signed_bytes(context: Context, request: Request, signature: str | None) -> bytes:
    """The raw body of a call the operator signed: ``404 not_operator_mode`` on a ledger-mode
    server (its back office makes these calls), ``401 bad_signature`` for anything else."""
    secret = context.wallet.launch_secret
    if secret is None:
        raise NotFound("this server is not in operator mode (starfever serve --wallet "
                       "operator); in ledger mode the back office makes these calls",
                       code="not_operator_mode")
    raw = await request.body()
    if not p.verify(secret, raw, signature):
        raise Unauthorized(f"the call is not signed by the operator ({p.OPERATOR_SIGNATURE})",
                           code=p.BAD_SIGNATURE)
    return raw


def json_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, else ``400 malformed_json``."""
    try:
        body: Any = json.loads(raw)
    except ValueError:
        raise BadRequest("the body is not valid JSON", code="malformed_json") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object", code="malformed_json")
    return body


def check_timestamp(value: object, *, invalid_code: str) -> None:
    """The launch's window for every signed call: ``409 stale_request`` unless ``value`` lies
    within 60 s before this server's clock and 30 s after (a call replayed later is refused);
    ``422 invalid_code`` for a timestamp that is not ISO 8601 with its zone."""
    check_window(value, utcnow(), stale_code=STALE_REQUEST, invalid_code=invalid_code,
                 what="call")


__all__ = ["STALE_REQUEST", "check_timestamp", "json_object", "signed_bytes"]
