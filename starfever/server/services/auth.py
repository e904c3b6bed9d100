"""Accounts and sessions: argon2 password hashes, bearer tokens stored only as an HMAC."""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import (
    OPERATOR,
    PLAYER,
    ROLES,
    Account,
    KnownClient,
    LoginFailure,
    RegistrationAttempt,
    SessionToken,
    Wallet,
)
from starfever.server.services import devices, market_rules
from starfever.server.services.control_rules import check_not_terminated
from starfever.server.services.errors import (
    Conflict,
    Forbidden,
    TooManyRequests,
    Unauthorized,
    Unprocessable,
    utcnow,
)
from starfever.server.services.hash_gate import HashGate
from starfever.server.services.principal import Principal, check_session_live
from starfever.server.services.protection_rules import ADULT_AGE, age_on, interval_of
from starfever.server.settings import Settings

if TYPE_CHECKING:
    from starfever.server.spin.wallets import LedgerWallet

_hasher = PasswordHasher()
_cheap_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
"""A test server's (``STARFEVER_TEST_CHEAP_PASSWORD_HASHES``, test mode in development only):
the same argon2id at a cost a test suite can pay hundreds of times (ADR 0045)."""
_DUMMY_HASH = ("$argon2id$v=19$m=65536,t=3,p=4$BLtZZgq7XvzTc+YLIUVSSg"
               "$MQYnUb9AWmx90B8686SalyS8SxV6hGSi5CHyLznRWHM")
"""The hash an unknown name is checked against, so that it costs what a known one costs: made
once by ``_hasher.hash("not a password of anyone")`` and written here, instead of at every
import (0.3 CPU s in every command and server start). Safe as a constant: argon2 checks a
password by hashing it again with the cost and salt the stored string records, so checking
against this costs the full 64 MiB and three passes as ever; it belongs to no account, so its
public salt and digest let no one in (an unknown name is refused whatever matches), and
``test_the_unknown_name_hashes_record_their_hashers_cost`` keeps its cost equal to
``_hasher``'s (a changed default of argon2-cffi fails it)."""
_CHEAP_DUMMY_HASH = ("$argon2id$v=19$m=1024,t=1,p=1$9t55JgoOQ1KFSqHvB/xL/w"
                     "$Fd7ypVLOmjeLlhF6cweCA2u9RO/6JsuA10bFjpFaFhU")
"""The same for a test server with cheap hashes (``_cheap_hasher``'s cost)."""


def _hasher_of(settings: Settings) -> tuple[PasswordHasher, str]:
    """The hasher of new passwords and the hash an unknown name is checked against."""
    if settings.test_cheap_password_hashes and settings.test_mode \
            and settings.environment == "development":
        return _cheap_hasher, _CHEAP_DUMMY_HASH
    return _hasher, _DUMMY_HASH


HASH_WAIT_S = 30.0
"""How long a request waits for a hashing slot before ``503 server_busy``."""
_gate: tuple[tuple[int, int, int], HashGate] | None = None
_gate_guard = threading.Lock()


@contextmanager
def hashing_slot(settings: Settings, source: str = "", *,
                 trusted: bool = False) -> Iterator[None]:
    """Hold one of the process's ``max_concurrent_hashes`` slots for an argon2 hash or check
    (64 MiB each): 40 concurrent registrations took the server from 164 to 1,684 MiB and
    ``/health`` to 2 s; now they wait at most :data:`HASH_WAIT_S`, bounded per ``source`` (the
    caller's address, or its known device: ``trusted``) and served fairly
    (``services.hash_gate``, ADR 0052)."""
    global _gate
    shape = (settings.max_concurrent_hashes, settings.max_hashes_per_address,
             settings.max_hash_waiters)
    with _gate_guard:
        if _gate is None or _gate[0] != shape:
            _gate = (shape, HashGate(*shape))
        gate = _gate[1]
    with gate.held(source, trusted, HASH_WAIT_S):
        yield


