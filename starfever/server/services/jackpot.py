"""The €€€ pools: one row per served currency (ADR 0076), shared by every player who plays in
that currency, fed only by that currency's stakes and paying only its rounds; a round locks
its currency's row. The EUR pool keeps the row it always had (id ``main``).

A pool is created at its model's seed, booked as operator funding (house -> pool). Each bet's
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
from starfever.server.books import EUR, house_book, pool_book
from starfever.server.db import Database
from starfever.server.models import JackpotPool
from starfever.server.services import ledger
from starfever.server.services.errors import utcnow

POOL_ID = "main"
"""The EUR pool's row (the one row before there were currencies)."""


def pool_id(currency: str = EUR) -> str:
    """The row of ``currency``'s pool: ``main`` for EUR, the code for any other."""
    return POOL_ID if currency == EUR else currency


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
    currency: str = EUR


def _create(session: Session, model: MathModel, now: datetime, currency: str) -> JackpotPool:
    seed = model.seed_cents  # a currency's pool seed is the model's (``check_currency_model``)
    row = JackpotPool(id=pool_id(currency), currency=currency, amount=seed, seed=seed,
                      carry="0", contributions=0, wins=0, refills=seed, hits=0, updated_at=now)
    session.add(row)
    session.flush()
    if seed:
        ledger.book(session, pool_book(currency), ledger.SEED, seed, now, balance_after=seed)
        ledger.book(session, house_book(currency), ledger.SEED, -seed, now)
    return row


def ensure_pool(db: Database, model: MathModel, currencies: tuple[str, ...] = (EUR,)) -> None:
    """Create each currency's pool at the model's seed if it does not exist yet (safe to
    race)."""
    for currency in currencies:
        try:
            with db.write() as session:
                if session.get(JackpotPool, pool_id(currency)) is None:
                    _create(session, model, utcnow(), currency)
        except IntegrityError:
            pass  # another server process created it first


def lock_pool(session: Session, model: MathModel, now: datetime,
              currency: str = EUR) -> JackpotPool:
    """``currency``'s pool row, locked until the transaction ends (created if missing)."""
    row = session.scalar(select(JackpotPool).where(JackpotPool.id == pool_id(currency))
                         .with_for_update())
    return row if row is not None else _create(session, model, now, currency)


def _view(row: JackpotPool) -> PoolView:
    return PoolView(pool=row.amount, seed=row.seed, contributions=row.contributions,
                    wins=row.wins, refills=row.refills, hits=row.hits,
                    carry=Fraction(row.carry), updated_at=row.updated_at, currency=row.currency)


def view(session: Session, currency: str = EUR) -> PoolView | None:
    """``currency``'s pool with its meters (``None`` before its first start)."""
    row = session.get(JackpotPool, pool_id(currency))
    return None if row is None else _view(row)


def views(session: Session) -> dict[str, PoolView]:
    """Every currency's pool, by currency code (sorted)."""
    rows = session.scalars(select(JackpotPool).order_by(JackpotPool.currency))
    return {row.currency: _view(row) for row in rows}


def read(db: Database, currency: str = EUR) -> PoolView | None:
    """:func:`view` in its own read transaction."""
    with db.read() as session:
        return view(session, currency)
