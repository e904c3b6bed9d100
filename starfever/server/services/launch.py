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
session to every wallet call; only a ``currency`` served is taken (``422``); ``mode: "demo"``
opens demo play (``services.demo``, ADR 0066).

The optional fields travel on the launch token to the session it opens (:class:`Options`):
``brand`` is kept with the session (and so with its rounds); ``reality_check_seconds`` becomes
the player's reality-check interval (one clock per player, so the newest session's launch sets
it; one without the field restores the server's), enforced by the same rule as in ledger mode;
``session_time_limit_seconds`` fixes when the session stops taking spins
(``sessions.play_ends_at``, ``403 session_time_limit_reached``); ``birth_date`` refuses a player
under 18 (``403 under_age``, nothing stored) and is kept on the account for rules that depend
on the player's age.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from starfever.seamless import protocol as p
from starfever.server.db import Database
from starfever.server.models import PLAYER, Account, LaunchToken, SessionToken
from starfever.server.services import free_rounds, market_rules
from starfever.server.services.auth import start_play_period, token_hash
from starfever.server.services.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    Unauthorized,
    Unprocessable,
    utcnow,
)
from starfever.server.services.protection_rules import ADULT_AGE, age_on
from starfever.server.settings import Settings

LAUNCH_TTL: Final = timedelta(seconds=60)
MAX_LAUNCH_AGE: Final = timedelta(seconds=60)
MAX_LAUNCH_AHEAD: Final = timedelta(seconds=30)
"""A launch's ``timestamp`` is taken from 60 s before now to 30 s after (clocks drift)."""
REAL, DEMO = "real", "demo"
LAUNCH_FIELDS: Final = ("launch_id", "player_id", "operator_session", "currency", "language",
                        "market", "mode", "return_url", "timestamp")
"""The fields every version-2 launch carries."""
OPTIONAL_FIELDS: Final = ("brand", "reality_check_seconds", "session_time_limit_seconds",
                          "birth_date")
"""The fields a launch may carry besides (:class:`Options`)."""
MIN_INTERVAL_SECONDS: Final = 60
"""The shortest reality-check interval and session time limit a launch may set."""
MAX_SESSION_TIME_LIMIT_SECONDS: Final = 24 * 3600
"""The longest session time limit a launch may set (a day)."""
OLDEST_BIRTH_YEAR: Final = 1900
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
    options: Options
    mode: str = REAL
    """``real``, or ``demo`` (ADR 0066: a play balance, nothing in the books)."""
    currency: str = "EUR"
    """The session's currency, one this installation serves (ADR 0076)."""


@dataclass(frozen=True, slots=True)
class Options:
    """A launch's optional fields, checked (``None``: not sent)."""

    brand: str | None = None
    """The operator's brand (site) the player came from: kept with the session for support."""
    reality_check_seconds: int | None = None
    """The player's reality-check interval (``None``: the server's)."""
    session_time_limit_seconds: int | None = None
    """How long the session takes spins, from its opening (``None``: no limit)."""
    birth_date: date | None = None
    """The player's birth date as the operator knows it."""


def check_launch(secret: str, raw: bytes, signature: str | None, now: datetime, *,
                 max_reality_check_seconds: int,
                 currencies: tuple[str, ...] = (p.CURRENCY,)) -> Launch:
    """The launch of a signed body; ``401 bad_signature`` for a forged one, ``409
    stale_launch`` outside the timestamp window, ``400``/``422`` for one that breaks the
    protocol or asks for what is not served (another currency), ``403 under_age``
    for a player whose ``birth_date`` says under 18. A ``launch_id`` used before is refused
    when it is stored (:func:`launch`). ``max_reality_check_seconds``: the longest interval a
    launch may set (the session token's lifetime, as for ``STARFEVER_REALITY_CHECK_SECONDS``);
    ``currencies``: the served ones (``422 currency_not_served`` for any other, ADR 0076)."""
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
    extra = sorted(set(body) - set(LAUNCH_FIELDS) - set(OPTIONAL_FIELDS))
    if missing or extra:
        raise Unprocessable(f"a launch needs exactly {', '.join(LAUNCH_FIELDS)}, and may "
                            f"carry {', '.join(OPTIONAL_FIELDS)} (missing: {missing}, "
                            f"unknown: {extra})", code="invalid_launch")
    check_window(body["timestamp"], now)
    for name in ("launch_id", "player_id"):
        if not p.is_id(body[name]):
            raise Unprocessable(f"{name} must be 1-128 characters of A-Z a-z 0-9 _ . : -",
                                code="invalid_launch")
    if not p.is_operator_session(body["operator_session"]):
        raise Unprocessable("operator_session must be 1-256 visible ASCII characters",
                            code="invalid_launch")
    if not isinstance(body["currency"], str) or body["currency"] not in currencies:
        raise Unprocessable(f"this server serves {', '.join(currencies)}, not "
                            f"{body['currency']!r}", code="currency_not_served")
    if body["mode"] not in (REAL, DEMO):
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
    options = _options(body, now, max_reality_check_seconds)
    return Launch(player_id=body["player_id"], language=body["language"],
                  market=body["market"], return_url=body["return_url"],
                  launch_id=body["launch_id"], operator_session=body["operator_session"],
                  options=options, mode=body["mode"], currency=body["currency"])