def token_hash(settings: Settings, token: str) -> str:
    """What is stored of a token: HMAC-SHA256 under the server's secret key."""
    return hmac.new(settings.secret_key.encode(), token.encode(), hashlib.sha256).hexdigest()


def check_player_age(birth_date: date | None) -> None:
    """A new player needs a known birth date of :data:`ADULT_AGE` years or more."""
    if birth_date is None:
        raise Unprocessable("a player's birth date is required", code="birth_date_required")
    if age_on(birth_date, utcnow().date()) < ADULT_AGE:
        raise Forbidden(f"players must be {ADULT_AGE} or older", code="under_age")


def claim_registration(db: Database, settings: Settings, client: str) -> int:
    """Count a registration from ``client`` (its row committed first, as log-in attempts are,
    so the limit holds across worker processes); ``429 too_many_registrations`` past
    ``registrations_per_address`` in the window, before any password is hashed. Returns the
    row's id (:func:`forget_registration` takes it back)."""
    now = utcnow()
    window = timedelta(seconds=settings.registration_window_seconds)
    with db.write() as session:
        attempt = RegistrationAttempt(client=client[:64], created_at=now)
        session.add(attempt)
        session.flush()
        attempt_id = attempt.id
    with db.write() as session:
        recent = (RegistrationAttempt.client == client[:64],
                  RegistrationAttempt.created_at > now - window)
        others = session.scalar(select(func.count()).select_from(RegistrationAttempt)
                                .where(*recent, RegistrationAttempt.id != attempt_id)) or 0
        if others < settings.registrations_per_address:
            return attempt_id
        session.execute(delete(RegistrationAttempt).where(RegistrationAttempt.id == attempt_id))
        oldest = session.scalar(select(func.min(RegistrationAttempt.created_at))
                                .where(*recent)) or now
    retry_after = max(1, math.ceil((oldest + window - now).total_seconds()))
    raise TooManyRequests(f"too many registrations from this address; try again in "
                          f"{retry_after} s", retry_after=retry_after,
                          code="too_many_registrations")


def forget_registration(db: Database, attempt_id: int) -> None:
    """A registration refused before its password was hashed (the hashing gate) does not
    count against its address."""
    with db.write() as session:
        session.execute(delete(RegistrationAttempt).where(RegistrationAttempt.id == attempt_id))


