"""The wallet protocol's rules as data and pure functions: both sides import this module, so
a signature or a field name cannot differ between them.

Transport (``OPERATOR-WALLET.md``, version 2): ``POST {wallet_url}/{method}``, a JSON body with
a ``timestamp`` and a ``request_id`` unique across the installation, the header
:data:`STARFEVER_SIGNATURE` (hex HMAC-SHA256 of the raw body under the shared secret); the
operator answers ``200`` with JSON and :data:`OPERATOR_SIGNATURE`, or a ``4xx`` ``{"error": CODE,
"message": text}``, which is final. Every reply echoes the request's ``request_id`` (and its
``transaction_id``, where it has one): :func:`echo_mismatch` says whether a reply answers the
request it came for, so a signed reply recorded and played back is not an answer (ADR 0054).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from starfever.currencies import currency_codes
from starfever.engine.errors import InputError

VERSION: Final = 2
CURRENCY: Final = "EUR"
"""The default currency (a launch names its own; every call carries its session's)."""
GAME: Final = "star-fever"
STARFEVER_SIGNATURE: Final = "X-Starfever-Signature"
OPERATOR_SIGNATURE: Final = "X-Operator-Signature"
MIN_SECRET_LENGTH: Final = 32
MAX_AGE: Final = timedelta(minutes=5)
"""The operator may refuse a request whose ``timestamp`` is older than this."""

BALANCE, DEBIT, CREDIT, ROLLBACK = "balance", "debit", "credit", "rollback"
METHODS: Final = (BALANCE, DEBIT, CREDIT, ROLLBACK)

REQUIRED: Final[Mapping[str, tuple[str, ...]]] = {
    BALANCE: ("request_id", "player_id", "session_id", "operator_session", "currency"),
    DEBIT: ("request_id", "transaction_id", "round_id", "player_id", "session_id",
            "operator_session", "currency", "amount", "game", "model"),
    CREDIT: ("request_id", "transaction_id", "round_id", "player_id", "session_id",
             "operator_session", "currency", "amount", "debit_transaction_id",
             "jackpot_amount", "round_closed", "round_details_url"),
    ROLLBACK: ("request_id", "transaction_id", "round_id", "player_id",
               "debit_transaction_id"),
}
"""The fields of each method's request besides ``timestamp``."""
OPTIONAL: Final[Mapping[str, tuple[str, ...]]] = {
    BALANCE: ("brand",),
    DEBIT: ("brand", "free_round"),
    CREDIT: ("brand", "free_round"),
    ROLLBACK: ("operator_session", "brand"),
}
"""The optional fields of each method's request: ``brand``, the launch's brand, on every call
of a session whose launch named one, and a rollback's ``operator_session`` (Star Fever's
additions to the contract, issue 36, ADR 0081: the operator can file every call of a player
under the session and the brand it came from)."""
ECHOED: Final = ("request_id", "transaction_id")
"""The request's fields every reply repeats (the ones the request has)."""

# Error codes of a 4xx reply.
INSUFFICIENT_FUNDS: Final = "insufficient_funds"
PLAYER_BLOCKED: Final = "player_blocked"
SESSION_EXPIRED: Final = "session_expired"
UNKNOWN_TRANSACTION: Final = "unknown_transaction"
BAD_REQUEST: Final = "bad_request"
BAD_SIGNATURE: Final = "bad_signature"
ERROR_CODES: Final = (INSUFFICIENT_FUNDS, PLAYER_BLOCKED, SESSION_EXPIRED, UNKNOWN_TRANSACTION,
                      BAD_REQUEST, BAD_SIGNATURE)

_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
"""Player, session, transaction and request ids: what fits a URL and a log line unquoted."""
_OPERATOR_SESSION = re.compile(r"[\x21-\x7e]{1,256}")
"""The operator's session token: opaque to Star Fever, 1-256 visible ASCII characters."""
_BRAND = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
"""The operator's brand (site) a launch names: what fits a URL and a log line unquoted."""


class ProtocolError(InputError):
    """A message that breaks the protocol (a missing field, a bad id or amount)."""


def check_secret(secret: str | None) -> str:
    """The shared secret, refused when missing or shorter than 32 characters."""
    if not secret or len(secret) < MIN_SECRET_LENGTH:
        raise InputError(f"the operator's shared secret must be at least {MIN_SECRET_LENGTH} "
                         "characters (STARFEVER_OPERATOR_SECRET)")
    return secret


def sign(secret: str, body: bytes) -> str:
    """The hex HMAC-SHA256 of the raw ``body`` under ``secret``."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, signature: str | None) -> bool:
    """Whether ``signature`` signs ``body`` (compared in constant time)."""
    return signature is not None and hmac.compare_digest(sign(secret, body), signature.lower())


def timestamp(now: datetime) -> str:
    """The ``timestamp`` field: ISO 8601 in UTC with a ``Z``."""
    return now.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode(fields: Mapping[str, Any], now: datetime) -> bytes:
    """A request or reply body: the fields plus ``timestamp``, as UTF-8 JSON."""
    return json.dumps({**fields, "timestamp": timestamp(now)}, separators=(",", ":"),
                      ensure_ascii=False).encode()


def new_request_id() -> str:
    """A fresh ``request_id``: 128 random bits, so unique across the installation (every
    worker and every restart) without a counter to share; each send of a call, a resend of
    the same ``transaction_id`` included, has its own."""
    return f"sfq-{secrets.token_hex(16)}"


def is_operator_session(value: object) -> bool:
    """Whether ``value`` is a valid ``operator_session`` (the launch's, sent back unchanged)."""
    return isinstance(value, str) and _OPERATOR_SESSION.fullmatch(value) is not None


def is_brand(value: object) -> bool:
    """Whether ``value`` is a valid ``brand`` (the launch's, sent with every call)."""
    return isinstance(value, str) and _BRAND.fullmatch(value) is not None


def echo_mismatch(request: Mapping[str, Any], reply: Mapping[str, Any]) -> str | None:
    """Why ``reply`` does not answer ``request`` (a field of :data:`ECHOED` that the request
    has and the reply does not repeat exactly), or ``None`` when it does."""
    for name in ECHOED:
        if name in request and reply.get(name) != request[name]:
            return (f"the reply's {name} {reply.get(name)!r} is not the request's "
                    f"{request[name]!r}")
    return None


def is_id(value: object) -> bool:
    """Whether ``value`` is a valid player, session or transaction id."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def check_free_round(method: str, body: Mapping[str, Any]) -> None:
    """A free round's block (version 2): only on a debit, which is then of 0, or a credit;
    ``{"grant_id": id, "campaign_id": id or null, "rounds_left": whole number >= 0}``."""
    block = body["free_round"]
    if method not in (DEBIT, CREDIT):
        raise ProtocolError(f"free_round belongs to a debit or a credit, not a {method}")
    if method == DEBIT and body["amount"] != 0:
        raise ProtocolError("a free round's debit is of 0")
    if not isinstance(block, dict) or set(block) != {"grant_id", "campaign_id", "rounds_left"}:
        raise ProtocolError("free_round must be {grant_id, campaign_id, rounds_left}")
    if not is_id(block["grant_id"]) or not (block["campaign_id"] is None
                                            or is_id(block["campaign_id"])):
        raise ProtocolError("free_round's grant_id and campaign_id must be ids")
    if type(block["rounds_left"]) is not int or block["rounds_left"] < 0:
        raise ProtocolError("free_round's rounds_left must be a whole number >= 0")


def check_request(method: str, body: Mapping[str, Any], now: datetime) -> None:
    """Raise :class:`ProtocolError` unless ``body`` is a well-formed ``method`` request no older
    than :data:`MAX_AGE` (and not from the future by more than that)."""
    if method not in METHODS:
        raise ProtocolError(f"unknown method {method!r}")
    missing = [name for name in (*REQUIRED[method], "timestamp") if name not in body]
    if missing:
        raise ProtocolError(f"{method} needs {', '.join(missing)}")
    for name in ("request_id", "transaction_id", "player_id", "session_id",
                 "debit_transaction_id"):
        if name in body and not is_id(body[name]):
            raise ProtocolError(f"{name} must be 1-128 characters of A-Z a-z 0-9 _ . : -")
    if "operator_session" in body and not is_operator_session(body["operator_session"]):
        raise ProtocolError("operator_session must be 1-256 visible ASCII characters")
    if "brand" in body and not is_brand(body["brand"]):
        raise ProtocolError("brand must be 1-64 characters of A-Z a-z 0-9 _ . : -")
    if "currency" in body and body["currency"] not in currency_codes():
        raise ProtocolError(f"currency must be one of {', '.join(currency_codes())}, got "
                            f"{body['currency']!r}")
    for name in ("amount", "jackpot_amount"):
        if name in body and (type(body[name]) is not int or body[name] < 0):
            raise ProtocolError(f"{name} must be a whole number of cents >= 0")
    if "free_round" in body:
        check_free_round(method, body)
    elif method == DEBIT and body["amount"] == 0:
        raise ProtocolError("a debit must be at least 1 cent (0 only with free_round)")
    if method == CREDIT and body["jackpot_amount"] > body["amount"]:
        raise ProtocolError("jackpot_amount is part of amount and cannot exceed it")
    if method == CREDIT and not (isinstance(body["round_details_url"], str)
                                 and body["round_details_url"].startswith(("http://",
                                                                           "https://"))
                                 and len(body["round_details_url"]) <= 2048):
        raise ProtocolError("round_details_url must be an http(s) address")
    try:
        sent = datetime.fromisoformat(str(body["timestamp"]).replace("Z", "+00:00"))
    except ValueError:
        raise ProtocolError(f"timestamp {body['timestamp']!r} is not ISO 8601") from None
    if sent.tzinfo is None or abs(now - sent) > MAX_AGE:
        raise ProtocolError("timestamp is missing its zone or more than 5 minutes off")


__all__ = [
    "BAD_REQUEST",
    "BAD_SIGNATURE",
    "BALANCE",
    "CREDIT",
    "CURRENCY",
    "DEBIT",
    "ECHOED",
    "ERROR_CODES",
    "GAME",
    "INSUFFICIENT_FUNDS",
    "MAX_AGE",
    "METHODS",
    "OPERATOR_SIGNATURE",
    "OPTIONAL",
    "PLAYER_BLOCKED",
    "REQUIRED",
    "ROLLBACK",
    "SESSION_EXPIRED",
    "STARFEVER_SIGNATURE",
    "UNKNOWN_TRANSACTION",
    "ProtocolError",
    "check_free_round",
    "check_request",
    "check_secret",
    "echo_mismatch",
    "encode",
    "is_brand",
    "is_id",
    "is_operator_session",
    "new_request_id",
    "sign",
    "timestamp",
    "verify",
]