def _options(body: dict[str, Any], now: datetime, max_reality_check_seconds: int) -> Options:
    """The launch's optional fields, checked; a JSON ``null`` counts as not sent."""
    brand = body.get("brand")
    if brand is not None and not p.is_brand(brand):
        raise Unprocessable("brand must be 1-64 characters of A-Z a-z 0-9 _ . : -",
                            code="invalid_launch")
    interval = _seconds(body, "reality_check_seconds", max_reality_check_seconds,
                        "reality_check_out_of_range",
                        "at most the session token's lifetime (STARFEVER_TOKEN_TTL_SECONDS)")
    limit = _seconds(body, "session_time_limit_seconds", MAX_SESSION_TIME_LIMIT_SECONDS,
                     "session_time_limit_out_of_range", "at most a day")
    birth = _birth_date(body.get("birth_date"), now)
    return Options(brand=brand, reality_check_seconds=interval,
                   session_time_limit_seconds=limit, birth_date=birth)


def _seconds(body: dict[str, Any], name: str, most: int, code: str, why: str) -> int | None:
    """A whole number of seconds from :data:`MIN_INTERVAL_SECONDS` to ``most``: out of range,
    ``422 code``; not a whole number, ``422 invalid_launch``."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unprocessable(f"{name} must be a whole number of seconds, got {value!r}",
                            code="invalid_launch")
    if not MIN_INTERVAL_SECONDS <= value <= most:
        raise Unprocessable(f"{name} must be {MIN_INTERVAL_SECONDS}..{most} seconds ({why}), "
                            f"got {value}", code=code)
    return value


def _birth_date(value: object, now: datetime) -> date | None:
    """An ISO date (``YYYY-MM-DD``) of a player 18 or older; ``403 under_age`` for one
    younger (the operator checks ages, but a date that says under 18 never plays)."""
    if value is None:
        return None
    try:
        if not isinstance(value, str) or len(value) != 10:
            raise ValueError(value)
        birth = date.fromisoformat(value)
    except ValueError:
        raise Unprocessable(f"birth_date must be an ISO date (YYYY-MM-DD), got {value!r}",
                            code="invalid_launch") from None
    if birth.year < OLDEST_BIRTH_YEAR or birth > now.date():
        raise Unprocessable(f"birth_date {value} is not a plausible birth date",
                            code="invalid_launch")
    if age_on(birth, now.date()) < ADULT_AGE:
        raise Forbidden(f"the launch's birth_date says the player is under {ADULT_AGE}: "
                        "players under 18 do not play", code="under_age")
    return birth


def check_window(value: object, now: datetime, *, stale_code: str = "stale_launch",
                 invalid_code: str = "invalid_launch", what: str = "launch") -> None:
    """``409 stale_code`` unless a signed ``what`` was signed within 60 s before ``now`` and 30 s
    after (one replayed later, or signed ahead to be replayed, is refused): the window of the
    launch and of every other signed call of the operator (``api.operator_calls``, ADR 0067);
    ``422 invalid_code`` for a timestamp that is not ISO 8601 with its zone."""
    try:
        sent = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise Unprocessable("timestamp must be ISO 8601", code=invalid_code) from None
    if sent.tzinfo is None:
        raise Unprocessable("timestamp must name its zone (UTC: ...Z)", code=invalid_code)
    if not now - MAX_LAUNCH_AGE <= sent <= now + MAX_LAUNCH_AHEAD:
        raise Conflict(f"the {what}'s timestamp {value} is more than "
                       f"{int(MAX_LAUNCH_AGE.total_seconds())} s old or "
                       f"{int(MAX_LAUNCH_AHEAD.total_seconds())} s ahead of this server's clock "
                       "(a replay?)", code=stale_code)


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
                                    operator_session=request.operator_session,
                                    brand=request.options.brand,
                                    reality_check_seconds=request.options.reality_check_seconds,
                                    session_time_limit_seconds=(
                                        request.options.session_time_limit_seconds),
                                    birth_date=request.options.birth_date,
                                    currency=request.currency))
    except IntegrityError:
        raise _replayed(request.launch_id) from None
    free_rounds.join_open_campaigns(db, account_id, now)  # campaigns for every player
    return token, expires


def _replayed(launch_id: str) -> Conflict:
    return Conflict(f"the launch {launch_id!r} was used before: a launch is taken once "
                    "(send a new launch_id)", code="launch_replayed")


def exchange(db: Database, settings: Settings, launch_token: str) -> tuple[str, datetime]:
    """Open the session of a launch token (once); ``401 invalid_launch_token`` for a used,
    expired or unknown one. The launch's options take effect here, in the same transaction:
    the session keeps its brand and time limit, the player the reality-check interval (the
    server's when the launch set none) and the birth date (kept when the launch sent none)."""
    now = utcnow()
    digest = token_hash(settings, launch_token)
    with db.write() as session:
        claimed = session.execute(
            update(LaunchToken).where(LaunchToken.token_hash == digest,
                                      LaunchToken.used_at.is_(None),
                                      LaunchToken.expires_at > now)
            .values(used_at=now).returning(
                LaunchToken.account_id, LaunchToken.operator_session, LaunchToken.brand,
                LaunchToken.reality_check_seconds, LaunchToken.session_time_limit_seconds,
                LaunchToken.birth_date, LaunchToken.currency)).first()
        if claimed is None:
            raise Unauthorized("the launch token is used, expired or not valid; launch the "
                               "game again from the operator", code="invalid_launch_token")
        token = secrets.token_urlsafe(32)
        expires = now + timedelta(seconds=settings.token_ttl_seconds)
        account_id, operator_session, brand, interval, time_limit, birth, currency = claimed
        account = session.scalar(select(Account).where(Account.id == account_id)
                                 .with_for_update())
        if account is not None:  # as a log-in does: the reality check's clock is the player's
            account.reality_check_seconds = interval
            if birth is not None:
                account.birth_date = birth
            start_play_period(session, settings, account, now)
            market_rules.check_not_panicked(account, now)
        market_rules.end_other_sessions(session, settings, account_id, now)
        session.add(SessionToken(account_id=account_id, token_hash=token_hash(settings, token),
                                 created_at=now, expires_at=expires, reality_check_at=now,
                                 net_result=0, operator_session=operator_session, brand=brand,
                                 currency=currency,
                                 play_ends_at=None if time_limit is None
                                 else now + timedelta(seconds=time_limit)))
    return token, expires


def refuse_player_login(db: Database, username: str) -> None:
    """In operator mode only an operator account logs in with a password."""
    with db.read() as session:
        role = session.scalar(select(Account.role).where(Account.username == username))
    if role != "operator":
        raise Forbidden("in operator mode players come from the operator's launch, not from a "
                        "password log-in", code="operator_mode_launch_only")


__all__ = ["LANGUAGES", "LAUNCH_FIELDS", "LAUNCH_TTL", "MAX_LAUNCH_AGE", "MAX_LAUNCH_AHEAD",
           "MAX_SESSION_TIME_LIMIT_SECONDS", "MIN_INTERVAL_SECONDS", "OPTIONAL_FIELDS",
           "Launch", "Options", "check_launch", "check_window", "exchange", "launch",
           "refuse_player_login"]
