"""Server settings, read from ``STARFEVER_*`` environment variables (the ``serve`` command sets
them from its options, so every uvicorn worker process sees the same settings)."""

from __future__ import annotations

import logging
import math
import os
import re
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from starfever.engine.errors import InputError

log = logging.getLogger("starfever.server")

DEFAULT_DATABASE_URL = "sqlite:///starfever.db"
DEVELOPMENT_SECRET = "development-only-secret-change-me"
DEVELOPMENT_AUDIT_KEY = b"development-only-audit-key-change-me!"
"""The chain key when ``STARFEVER_AUDIT_KEY_FILE`` is not set (development only: anyone can
read it here, so it proves nothing)."""
MIN_AUDIT_KEY_BYTES = 32
MAX_KEY_FILE_BYTES = 64 * 1024
"""A key file larger than this is not a key (and is not read whole)."""
MIN_PRODUCTION_SECRET = 32
"""The shortest ``STARFEVER_SECRET_KEY`` production accepts (``openssl rand -hex 32`` gives 64)."""
MIN_ESTIMATED_BITS = 80
"""The least entropy production accepts in a secret or a key, estimated as the length times
the Shannon entropy of its characters' (or bytes') frequencies: 32 random hex digits score 96 or
more (the least of 10,000 draws), 32 random bytes 144, sixteen ``a`` 0 (ADR 0053). A floor
that catches placeholders and typos, not a proof of randomness."""
TOKEN_TTL_BOUNDS = (300, 24 * 3600)
"""The bearer-token lifetimes production accepts, in seconds: 5 minutes to a day."""
ENVIRONMENTS = ("development", "production")
MAX_WEEKLY_LIMIT = 10**9
"""The largest weekly deposit limit a setting may give (EUR 10 million, the largest amount a
request may carry): a typo of a few zeros is refused rather than run."""
MAX_YOUNG_AGE = 130


_SECRET_QUERY_KEYS = ("pass", "pwd", "secret", "token")
"""A query parameter whose name contains one of these is masked (``password=``,
``sslpassword=``, ``passfile`` is harmless but masked too)."""


def shown_url(url: str) -> str:
    """A database URL with any password masked: the one after ``user:`` and the value of any
    secret-looking query parameter (``?password=...``)."""
    masked = re.sub(r"(//[^:/@?#]*:)[^@/?#]*@", r"\1***@", url)
    base, sep, query = masked.partition("?")
    if not sep:
        return masked
    parts = []
    for part in query.split("&"):
        key, eq, _ = part.partition("=")
        secret = eq and any(word in key.lower() for word in _SECRET_QUERY_KEYS)
        parts.append(f"{key}=***" if secret else part)
    return base + "?" + "&".join(parts)


def secrets_of(url: str) -> list[str]:
    """The password-like values in ``url`` (to scrub them from error messages)."""
    found = [m.group(1) for m in re.finditer(r"//[^:/@?#]*:([^@/?#]+)@", url)]
    _, _, query = url.partition("?")
    for part in query.split("&"):
        key, eq, value = part.partition("=")
        if eq and value and any(word in key.lower() for word in _SECRET_QUERY_KEYS):
            found.append(value)
    return found


MAX_DRAIN_GRACE_S = 300
"""The longest pre-stop grace (``STARFEVER_DRAIN_GRACE_SECONDS``)."""


