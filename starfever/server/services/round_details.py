"""Round details (OPERATOR-WALLET.md, "Round details"; ADR 0060): a signed, never-expiring
address of one round, which opens a page of that round without a log-in.

The address is ``{public_url}/round-details/{round_id}/{signature}``: the signature is an
HMAC-SHA256 under a key derived from the server's secret (``STARFEVER_SECRET_KEY``) and
:data:`PURPOSE`, over the round id, cut to 128 bits. Without the secret it cannot be made
for a round, and a signature of one round is no signature of another; it is compared in
constant time. The address depends on nothing but the round id and the secret, so the credit
that sends it costs no query, and it holds as long as the secret does (a new secret makes
every address sent before it a 404).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Final

from starfever.server.db import Database
from starfever.server.models import Round
from starfever.server.services import free_rounds, support, unpaid

PURPOSE: Final = b"starfever round details v1"
"""What the key is derived for: a key of its own, not the secret that signs anything else."""
PATH: Final = "/round-details"
SIGNATURE_HEX: Final = 32
"""128 bits of the HMAC, as hex."""
_ROUND_ID = re.compile(r"[1-9][0-9]{0,17}")
_SIGNATURE = re.compile(f"[0-9a-f]{{{SIGNATURE_HEX}}}")


def details_key(secret_key: str) -> bytes:
    """The key of round-details addresses, derived from the server's secret."""
    return hmac.new(secret_key.encode(), PURPOSE, hashlib.sha256).digest()


def signature(key: bytes, round_id: int) -> str:
    """The signature of ``round_id``'s address."""
    return hmac.new(key, f"round:{round_id}".encode(), hashlib.sha256
                    ).hexdigest()[:SIGNATURE_HEX]


def path_of(key: bytes, round_id: int) -> str:
    """The address's path (``/round-details/{id}/{signature}``)."""
    return f"{PATH}/{round_id}/{signature(key, round_id)}"


def url_of(public_url: str | None, key: bytes, round_id: int) -> str:
    """The address on the public origin (``--public-url``); the bare path without one."""
    return f"{public_url or ''}{path_of(key, round_id)}"


def verified_round_id(key: bytes, round_id: str, sent: str) -> int | None:
    """The round id of an address whose signature holds, else ``None`` (a malformed id or
    signature, or one that signs another id: the caller answers each the same)."""
    if not _ROUND_ID.fullmatch(round_id) or not _SIGNATURE.fullmatch(sent):
        return None
    number = int(round_id)
    return number if hmac.compare_digest(signature(key, number), sent) else None


@dataclass(frozen=True, slots=True)
class RoundDetails:
    """One round, its wallet calls (none in ledger mode) and its payment, as the page shows
    them."""

    round: Round
    calls: list[support.CallLine]
    payment: str = unpaid.PAID
    """Whether the win reached the player (``services.unpaid``'s payments)."""
    free_round: free_rounds.RoundGrant | None = None
    """A free round's grant (ADR 0064); ``None`` for a paid round."""


def load(db: Database, round_id: int) -> RoundDetails | None:
    """The round, its calls and its payment, or ``None`` when there is no such round."""
    with db.read() as session:
        found = session.get(Round, round_id)
        payment = unpaid.payments(session, [round_id])[round_id]
    if found is None:
        return None
    return RoundDetails(found, support.round_calls(db, round_id), payment,
                        free_rounds.grants_of_rounds(db, [found]).get(round_id))


__all__ = ["PATH", "PURPOSE", "RoundDetails", "details_key", "load", "path_of", "signature",
           "url_of", "verified_round_id"]
