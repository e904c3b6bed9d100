"""The market's minimum round duration, enforced for each player by the server (ADR 0018).

A market profile may say that a player's rounds start at least ``min_round_ms`` apart
(``strict``: 2.5 s). The page waits by itself, but a client may not: so every spin first
claims the player's pacing row (``spin_pacing``: the start of the last round let through and
its Idempotency-Key) with a compare-and-set in its own transaction, and a spin that comes too
early is refused with ``429 round_too_soon`` before anything is debited. The row lives in the
database, not in a process, so the rule holds across workers and machines (PostgreSQL). A
retry is never paced and claims nothing, whether of the very spin the row names or of any spin
of the player already settled (a round stored under its Idempotency-Key): it must reach the
spin path and replay its round, and the next new spin is paced from the last round started,
not from the replay. A spin that is then refused for another reason (funds, exclusion) gives
its claim back, so a refusal changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from starfever.server import clock
from starfever.server.db import Database
from starfever.server.models import Round, SpinPacing
from starfever.server.services.errors import TooManyRequests

ROUND_TOO_SOON = "round_too_soon"


@dataclass(frozen=True, slots=True)
class Claim:
    """A spin's hold on its player's pacing row, and what the row held before."""

    account_id: int
    at_ms: int
    key: str
    previous_ms: int | None
    previous_key: str | None


def now_ms() -> int:
    """Milliseconds since the epoch (UTC), on the server's clock."""
    return clock.now_ms()


def _too_soon(wait_ms: int, min_round_ms: int) -> TooManyRequests:
    return TooManyRequests(f"this market allows a round every {min_round_ms} ms: the next may "
                           f"start in {wait_ms} ms; nothing was debited",
                           retry_after=max(1, math.ceil(wait_ms / 1000)), code=ROUND_TOO_SOON)


def claim(db: Database, account_id: int, key: str, min_round_ms: int,
          at_ms: int | None = None) -> Claim | None:
    """Let the spin ``key`` of the player through, or refuse it (``429 round_too_soon``) when
    the player's last round began less than ``min_round_ms`` ago; ``None`` for a retry of that
    last spin or of any settled spin of the player (not paced, nothing claimed)."""
    at = now_ms() if at_ms is None else at_ms
    try:
        with db.write() as session:
            row = session.get(SpinPacing, account_id)
            if row is not None and row.last_key == key:
                return None
            if session.scalar(select(Round.id).where(Round.account_id == account_id,
                                                     Round.idempotency_key == key)) is not None:
                return None  # a settled spin: replayed on the spin path, its round as it was
            if row is None:
                session.add(SpinPacing(account_id=account_id, last_spin_ms=at, last_key=key))
                session.flush()  # a concurrent first spin of the player: IntegrityError
                return Claim(account_id, at, key, None, None)
            previous_ms, previous_key = row.last_spin_ms, row.last_key
            if at - previous_ms < min_round_ms:
                raise _too_soon(previous_ms + min_round_ms - at, min_round_ms)
            # compare-and-set: of two spins racing here only one finds the row unchanged
            # (PostgreSQL re-reads the row once the other's update has committed)
            result = session.execute(
                update(SpinPacing).where(SpinPacing.account_id == account_id,
                                         SpinPacing.last_spin_ms == previous_ms,
                                         SpinPacing.last_key == previous_key)
                .values(last_spin_ms=at, last_key=key)
                .execution_options(synchronize_session=False))
            if getattr(result, "rowcount", 0) != 1:
                raise _too_soon(min_round_ms, min_round_ms)
    except IntegrityError:
        raise _too_soon(min_round_ms, min_round_ms) from None
    return Claim(account_id, at, key, previous_ms, previous_key)


def release(db: Database, held: Claim) -> None:
    """Give back a claim whose spin was refused: the row holds what it held before (unless a
    later spin has claimed it since)."""
    mine = (SpinPacing.account_id == held.account_id, SpinPacing.last_spin_ms == held.at_ms,
            SpinPacing.last_key == held.key)
    with db.write() as session:
        if held.previous_ms is None or held.previous_key is None:
            session.execute(delete(SpinPacing).where(*mine)
                            .execution_options(synchronize_session=False))
        else:
            session.execute(update(SpinPacing).where(*mine)
                            .values(last_spin_ms=held.previous_ms, last_key=held.previous_key)
                            .execution_options(synchronize_session=False))


__all__ = ["ROUND_TOO_SOON", "Claim", "claim", "now_ms", "release"]
