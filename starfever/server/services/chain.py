"""The hash chains. Each round stores the hash of the one before it and its own hash over the
fields below in this frozen order (see docs/guarantees.md): changing, removing or reordering a
stored round breaks every hash after it.

Three schemes (ADR 0011, ADR 0020), recorded per round in ``hash_scheme``:
1. ``starfever-round-v1``: SHA-256 (rounds stored before the chain was keyed);
2. ``starfever-round-v2``: HMAC-SHA256 under the audit key, which is kept outside the database
   (``STARFEVER_AUDIT_KEY_FILE``): whoever can write the database but lacks the key cannot
   recompute a hash after rewriting a round;
3. ``starfever-round-v3``: as 2, over :data:`HASH_FIELDS` followed by the round's build and
   model hashes (:data:`IDENTITY_FIELDS`), so the build a recalled round names is chained too;
4. ``starfever-round-v4`` (free rounds only, ADR 0064): as 3, followed by the round's grant
   and paid win (:data:`FREE_ROUND_FIELDS`), so a paid round cannot be passed off as a free
   one, nor a free round's paid win changed.
Deposits and withdrawals form a second chain (:func:`cashier_hash`) over their wallet entries.
The boundary from which both are keyed is stored with a MAC (:func:`sealed_boundary_mac`, over
the ledger entries stored before it too), so it cannot be moved to pass keyed rows off as old
unkeyed ones, nor can an old entry be slipped in before it. Each chain's head carries a MAC
(:func:`head_mac`), so the chain's end cannot be cut off without the key (ADR 0048).

Never change :data:`HASH_FIELDS` or the hash functions for stored rows; a new layout needs a
new version tag and must keep verifying the old ones.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from starfever.server.books import EUR

if TYPE_CHECKING:  # only named: the chain's hashing needs no database (``spin.rule`` uses it)
    from starfever.server.models import LedgerEntry, Round, RoundRow

HASH_VERSION = "starfever-round-v1"
KEYED_VERSION = "starfever-round-v2"
IDENTIFIED_VERSION = "starfever-round-v3"
FREE_ROUND_VERSION = "starfever-round-v4"
CASHIER_VERSION = "starfever-cashier-v1"
STATEMENT_VERSION = "starfever-statement-v1"
UNKEYED, KEYED, IDENTIFIED, FREE_ROUND = 1, 2, 3, 4
"""The values of ``rounds.hash_scheme``."""
ROUNDS_CHAIN_ID = 1
"""The ``chain_head`` row of the round chain."""
CASHIER_CHAIN_ID = 2
"""The ``chain_head`` row of the cashier chain (row 1 is the rounds')."""
HEAD_VERSION = "starfever-head-v1"
SEAL_VERSION = "starfever-boundary-v2"
GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of round 1."""

HASH_FIELDS: tuple[str, ...] = (
    "id", "prev_hash", "account_id", "idempotency_key", "request_hash", "model_name",
    "model_version", "line_bet", "total_bet", "contribution", "base_win", "star_wild_win",
    "hold_and_cash_win", "progressive_win", "total_win", "feature", "pool_before", "pool_after",
    "pool_refill", "balance_before", "balance_after", "draws", "events", "test", "created_at",
)
"""The hashed fields, in the frozen order."""
IDENTITY_FIELDS: tuple[str, ...] = ("build_sha256", "model_sha256")
"""Scheme 3 hashes these after :data:`HASH_FIELDS`."""
FREE_ROUND_FIELDS: tuple[str, ...] = ("grant_id", "paid_win")
"""Scheme 4 hashes these after :data:`IDENTITY_FIELDS`."""


@lru_cache(maxsize=64)
def instant(value: datetime) -> str:
    """The hashed (and published) form of a timestamp: UTC, microseconds, ``Z``. Remembered
    for the last few instants: every round of a batch is settled at the same one."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces, ASCII only: one text for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _fields(round_: Round | RoundRow, names: tuple[str, ...] = HASH_FIELDS) -> str:
    values: list[Any] = []
    for name in names:
        value = getattr(round_, name)
        values.append(instant(value) if isinstance(value, datetime) else value)
    currency = getattr(round_, "currency", EUR) or EUR
    if currency != EUR:  # ADR 0076: every EUR round hashes as before, any other names its own
        values.append(currency)
    market = getattr(round_, "market", None)
    if market is not None:  # ADR 0078: a round without one (before 0028) hashes as before;
        values.append({"market": market})  # an object, never read as a currency code
    return canonical_json(values)


def round_hash(round_: Round | RoundRow, key: bytes | None = None) -> str:
    """The round's hash under its ``hash_scheme``: scheme 1, SHA-256 (hex) of
    ``HASH_VERSION`` and a JSON array of the fields in frozen order (``draws`` and ``events``
    enter as their stored canonical JSON text); scheme 2, HMAC-SHA256 under ``key`` of
    ``KEYED_VERSION`` and the same array; scheme 3, HMAC-SHA256 of ``IDENTIFIED_VERSION`` and
    the array with ``IDENTITY_FIELDS`` appended. A round in a currency other than EUR has its
    ``currency`` appended last under every scheme (ADR 0076): a round's currency cannot be
    changed without the key, and a EUR round's hash is what it was before currencies. A round
    that names its market (migration 0028) has ``{"market": name}`` appended after that (ADR
    0078): a round stored before it, with none, hashes as it did; a recorded market can be
    neither changed nor erased without the key."""
    scheme = round_.hash_scheme or UNKEYED
    if scheme == UNKEYED:
        payload = HASH_VERSION + "\n" + _fields(round_)
        return hashlib.sha256(payload.encode("ascii")).hexdigest()
    if key is None:
        raise ValueError("a keyed round hash needs the audit key")
    if scheme == IDENTIFIED:
        return mac(key, IDENTIFIED_VERSION + "\n" + _fields(round_, HASH_FIELDS
                                                              + IDENTITY_FIELDS))
    if scheme == FREE_ROUND:
        return mac(key, FREE_ROUND_VERSION + "\n" + _fields(
            round_, HASH_FIELDS + IDENTITY_FIELDS + FREE_ROUND_FIELDS))
    return mac(key, KEYED_VERSION + "\n" + _fields(round_))


def mac(key: bytes, text: str) -> str:
    """HMAC-SHA256 (hex) of ``text`` under ``key``."""
    return hmac.digest(key, text.encode("ascii"), "sha256").hex()  # one call into OpenSSL


def cashier_hash(entry: LedgerEntry, key: bytes) -> str:
    """The cashier chain's hash of a deposit's or withdrawal's wallet entry: HMAC-SHA256 of
    ``CASHIER_VERSION`` and ``[id, chain_prev, account_id, kind, amount, balance_after,
    created_at]``."""
    values = [entry.id, entry.chain_prev, entry.account_id, entry.kind, entry.amount,
              entry.balance_after, instant(entry.created_at)]
    return mac(key, CASHIER_VERSION + "\n" + canonical_json(values))


def boundary_mac(key: bytes, keyed_from: int, ledger_keyed_from: int) -> str:
    """The MAC of the keyed boundary (version 1, before migration 0016): rounds from
    ``keyed_from`` and cashier entries from ``ledger_keyed_from`` on are keyed."""
    return mac(key, f"starfever-boundary-v1\n{keyed_from}\n{ledger_keyed_from}")


def sealed_boundary_mac(key: bytes, keyed_from: int, ledger_keyed_from: int,
                        legacy: str) -> str:
    """The MAC of the keyed boundary with the ledger entries stored before it (ADR 0048):
    ``legacy`` is :func:`legacy_digest` of every entry with ``1 <= id < ledger_keyed_from``,
    so none can be added, changed or removed there without the key."""
    return mac(key, f"{SEAL_VERSION}\n{keyed_from}\n{ledger_keyed_from}\n{legacy}")


def legacy_fields(entry: LedgerEntry) -> list[Any]:
    """What :func:`legacy_digest` covers of one ledger entry."""
    return [entry.id, entry.book, entry.account_id, entry.kind, entry.amount,
            entry.balance_after, entry.round_id, instant(entry.created_at)]


def legacy_digest(entries: Iterable[LedgerEntry]) -> str:
    """SHA-256 (hex) over the entries (in id order) as one canonical JSON line each, after
    their count: the ledger before the keyed boundary, sealed under the boundary's MAC."""
    rows = [canonical_json(legacy_fields(entry)) for entry in entries]
    digest = hashlib.sha256(f"{len(rows)}\n".encode("ascii"))
    for row in rows:
        digest.update(row.encode("ascii") + b"\n")
    return digest.hexdigest()


def head_mac(key: bytes, chain_id: int, last_id: int, last_hash: str) -> str:
    """The MAC of a chain head (ADR 0048): its row, last id and last hash. Written with every
    move of the head; a head set back to an earlier entry (the chain's end cut off) has no
    valid MAC unless its writer holds the key (or kept that earlier row)."""
    return mac(key, f"{HEAD_VERSION}\n{chain_id}\n{last_id}\n{last_hash}")


def head_sealed(key: bytes, chain_id: int, last_id: int, last_hash: str,
                stored: str | None) -> bool:
    """Whether a head's stored MAC holds (a head still at genesis may have none yet)."""
    if stored is None:
        return (last_id, last_hash) == (0, GENESIS_HASH)
    return hmac.compare_digest(head_mac(key, chain_id, last_id, last_hash), stored)


def sign_statement(key: bytes, body: dict[str, Any]) -> str:
    """The signature of a chain statement's body (everything but ``signature``)."""
    return mac(key, STATEMENT_VERSION + "\n" + canonical_json(body))
