"""Operator mode's launch (OPERATOR-WALLET.md, "Launching the game"): the operator's back end
signs ``POST /launch`` for a player it has verified; Star Fever answers a game address with a
single-use launch token valid for :data:`LAUNCH_TTL`, stored only as an HMAC, which the browser
exchanges for its session (``POST /sessions {"launch_token"}``). The operator's player becomes
an account keyed by its ``player_id`` (``accounts.external_id``) with no password: in operator
mode players neither register nor log in with one.
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
    Forbidden,
    Unauthorized,
    Unprocessable,
    utcnow,
)
from starfever.server.settings import Settings

LAUNCH_TTL: Final = timedelta(seconds=60)
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


def check_launch(secret: str, raw: bytes, signature: str | None, now: datetime) -> Launch:
    """The launch of a signed body; ``401 bad_signature`` for a forged one, ``400``/``422``
    for one that breaks the protocol."""
    if not p.verify(secret, raw, signature):
        raise Unauthorized(f"the launch is not signed by the operator ({p.OPERATOR_SIGNATURE})",
                           code=p.BAD_SIGNATURE)
    try:
        body: Any = json.loads(raw)
    except ValueError:
        raise BadRequest("the body is not valid JSON", code="malformed_json") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object", code="malformed_json")
    wanted = ("player_id", "currency", "language", "market", "return_url", "timestamp")
    missing = [name for name in wanted if name not in body]
    extra = sorted(set(body) - set(wanted))
    if missing or extra:
        raise Unprocessable(f"a launch needs exactly {', '.join(wanted)}"
                            f" (missing: {missing}, unknown: {extra})", code="invalid_launch")
    if not p.is_id(body["player_id"]):
        raise Unprocessable("player_id must be 1-128 characters of A-Z a-z 0-9 _ . : -",
                            code="invalid_launch")
    if body["currency"] != p.CURRENCY:
        raise Unprocessable(f"currency must be {p.CURRENCY!r}, got {body['currency']!r}",
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
    try:
        sent = datetime.fromisoformat(str(body["timestamp"]).replace("Z", "+00:00"))
    except ValueError:
        raise Unprocessable("timestamp must be ISO 8601", code="invalid_launch") from None
    if sent.tzinfo is None or abs(now - sent) > p.MAX_AGE:
        raise Unauthorized("the launch's timestamp is missing its zone or more than 5 minutes "
                           "off (a replay?)", code="stale_launch")
    return Launch(player_id=body["player_id"], language=body["language"],
                  market=body["market"], return_url=body["return_url"])


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
    """Store a fresh single-use launch token for the player; the token and its expiry."""
    now = utcnow()
    account_id = _account_of(db, request.player_id, now)
    token = secrets.token_urlsafe(32)
    expires = now + LAUNCH_TTL
    with db.write() as session:
        session.add(LaunchToken(token_hash=token_hash(settings, token), account_id=account_id,
                                language=request.language, market=request.market,
                                return_url=request.return_url, created_at=now,
                                expires_at=expires))
    return token, expires


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
            .values(used_at=now).returning(LaunchToken.account_id)).first()
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
                                 net_result=0))
    return token, expires


def refuse_player_login(db: Database, username: str) -> None:
    """In operator mode only an operator account logs in with a password."""
    with db.read() as session:
        role = session.scalar(select(Account.role).where(Account.username == username))
    if role != "operator":
        raise Forbidden("in operator mode players come from the operator's launch, not from a "
                        "password log-in", code="operator_mode_launch_only")


__all__ = ["LANGUAGES", "LAUNCH_TTL", "Launch", "check_launch", "exchange", "launch",
           "refuse_player_login"]
