"""Operator accounts: a strong password, a second factor, and a log-in of their own.

An operator moves money (deposits, withdrawals) and reads every player, so the account gets
more than a player's: a password policy (:func:`check_operator_password`), a TOTP second
factor (RFC 6238, via ``pyotp``: 6 digits, 30-second steps, one step of clock skew either
way, each code good once), and its own log-in, ``POST /api/v1/operator/sessions``, throttled
apart from the players' (``operator_login_max_failures`` per operator from any address). The
public ``POST /sessions`` does not log operators in.
"""

from __future__ import annotations

import hmac
import re
import string
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import pyotp
from sqlalchemy import or_, select, update

from starfever.engine.errors import InputError
from starfever.server.db import Database
from starfever.server.models import OPERATOR, Account
from starfever.server.services import auth, devices, events
from starfever.server.services.errors import NotFound, ServiceError, Unauthorized, utcnow
from starfever.server.settings import Settings

if TYPE_CHECKING:
    from starfever.server.spin.wallets import LedgerWallet

ISSUER = "Star Fever"
MIN_LENGTH = 12
MIN_DISTINCT = 6
COMMON_WORDS = frozenset((
    "password", "passwort", "passwd", "qwerty", "qwertz", "letmein", "welcome", "admin",
    "administrator", "operator", "starfever", "casino", "jackpot", "iloveyou", "monkey",
    "dragon", "master", "secret", "changeme", "default", "login", "abc", "test", "guest",
    "root", "trustno", "sunshine", "football", "baseball", "hallo", "geheim", "passw", "pass",
))
"""Words that make a password guessable when, with digits and signs taken away, nothing else
is left (``Password123!``, ``operator2026``)."""
_RUNS = ("0123456789012345678901234567890", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
         "qwertyuiopasdfghjklzxcvbnm", "qwertzuiopasdfghjklyxcvbnm", "azertyuiopqsdfghjklmwxcvbn")


_LEET = str.maketrans("@4310$57!", "aaeiosstl")
"""Signs written for letters (``P@ssw0rd``)."""


class WeakPassword(InputError):
    """An operator password the policy refuses (the message says why)."""


def check_operator_password(username: str, password: str) -> None:
    """Refuse a weak operator password: under :data:`MIN_LENGTH` characters or over 128, all
    whitespace, fewer than :data:`MIN_DISTINCT` different characters, the name in it, a run
    of the keyboard or the alphabet (forwards or backwards), or nothing but a common word
    once digits and signs are taken away."""
    if not MIN_LENGTH <= len(password) <= 128:
        raise WeakPassword(f"an operator password must be {MIN_LENGTH}-128 characters")
    if not password.strip():
        raise WeakPassword("an operator password must not be all whitespace")
    lowered = password.lower()
    if len(set(lowered)) < MIN_DISTINCT:
        raise WeakPassword(f"an operator password needs at least {MIN_DISTINCT} different "
                           "characters")
    if username.lower() in lowered:
        raise WeakPassword("an operator password must not contain the operator's name")
    compact = "".join(lowered.split())
    core = re.sub(r"^[\W\d_]+|[\W\d_]+$", "", compact)  # P@ssw0rd2026! -> p@ssw0rd
    if any(part and (part in run or part in run[::-1])
           for part in (compact, core) for run in _RUNS):
        raise WeakPassword("an operator password must not be a run of the keyboard or the "
                           "alphabet")
    letters = "".join(c for c in core.translate(_LEET) if c in string.ascii_lowercase)
    if not letters or letters in COMMON_WORDS or \
            all(part in COMMON_WORDS for part in _words(letters)):
        raise WeakPassword("an operator password must not be a common word with digits or "
                           "signs added")


def _words(letters: str) -> list[str]:
    """``letters`` cut greedily into common words (what is left over stays one part)."""
    parts: list[str] = []
    rest = letters
    while rest:
        match = max((w for w in COMMON_WORDS if rest.startswith(w)), key=len, default=None)
        if match is None:
            return [letters + "?"]  # something else is in it: not only common words
        parts.append(match)
        rest = rest[len(match):]
    return parts


