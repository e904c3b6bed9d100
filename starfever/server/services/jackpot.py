"""The €€€ pool shared by every player of the installation: one row, locked for every round.

The pool is created at its model's seed, booked as operator funding (house -> pool). Each bet's
contribution is split into whole cents plus a carried fraction kept in the row, so the pool
receives exactly the contribution rate over time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.engine.model import MathModel
from starfever.server.db import Database
from starfever.server.models import HOUSE, POOL, JackpotPool
from starfever.server.services import ledger
from starfever.server.services.errors import utcnow

POOL_ID = "main"


@dataclass(frozen=True, slots=True)
class PoolView:
    """The pool and its meters."""

    pool: int
    seed: int
    contributions: int
    wins: int
    refills: int
    hits: int
    carry: Fraction
    updated_at: datetime


def _create(session: Session, model: MathModel, now: datetime) -> JackpotPool:
    row = JackpotPool(id=POOL_ID, amount=model.seed_cents, seed=model.seed_cents, carry="0",
                      contributions=0, wins=0, refills=model.seed_cents, hits=0, updated_at=now)
    session.add(row)
    session.flush()
    if model.seed_cents:
        ledger.book(session, POOL, ledger.SEED, model.seed_cents, now,
                    balance_after=model.seed_cents)
        ledger.book(session, HOUSE, ledger.SEED, -model.seed_cents, now)
    return row


def ensure_pool(db: Database, model: MathModel) -> None:
    """Create the pool at the model's seed if it does not exist yet (safe to race)."""
    try:
        with db.write() as session:
            if session.get(JackpotPool, POOL_ID) is None:
                _create(session, model, utcnow())
    except IntegrityError:
        pass  # another server process created it first


def lock_pool(session: Session, model: MathModel, now: datetime) -> JackpotPool:
    """The pool row, locked until the transaction ends (created if missing)."""
    row = session.scalar(select(JackpotPool).where(JackpotPool.id == POOL_ID).with_for_update())
    return row if row is not None else _create(session, model, now)


def view(session: Session) -> PoolView | None:
    """The pool's state and meters (``None`` before the first start)."""
    row = session.get(JackpotPool, POOL_ID)
    if row is None:
        return None
    return PoolView(pool=row.amount, seed=row.seed, contributions=row.contributions,
                    wins=row.wins, refills=row.refills, hits=row.hits,
                    carry=Fraction(row.carry), updated_at=row.updated_at)


def read(db: Database) -> PoolView | None:
    """:func:`view` in its own read transaction."""
    with db.read() as session:
        return view(session)
