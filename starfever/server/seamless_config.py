"""Which wallet the server plays against (OPERATOR-WALLET.md, "Configuration").

``ledger`` (the default) is the embedded wallet; ``operator`` keeps no balances and calls the
operator's wallet at ``STARFEVER_WALLET_URL`` for every money movement, signed with the shared
secret ``STARFEVER_OPERATOR_SECRET`` (at least 32 characters), waiting at most
``STARFEVER_WALLET_TIMEOUT`` seconds (default 5) for a reply. An ``https://`` wallet URL is
verified against ``STARFEVER_WALLET_CA_FILE`` (default: the system's trust store), and
``STARFEVER_WALLET_CLIENT_CERT`` (with ``STARFEVER_WALLET_CLIENT_KEY`` unless the key is in the
same file) is presented for mutual TLS. Launch addresses are built on ``STARFEVER_PUBLIC_URL``
(the game's public origin, never a request's ``Host`` header), required in production. Kept apart
from ``settings.py``: the operator mode's own settings, read from the same environment every
worker sees.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final
from urllib.parse import urlsplit

from starfever.seamless import protocol
from starfever.seamless.client import WalletEndpoint
from starfever.server.settings import SettingsError

LEDGER: Final = "ledger"
OPERATOR: Final = "operator"
WALLET_MODES: Final = (LEDGER, OPERATOR)

ENV_WALLET: Final = "STARFEVER_WALLET"
ENV_WALLET_URL: Final = "STARFEVER_WALLET_URL"
ENV_SECRET: Final = "STARFEVER_OPERATOR_SECRET"
ENV_TIMEOUT: Final = "STARFEVER_WALLET_TIMEOUT"
ENV_RETRY: Final = "STARFEVER_WALLET_RETRY_SECONDS"
ENV_CA_FILE: Final = "STARFEVER_WALLET_CA_FILE"
ENV_CLIENT_CERT: Final = "STARFEVER_WALLET_CLIENT_CERT"
ENV_CLIENT_KEY: Final = "STARFEVER_WALLET_CLIENT_KEY"
ENV_PUBLIC_URL: Final = "STARFEVER_PUBLIC_URL"
ENV_ENVIRONMENT: Final = "STARFEVER_ENV"

DEFAULT_TIMEOUT_S: Final = 5.0
DEFAULT_RETRY_S: Final = 1.0
DEFAULT_PROBE_S: Final = 10.0
ENV_PROBE: Final = "STARFEVER_WALLET_PROBE_SECONDS"


@dataclass(frozen=True, slots=True)
class OperatorConfig:
    """Operator mode: where the operator's wallet is and how to call it."""

    url: str
    """The wallet's root: Star Fever posts to ``{url}/{method}``."""
    secret: str
    """The shared HMAC secret (both directions: wallet calls and launches)."""
    timeout: float = DEFAULT_TIMEOUT_S
    """Seconds to wait for a wallet reply."""
    retry: float = DEFAULT_RETRY_S
    """The resender's interval between two passes and the first delay of a call's backoff
    (doubled per attempt, at most 2 s or this interval; ADR 0062)."""
    probe: float = DEFAULT_PROBE_S
    """Seconds between two probes of the wallet (``starfever_wallet_up``, ADR 0057)."""
    public_url: str | None = None
    """The game's public origin (``https://game.example``): the launch's address is built on
    it. ``None`` only outside production; then a launch is refused (``503``)."""
    ca_file: str | None = None
    """The CA certificates (PEM) an ``https://`` wallet's certificate is verified against."""
    client_cert: str | None = None
    """The client certificate (PEM) of mutual TLS, and its key unless :attr:`client_key`."""
    client_key: str | None = None

    @property
    def endpoint(self) -> WalletEndpoint:
        """The signed client's endpoint."""
        return WalletEndpoint(self.url, self.secret, self.timeout, ca_file=self.ca_file,
                              client_cert=self.client_cert, client_key=self.client_key)


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, got {raw!r}") from None
    if not 0 < value <= 600:
        raise SettingsError(f"{name} must be more than 0 and at most 600 seconds, got {raw!r}")
    return value


