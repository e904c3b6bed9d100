"""Device tokens (ADR 0052, OWASP's "device cookies"): a client that logged in to an account
gets a token, signed for that account, that its later log-ins send back; the log-in throttle
then counts that client's failures on their own, so no failure of anybody else (however many
addresses it comes from) refuses the owner's right credentials there.

A token is ``ISSUED.NONCE.MAC``: the issue time (epoch seconds), 12 random bytes in hex, and
an HMAC-SHA256 under the server's secret key of the account's name, the issue time and the
nonce. Nothing is stored: a token is good for :data:`DEVICE_DAYS` days from its issue (each
successful log-in issues a fresh one) and stops being good when the secret key changes. The
throttle's name for the client is ``device:NONCE``, so a stolen token guessing passwords is
held by the per-client limit on itself alone."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime

from starfever.server.settings import Settings

DEVICE_DAYS = 90
"""How long a device token is good after the log-in that issued it."""
PLAYER_COOKIE = "starfever_device"
OPERATOR_COOKIE = "starfever_operator_device"
"""The cookies a browser keeps them in (``HttpOnly``, ``SameSite=Strict``, ``Secure`` in
production, path ``/api/v1``): one for the player's log-in and one for the back office's."""
_SHAPE = re.compile(r"^(\d{1,12})\.([0-9a-f]{24})\.([0-9a-f]{64})$")


def _mac(settings: Settings, username: str, issued: str, nonce: str) -> str:
    message = f"starfever-device|{username}|{issued}|{nonce}".encode()
    return hmac.new(settings.secret_key.encode(), message, hashlib.sha256).hexdigest()


def issue(settings: Settings, username: str, now: datetime) -> str:
    """A fresh device token for ``username`` (after a successful log-in)."""
    issued, nonce = str(int(now.timestamp())), secrets.token_hex(12)
    return f"{issued}.{nonce}.{_mac(settings, username, issued, nonce)}"


def known_device(settings: Settings, username: str, token: str | None,
                 now: datetime) -> str | None:
    """The throttle's name of the client (``device:NONCE``) if ``token`` is a device token of
    ``username`` issued within :data:`DEVICE_DAYS` days, else ``None`` (an unknown client)."""
    found = _SHAPE.match(token or "")
    if found is None:
        return None
    issued, nonce, mac = found.groups()
    if not hmac.compare_digest(mac, _mac(settings, username, issued, nonce)):
        return None
    age_s = int(now.timestamp()) - int(issued)
    if not -300 <= age_s <= DEVICE_DAYS * 86400:  # five minutes of clock skew between workers
        return None
    return f"device:{nonce}"
