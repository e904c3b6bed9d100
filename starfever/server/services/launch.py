"""Operator mode's launch (OPERATOR-WALLET.md, "Launching the game"): the operator's back end
signs ``POST /launch`` for a player it has verified; Star Fever answers a game address with a
single-use launch token valid for :data:`LAUNCH_TTL`, stored only as an HMAC, which the browser
exchanges for its session (``POST /sessions {"launch_token"}``). The operator's player becomes
an account keyed by its ``player_id`` (``accounts.external_id``) with no password: in operator
mode players neither register nor log in with one.

Version 2 of the protocol (ADR 0055): a launch carries the operator's unique ``launch_id``,
stored with its token under a unique index, so a second use is ``409 launch_replayed`` in every
worker and after any restart; its ``timestamp`` must lie within :data:`MAX_LAUNCH_AGE` back and
:data:`MAX_LAUNCH_AHEAD` ahead (``409 stale_launch``); its ``operator_session`` goes with the
session to every wallet call; only the ``currency`` and ``mode`` served are taken (``422``).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from starfever.seamless import protocol as p
from starfever.server.db import Database
from starfever.server.models import PLAYER, Account, LaunchToken, SessionToken
from starfever.server.services.auth import start_play_period, token_hash
from starfever.server.services.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    Unauthorized,
    Unprocessable,
    utcnow,
)
from starfever.server.settings import Settings

LAUNCH_TTL: Final = timedelta(seconds=60)
MAX_LAUNCH_AGE: Final = timedelta(seconds=60)
MAX_LAUNCH_AHEAD: Final = timedelta(seconds=30)
"""A launch's ``timestamp`` is taken from 60 s before now to 30 s after (clocks drift)."""
REAL, DEMO = "real", "demo"
LAUNCH_FIELDS: Final = ("launch_id", "player_id", "operator_session", "currency", "language",
                        "market", "mode", "return_url", "timestamp")
"""The fields of a version-2 launch (the contract's optional ones are not served yet)."""
LANGUAGES: Final = ("de", "en")
NO_PASSWORD: Final = "!operator-mode: no password"
"""The password hash of an operator's player: no password ever matches it."""
_MARKET = re.compile(r"[a-z0-9_-]{1,32}")
_RETURN_URL = re.compile(r"https?://[^\s\"'<>]{1,500}")


@dataclass(frozen=True, slots=True)
class Launch:
    """A checked launch request."""

    player_id: str
    language: str
    market: str
    return_url: str
    launch_id: str
    operator_session: str


def check_launch(secret: str, raw: bytes, signature: str | None, now: datetime) -> Launch:
    """The launch of a signed body; ``401 bad_signature`` for a forged one, ``409
    stale_launch`` outside the timestamp window, ``400``/``422`` for one that breaks the
    protocol or asks for what is not served (another currency, demo play). A ``launch_id``
    used before is refused when it is stored (:func:`launch`)."""
    if not p.verify(secret, raw, signature):
        raise Unauthorized(f"the launch is not signed by the operator ({p.OPERATOR_SIGNATURE})",
                           code=p.BAD_SIGNATURE)
    try:
        body: Any = json.loads(raw)
    except ValueError:
        raise BadRequest("the body is not valid JSON", code="malformed_json") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object", code="malformed_json")
    missing = [name for name in LAUNCH_FIELDS if name not in body]
    extra = sorted(set(body) - set(LAUNCH_FIELDS))
    if missing or extra:
        raise Unprocessable(f"a launch needs exactly {', '.join(LAUNCH_FIELDS)}"
                            f" (missing: {missing}, unknown: {extra})", code="invalid_launch")
    _check_window(body["timestamp"], now)
    for name in ("launch_id", "player_id"):
        if not p.is_id(body[name]):
            raise Unprocessable(f"{name} must be 1-128 characters of A-Z a-z 0-9 _ . : -",
                                code="invalid_launch")
    if not p.is_operator_session(body["operator_session"]):
        raise Unprocessable("operator_session must be 1-256 visible ASCII characters",
                            code="invalid_launch")
    if body["currency"] != p.CURRENCY:
        raise Unprocessable(f"this server serves only {p.CURRENCY}, not {body['currency']!r}",
                            code="currency_not_served")
    if body["mode"] == DEMO:
        raise Unprocessable("demo play is not served yet: launch with mode \"real\"",
                            code="demo_not_served")
    if body["mode"] != REAL:
        raise Unprocessable(f"mode must be \"real\" or \"demo\", got {body['mode']!r}",
                            code="invalid_launch")
    if body["language"] not in LANGUAGES:
        raise Unprocessable(f"language must be one of {LANGUAGES}, got {body['language']!r}",
                            code="invalid_launch")
    if not isinstance(body["market"], str) or not _MARKET.fullmatch(body["market"]):
        raise Unprocessable("market must be a profile name (1-32 of a-z 0-9 _ -)",
                            code="invalid_launch")
    if not isinstance(body["return_url"], str) or not _RETURN_URL.fullmatch(body["return_url"]):
        raise Unprocessable("return_url must be an http(s) URL of at most 512 characters",
                            code="invalid_launch")
    return Launch(player_id=body["player_id"], language=body["language"],
                  market=body["market"], return_url=body["return_url"],
                  launch_id=body["launch_id"], operator_session=body["operator_session"])