def _public_url(environ: Mapping[str, str]) -> str | None:
    raw = environ.get(ENV_PUBLIC_URL, "").strip()
    if not raw:
        if environ.get(ENV_ENVIRONMENT, "").strip() == "production":
            raise SettingsError(f"--wallet operator in production needs --public-url "
                                f"https://... ({ENV_PUBLIC_URL}): the origin of the game's "
                                "launch addresses")
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query \
            or parts.fragment or parts.username or parts.password \
            or any(c in raw for c in " \"'<>"):
        raise SettingsError(f"{ENV_PUBLIC_URL} (--public-url) must be an origin such as "
                            f"https://game.example, got {raw!r}")
    return raw.rstrip("/")


def _file(environ: Mapping[str, str], name: str) -> str | None:
    raw = environ.get(name, "").strip()
    if raw and not os.path.isfile(raw):
        raise SettingsError(f"{name} names no readable file: {raw!r}")
    return raw or None


def _tls(url: str, environ: Mapping[str, str]) -> tuple[str | None, str | None, str | None]:
    """The CA file and the client certificate and key, each loaded once here so that a bad
    file is refused at start, not at the first spin."""
    ca_file, cert, key = (_file(environ, name)
                          for name in (ENV_CA_FILE, ENV_CLIENT_CERT, ENV_CLIENT_KEY))
    if (ca_file or cert or key) and not url.startswith("https://"):
        raise SettingsError(f"{ENV_CA_FILE}, {ENV_CLIENT_CERT} and {ENV_CLIENT_KEY} are for an "
                            f"https:// wallet URL, not {url!r}")
    if key and not cert:
        raise SettingsError(f"{ENV_CLIENT_KEY} needs {ENV_CLIENT_CERT}")
    try:
        context = ssl.create_default_context(cafile=ca_file)
        if cert:
            context.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as error:
        raise SettingsError(f"the wallet's TLS files cannot be loaded ({ca_file or '-'}, "
                            f"{cert or '-'}, {key or '-'}): {error}") from None
    return ca_file, cert, key


def operator_config_from_env(environ: Mapping[str, str]) -> OperatorConfig | None:
    """The operator mode's configuration, or ``None`` in ledger mode; :class:`SettingsError`
    (one line) for a bad mode, a missing URL, a missing or short secret, TLS files that cannot
    be loaded, or (in production) a missing public URL."""
    mode = environ.get(ENV_WALLET, "").strip() or LEDGER
    if mode not in WALLET_MODES:
        raise SettingsError(f"{ENV_WALLET} (--wallet) must be one of {', '.join(WALLET_MODES)}, "
                            f"got {mode!r}")
    if mode == LEDGER:
        return None
    url = environ.get(ENV_WALLET_URL, "").strip()
    if not url.startswith(("http://", "https://")):
        raise SettingsError("--wallet operator needs --wallet-url http(s)://... "
                            f"({ENV_WALLET_URL}), got {url!r}")
    try:
        secret = protocol.check_secret(environ.get(ENV_SECRET))
    except Exception as error:  # InputError: say it as a setting
        raise SettingsError(str(error)) from None
    ca_file, cert, key = _tls(url, environ)
    return OperatorConfig(url=url, secret=secret,
                          timeout=_seconds(environ, ENV_TIMEOUT, DEFAULT_TIMEOUT_S),
                          retry=_seconds(environ, ENV_RETRY, DEFAULT_RETRY_S),
                          probe=_seconds(environ, ENV_PROBE, DEFAULT_PROBE_S),
                          public_url=_public_url(environ), ca_file=ca_file, client_cert=cert,
                          client_key=key)


@lru_cache(maxsize=1)
def get_operator_config() -> OperatorConfig | None:
    """The process's operator-mode configuration (cached), from the environment."""
    return operator_config_from_env(os.environ)


__all__ = ["LEDGER", "OPERATOR", "WALLET_MODES", "OperatorConfig", "get_operator_config",
           "operator_config_from_env"]
