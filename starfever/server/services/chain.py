"""The hash chain of rounds. Each round stores the hash of the one before it and its own hash,
SHA-256 over the fields below in this frozen order (see docs/guarantees.md): changing,
removing or reordering a stored round breaks every hash after it.

Never change :data:`HASH_FIELDS` or :func:`round_hash` for stored rounds; a new layout needs a
new version tag and must keep verifying the old one.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from starfever.server.models import Round

HASH_VERSION = "starfever-round-v1"
GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of round 1."""

HASH_FIELDS: tuple[str, ...] = (
    "id", "prev_hash", "account_id", "idempotency_key", "request_hash", "model_name",
    "model_version", "line_bet", "total_bet", "contribution", "base_win", "star_wild_win",
    "hold_and_cash_win", "progressive_win", "total_win", "feature", "pool_before", "pool_after",
    "pool_refill", "balance_before", "balance_after", "draws", "events", "test", "created_at",
)
"""The hashed fields, in the frozen order."""


def instant(value: datetime) -> str:
    """The hashed (and published) form of a timestamp: UTC, microseconds, ``Z``."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces, ASCII only: one text for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def round_hash(round_: Round) -> str:
    """SHA-256 (hex) of ``HASH_VERSION`` and a JSON array of the fields in frozen order;
    ``draws`` and ``events`` enter as their stored canonical JSON text."""
    values: list[Any] = []
    for name in HASH_FIELDS:
        value = getattr(round_, name)
        values.append(instant(value) if isinstance(value, datetime) else value)
    payload = HASH_VERSION + "\n" + canonical_json(values)
    return hashlib.sha256(payload.encode("ascii")).hexdigest()