@dataclass(frozen=True, slots=True)
class NewOperator:
    """What ``starfever operator create`` shows once: the TOTP secret and its URI."""

    username: str
    totp_secret: str
    provisioning_uri: str


def _provisioning(username: str, secret: str) -> NewOperator:
    uri = pyotp.TOTP(secret).provisioning_uri(name=username, issuer_name=ISSUER)
    return NewOperator(username=username, totp_secret=secret, provisioning_uri=uri)


def create_operator(db: Database, settings: Settings, wallet: LedgerWallet, username: str,
                    password: str) -> NewOperator:
    """Create an operator with a fresh TOTP secret (the password checked by the policy)."""
    check_operator_password(username, password)
    secret = pyotp.random_base32()
    auth.register(db, wallet, username, password, role=OPERATOR, settings=settings,
                  totp_secret=secret)
    return _provisioning(username, secret)


def reset_totp(db: Database, username: str) -> NewOperator:
    """Give an operator a new TOTP secret (operators created before the second factor)."""
    secret = pyotp.random_base32()
    with db.write() as session:
        done = session.execute(update(Account).where(Account.username == username,
                                                     Account.role == OPERATOR)
                               .values(totp_secret=secret, totp_last_step=None))
        if not getattr(done, "rowcount", 0):
            raise NotFound(f"no operator {username!r}", code="operator_not_found")
    return _provisioning(username, secret)


def _matching_step(secret: str, code: str, now: datetime) -> int | None:
    """The time step whose code is ``code`` (now, or one step either side), else ``None``."""
    totp = pyotp.TOTP(secret)
    for offset in (0, -1, 1):
        if hmac.compare_digest(totp.at(now, counter_offset=offset), code):
            return totp.timecode(now) + offset
    return None


def login_operator(db: Database, settings: Settings, username: str, password: str, code: str,
                   client: str | None = None,
                   device_token: str | None = None) -> tuple[str, datetime]:
    """Check password and TOTP code; open a session. Every refusal is ``401
    invalid_credentials`` (a code reused is ``otp_reused``), counted by the operator throttle
    (``429 too_many_attempts``). Each log-in and each refusal is a significant event
    (``operator_login``, ``operator_login_failed`` with the refusal's code). From a known
    device of the operator (``device_token``, ``services.devices``) the log-in is throttled on
    that device alone: the second factor is the gate there, and nobody's wrong guesses lock the
    operator out of it (ADR 0052)."""
    try:
        return _login_operator(db, settings, username, password, code, client, device_token)
    except ServiceError as error:
        events.write(db, "operator_login_failed", actor=username, client=client,
                     detail={"reason": error.code})
        raise


def _login_operator(db: Database, settings: Settings, username: str, password: str, code: str,
                    client: str | None, device_token: str | None) -> tuple[str, datetime]:
    device = devices.known_device(settings, username, device_token, utcnow())
    with auth.hashing_slot(settings, device or client or "", trusted=device is not None):
        attempt_id = auth.claim_attempt(db, settings, username, (client or "")[:64], utcnow(),
                                        operator=True, device=device)
        account_id, role = auth.check_password(db, username, password, settings)
    wrong = Unauthorized("wrong username, password or code", code="invalid_credentials")
    if account_id is None or role != OPERATOR:
        raise wrong
    now = utcnow()
    with db.read() as session:
        secret = session.scalar(select(Account.totp_secret).where(Account.id == account_id))
    if not secret:
        raise Unauthorized(f"operator {username!r} has no second factor yet: run "
                           f"'starfever operator totp {username}'", code="otp_not_set_up")
    step = _matching_step(secret, code, now)
    if step is None:
        raise wrong
    with db.write() as session:  # a code is good once, even for two requests at once
        done = session.execute(update(Account).where(
            Account.id == account_id,
            or_(Account.totp_last_step.is_(None), Account.totp_last_step < step))
            .values(totp_last_step=step))
        if not getattr(done, "rowcount", 0):
            raise Unauthorized("this code was used already; wait for the next one",
                               code="otp_reused")
        events.record(session, "operator_login", actor=username, client=client, detail={})
    auth.forget_attempt(db, attempt_id)
    auth.remember_client(db, username, client)
    return auth.open_session(db, settings, account_id)