class SettingsError(InputError):
    """Settings the server refuses to start with."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything an operator can configure."""

    database_url: str = DEFAULT_DATABASE_URL
    """SQLAlchemy-style URL: ``sqlite:///file.db`` or ``postgresql://user@host/db``."""
    model: str = "default"
    """The math model new rounds are played with (name or path)."""
    market: str = "at"
    """The market profile (``starfever.markets``): what the presentation may do, the least
    time per round and the largest stake, enforced here and shown by the client."""
    currencies: str = ""
    """The served currencies' ISO 4217 codes, separated by commas (``starfever.currencies``,
    ADR 0076); the first is a new ledger wallet's. Empty: the market's ``currency``, or EUR."""
    environment: str = "development"
    """``development`` or ``production``; production refuses the development secret."""
    secret_key: str = DEVELOPMENT_SECRET
    """Key of the HMAC under which session tokens are stored."""
    token_ttl_seconds: int = 12 * 3600
    """How long a session token lives."""
    reality_check_seconds: int = 60 * 60
    """Interval of the reality check."""
    weekly_deposit_limit: int = 40_000
    """Default rolling 7-day deposit limit in cents."""
    young_weekly_deposit_limit: int = 20_000
    """Default limit for players younger than :attr:`young_age` (birth date known)."""
    young_age: int = 26
    """Players younger than this get the lower default limit."""
    limit_increase_delay_seconds: int = 72 * 3600
    """A raised deposit limit takes effect after this delay; a lowered one at once."""
    max_body_bytes: int = 16 * 1024
    """Requests with a larger body are refused with 413."""
    login_max_failures: int = 5
    """Failed log-ins for one username from one address within :attr:`login_window_seconds`
    before that address gets 429 for that username (other addresses can still log in)."""
    login_max_failures_per_address: int = 200
    """Failed log-ins from one address, whatever the usernames, within the window before that
    address gets 429 for every username (one address spraying many names). High, because
    many players may share one address (carrier NAT, an office): guessing at one account is
    held by the per-account backoff instead."""
    login_account_free_failures: int = 10
    """Failed log-ins for one username, from any address, within the window before each
    further attempt must wait (2 s, doubling, at most
    :attr:`login_account_max_backoff_seconds`) after the newest failure."""
    login_account_max_backoff_seconds: int = 300
    """The longest wait of the per-account backoff."""
    operator_login_max_failures: int = 3
    """Failed operator log-ins for one operator, from any address, within the window before
    that operator's log-in is refused everywhere until the window has passed."""
    forwarded_allow_ips: str = ""
    """Addresses (comma-separated IPs or networks) of reverse proxies whose
    ``X-Forwarded-For`` / ``X-Forwarded-Proto`` are believed; empty (the default): none, the
    client is the TCP peer. Without it, anyone could send a forged header and be throttled
    (or lock out others) as any address."""
    login_window_seconds: int = 300
    """The brute-force window: a failure stops counting this long after it happened."""
    registrations_per_address: int = 20
    """Registrations from one address within :attr:`registration_window_seconds` before that
    address gets ``429 too_many_registrations``."""
    registration_window_seconds: int = 3600
    """The registration throttle's window."""
    demo_sessions_per_address: int = 20
    """Demo sessions one address may open in an hour (ADR 0066): one more is ``429
    too_many_demo_sessions``."""
    demo_spins_per_address: int = 120
    """Demo spins one address may play in a minute (ADR 0066): one more is ``429
    too_many_demo_spins``."""
    max_concurrent_hashes: int = 2
    """Password hashes (argon2, 64 MiB each) one server process runs at once; more wait."""
    max_hashes_per_address: int = 2
    """Password checks one address (or one known device) may have running or waiting in one
    server process; one more is ``429 too_many_concurrent`` (ADR 0052)."""
    max_hash_waiters: int = 16
    """Password checks that may wait for a slot in one server process; past it the one that
    would be served last is ``503 server_busy`` (ADR 0052)."""
    request_read_timeout_seconds: int = 10
    """A request must arrive whole (head and body) within this many seconds of the connection
    opening or of the previous response; else the connection is closed (half-sent requests
    must not hold connections open)."""
    keep_alive_seconds: int = 5
    """An idle keep-alive connection is closed after this many seconds (uvicorn's
    ``timeout_keep_alive``)."""
    test_mode: bool = False
    """``STARFEVER_TEST_MODE=1``: spins may carry ``test_draws``. Never in production."""
    test_clock_file: str = ""
    """A file holding how many milliseconds the server's clock is moved (tests move a real
    server's clock with it, ``starfever.server.clock``); accepted only with
    ``STARFEVER_TEST_MODE=1`` in development (ADR 0041)."""
    test_cheap_password_hashes: bool = False
    """``STARFEVER_TEST_CHEAP_PASSWORD_HASHES=1``: new password hashes cost 1 MiB and one pass
    instead of 64 MiB and three (``services.auth``), so a test suite's hundreds of players and
    log-ins do not spend minutes hashing; accepted only with ``STARFEVER_TEST_MODE=1`` in
    development (ADR 0045). A hash records its own cost, so one made without it is checked at
    its full cost."""
    drain_seconds: int = 30
    """On SIGTERM, how long the server drains at most (new spins answered 503, the spins
    taken finished) before it shuts down."""
    drain_grace_seconds: int = 5
    """On SIGTERM, how long the server first goes on serving everything while ``/readyz``
    answers 503, so that the load balancer takes it out before it refuses a spin (0: drain
    at once; at most 300)."""
    metrics_token: str = ""
    """A bearer token ``/metrics`` requires; empty (the default): ``/metrics`` answers only
    loopback and private addresses."""
    audit_key_file: str = ""
    """A file holding the key (at least 32 bytes) of the HMAC that chains rounds and cashier
    entries and signs chain statements; kept outside the database, so an insider who can
    write the database cannot forge the chain. Required in production."""

    approved_models: str = ""
    """SHA-256 hashes (``starfever rtp`` prints a model's) of the models this installation may
    play, separated by commas or spaces. In production the server plays only an approved
    model and refuses to start without a list (ADR 0020); in development a model not listed
    is only warned about."""

    @property
    def approved_model_hashes(self) -> tuple[str, ...]:
        """The approved models' hashes, sorted, without repeats."""
        return tuple(sorted(set(self.approved_models.replace(",", " ").lower().split())))

    @property
    def served_currencies(self) -> tuple[str, ...]:
        """The served currencies' codes in order (checked by :meth:`check`)."""
        from starfever.currencies import DEFAULT_CURRENCY, market_currency, parse_currencies

        if self.currencies:
            return parse_currencies(self.currencies)
        return (market_currency(self.market) or DEFAULT_CURRENCY,)

    def chain_key(self) -> bytes:
        """The chain's HMAC key: the key file's content, or the development key."""
        if not self.audit_key_file:
            return DEVELOPMENT_AUDIT_KEY
        return _read_key(self.audit_key_file)

    @property
    def is_postgres(self) -> bool:
        """Whether the database is PostgreSQL."""
        return self.database_url.startswith(("postgresql", "postgres:"))

    def check(self) -> Settings:
        """Refuse unsafe or impossible settings; return self."""
        if self.environment not in ENVIRONMENTS:
            raise SettingsError(f"STARFEVER_ENV must be one of {', '.join(ENVIRONMENTS)}, "
                                f"got {self.environment!r}")
        if self.environment != "development" and self.secret_key == DEVELOPMENT_SECRET:
            raise SettingsError("STARFEVER_SECRET_KEY must be set outside development")
        if self.environment != "development" and self.test_mode:
            raise SettingsError("STARFEVER_TEST_MODE is refused in production")
        if self.test_clock_file and not (self.test_mode and self.environment == "development"):
            raise SettingsError("STARFEVER_TEST_CLOCK_FILE is accepted only with "
                                "STARFEVER_TEST_MODE=1 in development")
        if self.test_cheap_password_hashes and not (self.test_mode
                                                    and self.environment == "development"):
            raise SettingsError("STARFEVER_TEST_CHEAP_PASSWORD_HASHES is accepted only with "
                                "STARFEVER_TEST_MODE=1 in development")
        if self.environment != "development" and not self.audit_key_file:
            raise SettingsError("STARFEVER_AUDIT_KEY_FILE must be set outside development")
        if self.audit_key_file:
            key = self.chain_key()  # a regular file, readable and long enough
            if self.environment != "development":
                _check_strength("STARFEVER_AUDIT_KEY_FILE", key,
                                f"the key in {self.audit_key_file!r}")
        for digest in self.approved_model_hashes:
            if not re.fullmatch(r"[0-9a-f]{64}", digest):
                raise SettingsError(f"STARFEVER_APPROVED_MODELS: {digest[:80]!r} is not a "
                                    "SHA-256 in hex (64 characters 0-9 a-f)")
        if self.environment != "development" and not self.approved_model_hashes:
            raise SettingsError("STARFEVER_APPROVED_MODELS must list the SHA-256 of every model "
                                "approved to play outside development")
        from starfever.markets import UnknownMarket, load_market

        try:
            load_market(self.market)
        except UnknownMarket as error:
            raise SettingsError(f"STARFEVER_MARKET: {error}") from None
        self._check_currencies()
        if len(self.secret_key) < 16:
            raise SettingsError("STARFEVER_SECRET_KEY must be at least 16 characters")
        if self.environment != "development":
            if len(self.secret_key) < MIN_PRODUCTION_SECRET:
                raise SettingsError(f"STARFEVER_SECRET_KEY must be at least "
                                    f"{MIN_PRODUCTION_SECRET} characters outside development")
            _check_strength("STARFEVER_SECRET_KEY", self.secret_key.encode(), "the secret")
            low, high = TOKEN_TTL_BOUNDS
            if not low <= self.token_ttl_seconds <= high:
                raise SettingsError(f"STARFEVER_TOKEN_TTL_SECONDS must be {low}..{high} outside "
                                    f"development, got {self.token_ttl_seconds}")
        if not self.database_url.startswith(("sqlite", "postgresql", "postgres:")):
            raise SettingsError(f"unsupported database URL {shown_url(self.database_url)!r}: "
                                "use sqlite:///FILE or postgresql://...")
        for name in ("token_ttl_seconds", "reality_check_seconds", "weekly_deposit_limit",
                     "young_weekly_deposit_limit", "max_body_bytes", "login_max_failures",
                     "login_max_failures_per_address", "login_window_seconds",
                     "login_account_free_failures", "login_account_max_backoff_seconds",
                     "operator_login_max_failures",
                     "request_read_timeout_seconds", "keep_alive_seconds",
                     "registrations_per_address", "registration_window_seconds",
                     "demo_sessions_per_address", "demo_spins_per_address",
                     "max_concurrent_hashes", "max_hashes_per_address", "max_hash_waiters",
                     "drain_seconds"):
            if getattr(self, name) <= 0:
                raise SettingsError(f"{ENV_NAMES[name]} must be positive, "
                                    f"got {getattr(self, name)}")
        for name in ("weekly_deposit_limit", "young_weekly_deposit_limit"):
            if getattr(self, name) > MAX_WEEKLY_LIMIT:
                raise SettingsError(f"{ENV_NAMES[name]} must be at most {MAX_WEEKLY_LIMIT} "
                                    f"cents, got {getattr(self, name)}")
        if not 0 <= self.drain_grace_seconds <= MAX_DRAIN_GRACE_S:
            raise SettingsError(f"STARFEVER_DRAIN_GRACE_SECONDS must be 0..{MAX_DRAIN_GRACE_S},"
                                f" got {self.drain_grace_seconds}")
        if self.limit_increase_delay_seconds < 0:
            raise SettingsError("STARFEVER_LIMIT_INCREASE_DELAY_SECONDS must not be negative, "
                                f"got {self.limit_increase_delay_seconds}")
        if not 0 <= self.young_age <= MAX_YOUNG_AGE:
            raise SettingsError(f"STARFEVER_YOUNG_AGE must be 0..{MAX_YOUNG_AGE}, "
                                f"got {self.young_age}")
        if self.reality_check_seconds > self.token_ttl_seconds:
            raise SettingsError(f"STARFEVER_REALITY_CHECK_SECONDS ({self.reality_check_seconds})"
                                f" must not exceed STARFEVER_TOKEN_TTL_SECONDS "
                                f"({self.token_ttl_seconds}): the check would never come due")
        return self

    def _check_currencies(self) -> None:
        from starfever.currencies import UnknownCurrency, market_currency

        try:
            served = self.served_currencies
        except UnknownCurrency as error:
            raise SettingsError(f"STARFEVER_CURRENCIES: {error}") from None
        wanted = market_currency(self.market)
        if wanted is not None and wanted not in served:
            raise SettingsError(f"market {self.market!r} pays in {wanted}, which this server "
                                f"does not serve (currencies: {', '.join(served)})")