def _check_window(value: object, now: datetime) -> None:
    """``409 stale_launch`` unless the launch was signed within 60 s before ``now`` and 30 s
    after (a signed launch replayed later, or one signed ahead to be replayed, is refused)."""
    try:
        sent = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise Unprocessable("timestamp must be ISO 8601", code="invalid_launch") from None
    if sent.tzinfo is None:
        raise Unprocessable("timestamp must name its zone (UTC: ...Z)", code="invalid_launch")
    if not now - MAX_LAUNCH_AGE <= sent <= now + MAX_LAUNCH_AHEAD:
        raise Conflict(f"the launch's timestamp {value} is more than "
                       f"{int(MAX_LAUNCH_AGE.total_seconds())} s old or "
                       f"{int(MAX_LAUNCH_AHEAD.total_seconds())} s ahead of this server's clock "
                       "(a replay?)", code="stale_launch")


def _username(player_id: str) -> str:
    """A username of 32 characters for the operator's player (never used to log in)."""
    return "op-" + hashlib.sha256(player_id.encode()).hexdigest()[:29]


def _account_of(db: Database, player_id: str, now: datetime) -> int:
    """The account of the operator's player, made on the first launch."""
    for _ in range(2):
        with db.write() as session:
            found = session.scalar(select(Account.id).where(Account.external_id == player_id))
            if found is not None:
                return int(found)
        try:
            with db.write() as session:
                account = Account(username=_username(player_id), password_hash=NO_PASSWORD,
                                  role=PLAYER, created_at=now, external_id=player_id)
                session.add(account)
                session.flush()
                return int(account.id)
        except IntegrityError:  # a concurrent first launch made it: read it again
            continue
    raise RuntimeError(f"the account of player {player_id!r} could not be made or found")


def launch(db: Database, settings: Settings, request: Launch) -> tuple[str, datetime]:
    """Store a fresh single-use launch token for the player; the token and its expiry.
    ``409 launch_replayed`` if a launch with the same ``launch_id`` was stored before (the
    unique index decides, so two workers racing on one replay store it once)."""
    now = utcnow()
    with db.read() as session:
        seen = session.scalar(select(LaunchToken.id)
                              .where(LaunchToken.launch_id == request.launch_id))
    if seen is not None:
        raise _replayed(request.launch_id)
    account_id = _account_of(db, request.player_id, now)
    token = secrets.token_urlsafe(32)
    expires = now + LAUNCH_TTL
    try:
        with db.write() as session:
            session.add(LaunchToken(token_hash=token_hash(settings, token),
                                    account_id=account_id, language=request.language,
                                    market=request.market, return_url=request.return_url,
                                    created_at=now, expires_at=expires,
                                    launch_id=request.launch_id,
                                    operator_session=request.operator_session))
    except IntegrityError:
        raise _replayed(request.launch_id) from None
    return token, expires


def _replayed(launch_id: str) -> Conflict:
    return Conflict(f"the launch {launch_id!r} was used before: a launch is taken once "
                    "(send a new launch_id)", code="launch_replayed")


def exchange(db: Database, settings: Settings, launch_token: str) -> tuple[str, datetime]:
    """Open the session of a launch token (once); ``401 invalid_launch_token`` for a used,
    expired or unknown one."""
    now = utcnow()
    digest = token_hash(settings, launch_token)
    with db.write() as session:
        claimed = session.execute(
            update(LaunchToken).where(LaunchToken.token_hash == digest,
                                      LaunchToken.used_at.is_(None),
                                      LaunchToken.expires_at > now)
            .values(used_at=now).returning(LaunchToken.account_id,
                                           LaunchToken.operator_session)).first()
        if claimed is None:
            raise Unauthorized("the launch token is used, expired or not valid; launch the "
                               "game again from the operator", code="invalid_launch_token")
        token = secrets.token_urlsafe(32)
        expires = now + timedelta(seconds=settings.token_ttl_seconds)
        account = session.get(Account, claimed[0])
        if account is not None:  # as a log-in does: the reality check's clock is the player's
            start_play_period(session, settings, account, now)
        session.add(SessionToken(account_id=claimed[0], token_hash=token_hash(settings, token),
                                 created_at=now, expires_at=expires, reality_check_at=now,
                                 net_result=0, operator_session=claimed[1]))
    return token, expires


def refuse_player_login(db: Database, username: str) -> None:
    """In operator mode only an operator account logs in with a password."""
    with db.read() as session:
        role = session.scalar(select(Account.role).where(Account.username == username))
    if role != "operator":
        raise Forbidden("in operator mode players come from the operator's launch, not from a "
                        "password log-in", code="operator_mode_launch_only")


__all__ = ["LANGUAGES", "LAUNCH_FIELDS", "LAUNCH_TTL", "MAX_LAUNCH_AGE", "MAX_LAUNCH_AHEAD",
           "Launch", "check_launch", "exchange", "launch",
           "refuse_player_login"]
