"""Which wallet the server plays against (OPERATOR-WALLET.md, "Configuration").

``ledger`` (the default) is the embedded wallet; ``operator`` keeps no balances and calls the
operator's wallet at ``STARFEVER_WALLET_URL`` for every money movement, signed with the shared
secret ``STARFEVER_OPERATOR_SECRET`` (at least 32 characters), waiting at most
``STARFEVER_WALLET_TIMEOUT`` seconds (default 5) for a reply. Kept apart from ``settings.py``:
the operator mode's own settings, read from the same environment every worker sees.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

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

DEFAULT_TIMEOUT_S: Final = 5.0
DEFAULT_RETRY_S: Final = 1.0


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
    """The first delay of the retrier's backoff (doubled per attempt, at most a minute)."""

    @property
    def endpoint(self) -> WalletEndpoint:
        """The signed client's endpoint."""
        return WalletEndpoint(self.url, self.secret, self.timeout)


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


def operator_config_from_env(environ: Mapping[str, str]) -> OperatorConfig | None:
    """The operator mode's configuration, or ``None`` in ledger mode; :class:`SettingsError`
    (one line) for a bad mode, a missing URL or a missing or short secret."""
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
    return OperatorConfig(url=url, secret=secret,
                          timeout=_seconds(environ, ENV_TIMEOUT, DEFAULT_TIMEOUT_S),
                          retry=_seconds(environ, ENV_RETRY, DEFAULT_RETRY_S))


@lru_cache(maxsize=1)
def get_operator_config() -> OperatorConfig | None:
    """The process's operator-mode configuration (cached), from the environment."""
    return operator_config_from_env(os.environ)


__all__ = ["LEDGER", "OPERATOR", "WALLET_MODES", "OperatorConfig", "get_operator_config",
           "operator_config_from_env"]