ENV_NAMES: dict[str, str] = {
    "database_url": "STARFEVER_DATABASE_URL",
    "model": "STARFEVER_MODEL",
    "market": "STARFEVER_MARKET",
    "currencies": "STARFEVER_CURRENCIES",
    "environment": "STARFEVER_ENV",
    "secret_key": "STARFEVER_SECRET_KEY",
    "token_ttl_seconds": "STARFEVER_TOKEN_TTL_SECONDS",
    "reality_check_seconds": "STARFEVER_REALITY_CHECK_SECONDS",
    "weekly_deposit_limit": "STARFEVER_WEEKLY_DEPOSIT_LIMIT",
    "young_weekly_deposit_limit": "STARFEVER_YOUNG_WEEKLY_DEPOSIT_LIMIT",
    "young_age": "STARFEVER_YOUNG_AGE",
    "limit_increase_delay_seconds": "STARFEVER_LIMIT_INCREASE_DELAY_SECONDS",
    "max_body_bytes": "STARFEVER_MAX_BODY_BYTES",
    "login_max_failures": "STARFEVER_LOGIN_MAX_FAILURES",
    "login_max_failures_per_address": "STARFEVER_LOGIN_MAX_FAILURES_PER_ADDRESS",
    "login_window_seconds": "STARFEVER_LOGIN_WINDOW_SECONDS",
    "login_account_free_failures": "STARFEVER_LOGIN_ACCOUNT_FREE_FAILURES",
    "login_account_max_backoff_seconds": "STARFEVER_LOGIN_ACCOUNT_MAX_BACKOFF_SECONDS",
    "operator_login_max_failures": "STARFEVER_OPERATOR_LOGIN_MAX_FAILURES",
    "forwarded_allow_ips": "STARFEVER_FORWARDED_ALLOW_IPS",
    "registrations_per_address": "STARFEVER_REGISTRATIONS_PER_ADDRESS",
    "registration_window_seconds": "STARFEVER_REGISTRATION_WINDOW_SECONDS",
    "demo_sessions_per_address": "STARFEVER_DEMO_SESSIONS_PER_ADDRESS",
    "demo_spins_per_address": "STARFEVER_DEMO_SPINS_PER_ADDRESS",
    "max_concurrent_hashes": "STARFEVER_MAX_CONCURRENT_HASHES",
    "max_hashes_per_address": "STARFEVER_MAX_HASHES_PER_ADDRESS",
    "max_hash_waiters": "STARFEVER_MAX_HASH_WAITERS",
    "request_read_timeout_seconds": "STARFEVER_REQUEST_READ_TIMEOUT_SECONDS",
    "keep_alive_seconds": "STARFEVER_KEEP_ALIVE_SECONDS",
    "test_mode": "STARFEVER_TEST_MODE",
    "test_clock_file": "STARFEVER_TEST_CLOCK_FILE",
    "test_cheap_password_hashes": "STARFEVER_TEST_CHEAP_PASSWORD_HASHES",
    "audit_key_file": "STARFEVER_AUDIT_KEY_FILE",
    "approved_models": "STARFEVER_APPROVED_MODELS",
    "drain_seconds": "STARFEVER_DRAIN_SECONDS",
    "drain_grace_seconds": "STARFEVER_DRAIN_GRACE_SECONDS",
    "metrics_token": "STARFEVER_METRICS_TOKEN",
}
"""Setting -> environment variable (documented in docs/server.md)."""