def register(db: Database, wallet: LedgerWallet, username: str, password: str, *,
             role: str = PLAYER, birth_date: date | None = None,
             settings: Settings | None = None, totp_secret: str | None = None,
             client: str = "", currency: str = "EUR") -> Account:
    """Create an account (players get an empty wallet in ``currency``); ``username_taken`` if
    it exists.
    A player needs a birth date of 18 years or more (``under_age``): this embedded wallet is
    where the game learns the player's age (RULES.md, "Players")."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    if role == PLAYER:
        check_player_age(birth_date)
    with hashing_slot(settings or Settings(), client):
        # slow on purpose (outside the transaction)
        password_hash = _hasher_of(settings or Settings())[0].hash(password)
    now = utcnow()
    try:
        with db.write() as session:
            if session.scalar(select(Account.id).where(Account.username == username)):
                raise Conflict(f"username {username!r} is taken", code="username_taken")
            account = Account(username=username, password_hash=password_hash, role=role,
                              birth_date=birth_date, created_at=now, totp_secret=totp_secret)
            session.add(account)
            session.flush()
            if role == PLAYER:
                wallet.open(session, account.id, now, currency)
            return account
    except IntegrityError:
        raise Conflict(f"username {username!r} is taken", code="username_taken") from None


def claim_attempt(db: Database, settings: Settings, username: str, client: str,
                   now: datetime, *, operator: bool = False, device: str | None = None) -> int:
    """Record this attempt as a failure *before* the password is checked, then count: every
    attempt's row is committed before it counts the others, so across all worker processes the
    limits below hold (concurrent attempts at the edge may both be refused, never both
    admitted). Returns the attempt's row id; raises ``too_many_attempts`` (its row removed)
    when over:

    - ``login_max_failures`` per username from one address per window (a lock-out there only);
    - ``login_max_failures_per_address`` per address, whatever the usernames, except for a
      username that logged in from this address within :data:`KNOWN_CLIENT_DAYS` (so the
      players behind a shared address keep logging in while someone there sprays names);
    - per account, from any address: past ``login_account_free_failures`` in the window, each
      attempt must wait 2, 4, 8, ... seconds (at most ``login_account_max_backoff_seconds``)
      after the newest failure: a backoff, not a lock-out, so an attacker slows guessing on an
      account to a crawl without locking its owner out for long;
    - operator log-ins (``operator``): ``operator_login_max_failures`` per username from any
      address per window, a lock-out (the operator's second factor makes it rare to hit).

    A known device of the account (``device``, ``services.devices``: a client that logged in
    to it before) is held by none of these but the first, counted on itself alone: nobody
    else's failures, from however many addresses, refuse the owner's right credentials there
    (ADR 0052). Only its own failures lock it, as an address's would (a stolen token)."""
    window = timedelta(seconds=settings.login_window_seconds)
    who = device or client
    with db.write() as session:
        attempt = LoginFailure(username=username, client=who, created_at=now)
        session.add(attempt)
        session.flush()
        attempt_id = attempt.id
    limits: list[tuple[int, tuple[ColumnElement[bool], ...], str]] = [
        (settings.login_max_failures, (LoginFailure.username == username,
                                       LoginFailure.client == who),
         f"for {username!r} from this " + ("device" if device else "address"))]
    if device is None and not _known_client(db, username, client, now):
        limits.append((settings.login_max_failures_per_address,
                       (LoginFailure.client == client,), "from this address"))
    if operator and device is None:
        limits.insert(0, (settings.operator_login_max_failures,
                          (LoginFailure.username == username,), f"for operator {username!r}"))
    refused: tuple[str, int] | None = None
    with db.write() as session:
        for most, which, what in limits:
            recent = (LoginFailure.created_at > now - window, *which)
            others = session.scalar(select(func.count()).select_from(LoginFailure)
                                    .where(*recent, LoginFailure.id != attempt_id))
            if (others or 0) >= most:
                oldest = session.scalar(select(func.min(LoginFailure.created_at))
                                        .where(*recent, LoginFailure.id != attempt_id))
                refused = (what, _seconds_until((oldest or now) + window, now))
                break
        if refused is None and device is None:
            refused = _account_backoff(session, settings, username, attempt_id, now)
        if refused is not None:
            session.execute(delete(LoginFailure).where(LoginFailure.id == attempt_id))
    if refused is None:
        return attempt_id
    what, retry_after = refused  # raised once the removal of this attempt's row is committed
    raise TooManyRequests(f"too many failed log-ins {what}; try again in {retry_after} s",
                          retry_after=retry_after)


KNOWN_CLIENT_DAYS = 90
"""How long a successful log-in from an address spares that username the per-address limit."""


def _known_client(db: Database, username: str, client: str, now: datetime) -> bool:
    with db.read() as session:
        seen = session.scalar(select(KnownClient.last_login_at).where(
            KnownClient.username == username, KnownClient.client == client))
    return seen is not None and seen > now - timedelta(days=KNOWN_CLIENT_DAYS)


def remember_client(db: Database, username: str, client: str | None) -> None:
    """A log-in of ``username`` from ``client`` succeeded: remember the address."""
    if not client:
        return
    now = utcnow()
    try:
        with db.write() as session:
            row = session.get(KnownClient, (username, client[:64]))
            if row is None:
                session.add(KnownClient(username=username, client=client[:64],
                                        last_login_at=now))
            else:
                row.last_login_at = now
    except IntegrityError:
        pass  # a concurrent log-in from the same address remembered it first


def _seconds_until(when: datetime, now: datetime) -> int:
    return max(1, math.ceil((when - now).total_seconds()))


def _account_backoff(session: Session, settings: Settings, username: str, attempt_id: int,
                     now: datetime) -> tuple[str, int] | None:
    """The per-account backoff of :func:`claim_attempt`, from any address."""
    recent = (LoginFailure.username == username, LoginFailure.id != attempt_id,
              LoginFailure.created_at > now - timedelta(seconds=settings.login_window_seconds))
    failures, newest = session.execute(select(func.count(), func.max(LoginFailure.created_at))
                                       .where(*recent)).one()
    over = int(failures or 0) - settings.login_account_free_failures
    if over < 0 or newest is None:
        return None
    wait = timedelta(seconds=min(2 ** min(over + 1, 30),
                                 settings.login_account_max_backoff_seconds))
    if newest + wait <= now:
        return None
    return f"for {username!r}", _seconds_until(newest + wait, now)


def login(db: Database, settings: Settings, username: str, password: str,
          client: str | None = None, device_token: str | None = None) -> tuple[str, datetime]:
    """Check a player's password and open a session; return the bearer token and its expiry.
    More than ``login_max_failures`` failures for one username from one address (``client``,
    the caller's IP address) within the window answer ``429 too_many_attempts`` there, with
    the seconds to wait, whatever the password; the player can still log in from elsewhere,
    so nobody can lock a player out by guessing wrong on purpose. Each account also backs off
    from any address, and one address failing too often gets 429 for all (:func:`claim_attempt`).
    Operators log in elsewhere (``services.operator_accounts``): here they are refused as a wrong
    password is (nothing tells an operator's account from another). A ``device_token`` of
    the account (``services.devices``) makes this a known client: throttled on its own."""
    device = devices.known_device(settings, username, device_token, utcnow())
    # the hashing gate first: a flood is held there before it costs any database work
    with hashing_slot(settings, device or client or "", trusted=device is not None):
        attempt_id = claim_attempt(db, settings, username, (client or "")[:64], utcnow(),
                                   device=device)
        account_id, role = check_password(db, username, password, settings)
    if account_id is None or role != PLAYER:
        raise Unauthorized("wrong username or password", code="invalid_credentials")
    forget_attempt(db, attempt_id)
    remember_client(db, username, client)
    return open_session(db, settings, account_id)


def check_password(db: Database, username: str, password: str,
                   settings: Settings) -> tuple[int | None, str | None]:
    """The account id and role if ``password`` is the account's, else ``(None, None)``; an
    unknown name costs the same hash check as a known one. The caller holds a
    :func:`hashing_slot`."""
    with db.read() as session:
        account = session.scalar(select(Account).where(Account.username == username))
        stored = account.password_hash if account else _hasher_of(settings)[1]
        account_id = account.id if account else None
        role = account.role if account else None
    try:
        _hasher.verify(stored, password)  # at the cost the stored hash records
    except (VerificationError, InvalidHashError):
        return None, None
    return account_id, role


def forget_attempt(db: Database, attempt_id: int) -> None:
    """A log-in succeeded: its attempt is not a failure."""
    with db.write() as session:
        session.execute(delete(LoginFailure).where(LoginFailure.id == attempt_id))


def open_session(db: Database, settings: Settings, account_id: int) -> tuple[str, datetime]:
    """A new session of the account: its bearer token and expiry. In a market with one session
    per player it ends the player's other live sessions (``market_rules.end_other_sessions``,
    under the account row's lock)."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    expires = now + timedelta(seconds=settings.token_ttl_seconds)
    with db.write() as session:
        account = session.scalar(select(Account).where(Account.id == account_id)
                                 .with_for_update())
        if account is not None:
            start_play_period(session, settings, account, now)
        market_rules.end_other_sessions(session, settings, account_id, now)
        # the session plays in its wallet's currency (an operator account has none: EUR)
        currency = session.scalar(select(Wallet.currency).where(Wallet.account_id == account_id))
        session.add(SessionToken(account_id=account_id, token_hash=token_hash(settings, token),
                                 created_at=now, expires_at=expires, reality_check_at=now,
                                 net_result=0, currency=currency or "EUR"))
    return token, expires


def start_play_period(session: Session, settings: Settings, account: Account,
                      now: datetime) -> None:
    """At log-in: start a new play period (elapsed time and net result from zero, the next
    check one interval away) only when the player has none yet, or has been away: no live
    session and none ended within the last interval. A fresh log-in beside a live session,
    or straight after logging out, keeps the clock, so a due check stays due."""
    if account.reality_check_at is not None:
        live = session.scalar(select(func.count()).select_from(SessionToken).where(
            SessionToken.account_id == account.id, SessionToken.revoked_at.is_(None),
            SessionToken.expires_at > now))
        if live:
            return
        ends = session.execute(select(
            func.max(SessionToken.revoked_at),
            func.max(SessionToken.expires_at).filter(SessionToken.revoked_at.is_(None)))
            .where(SessionToken.account_id == account.id)).one()
        last_end = max((end for end in ends if end is not None), default=None)
        interval = timedelta(seconds=interval_of(settings, account.reality_check_seconds))
        if last_end is not None and now - last_end < interval:
            return
    account.play_started_at = account.reality_check_at = now
    account.net_result = 0


def authenticate(db: Database, settings: Settings, token: str) -> Principal:
    """The principal of a live token; ``invalid_token`` or ``token_expired`` otherwise."""
    return _authenticate(db, settings, token_hash(settings, token))


def authenticate_spinner(db: Database, settings: Settings, token: str) -> Principal:
    """:func:`authenticate` for a spin, which lets a session the operator terminated through:
    the spin's own transaction refuses its new rounds (``401 session_terminated``) but answers
    the retry of a round already settled with that round, as it moves no money (ADR 0067)."""
    return _authenticate(db, settings, token_hash(settings, token), spinning=True)


def _authenticate(db: Database, settings: Settings, digest: str, *,
                  spinning: bool = False) -> Principal:
    with db.read() as session:
        row = session.execute(
            select(SessionToken, Account.username, Account.role)
            .join(Account, Account.id == SessionToken.account_id)
            .where(SessionToken.token_hash == digest)).first()
    if row is None:
        raise Unauthorized("the bearer token is not valid", code="invalid_token")
    token_row, username, role = row
    check_session_live(token_row.revoked_at, token_row.expires_at, utcnow(),
                       token_row.ended_because)
    if not spinning:
        check_not_terminated(token_row.terminated_at)
    principal = Principal(account_id=token_row.account_id, username=username, role=role,
                          session_id=token_row.id, play_ends_at=token_row.play_ends_at,
                          currency=token_row.currency)
    if len(_known) >= KNOWN_TOKENS_MAX:
        _known.clear()
    _known[(id(db), digest)] = (principal, token_row.expires_at)
    return principal


KNOWN_TOKENS_MAX = 100_000
_known: dict[tuple[int, str], tuple[Principal, datetime]] = {}
"""Principals of tokens this process has seen valid, with their expiry (spins only)."""


def known_spinner(db: Database, settings: Settings, token: str) -> Principal | None:
    """The principal of a token this process has already seen valid (:func:`authenticate`
    remembers it) and not yet expired, from memory, without a query; ``None`` otherwise. Only
    for a service that checks, in its own transaction, that the session is still live
    (``revoked_at``, ``expires_at``): the spin settles do (:func:`check_session_live`), so a
    log-out by another process still stops the next spin."""
    known = _known.get((id(db), token_hash(settings, token)))
    if known is not None and known[1] > utcnow():
        return known[0]
    return None


def logout(db: Database, principal: Principal) -> None:
    """End the token's session."""
    with db.write() as session:
        row = session.get(SessionToken, principal.session_id)
        if row is not None and row.revoked_at is None:
            row.revoked_at = utcnow()


def require_role(principal: Principal, role: str) -> Principal:
    """The principal if it has ``role``; ``Forbidden`` otherwise."""
    if principal.role != role:
        what = "an operator" if role == OPERATOR else "a player"
        raise Forbidden(f"this needs {what} account", code=f"{role}_only")
    return principal