def settings_from_env(environ: Mapping[str, str]) -> Settings:
    """Build and check settings from an environment mapping."""
    values: dict[str, object] = {}
    defaults = Settings()
    for field, env in ENV_NAMES.items():
        raw = environ.get(env)
        if raw is None:
            continue
        if not raw.strip():  # STARFEVER_ENV='' must not quietly mean development
            raise SettingsError(f"{env} is set but empty: give it a value or unset it")
        default = getattr(defaults, field)
        if isinstance(default, bool):
            values[field] = raw.strip().lower() in ("1", "true", "yes", "on")
        elif isinstance(default, int):
            try:
                values[field] = int(raw)
            except ValueError:
                raise SettingsError(f"{env} must be an integer, got {raw!r}") from None
        else:
            values[field] = raw
    return Settings(**values).check()  # type: ignore[arg-type]


def estimated_bits(value: bytes) -> float:
    """The length of ``value`` times the Shannon entropy of its bytes' frequencies."""
    if not value:
        return 0.0
    total = len(value)
    return max(0.0, -sum(n * math.log2(n / total) for n in Counter(value).values()))


def _periodic(value: bytes) -> bool:
    """Whether ``value`` is a shorter string repeated (``abcdabcd...``)."""
    return any(len(value) % size == 0 and value == value[:size] * (len(value) // size)
               for size in range(1, len(value) // 2 + 1))


def _check_strength(env: str, value: bytes, what: str) -> None:
    """Refuse a secret or key that is low in entropy (production only)."""
    bits = estimated_bits(value)
    if bits < MIN_ESTIMATED_BITS or _periodic(value):
        raise SettingsError(f"{env}: {what} is too predictable (about {bits:.0f} bits, at least "
                            f"{MIN_ESTIMATED_BITS} needed): make one with 'openssl rand -hex 32'")


@lru_cache(maxsize=8)
def _read_key(path: str) -> bytes:
    """The key file's content, stripped; a file that is not a regular file (``/dev/zero``, a
    FIFO, a directory) is refused before it is opened, so reading it cannot hang."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the opening
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            os.close(fd)
            raise SettingsError(f"STARFEVER_AUDIT_KEY_FILE {path!r} is not a regular file")
        if found.st_size > MAX_KEY_FILE_BYTES:
            os.close(fd)
            raise SettingsError(f"STARFEVER_AUDIT_KEY_FILE {path!r} is {found.st_size} "
                                f"bytes: a key file holds at most {MAX_KEY_FILE_BYTES}")
        with os.fdopen(fd, "rb") as file:
            key = file.read(MAX_KEY_FILE_BYTES + 1).strip()
    except OSError as error:
        raise SettingsError(f"STARFEVER_AUDIT_KEY_FILE {path!r} cannot be read: "
                            f"{error.strerror}") from None
    if len(key) < MIN_AUDIT_KEY_BYTES:
        raise SettingsError(f"STARFEVER_AUDIT_KEY_FILE {path!r} must hold at least "
                            f"{MIN_AUDIT_KEY_BYTES} bytes")
    return key


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, from the environment (cached)."""
    return settings_from_env(os.environ)
