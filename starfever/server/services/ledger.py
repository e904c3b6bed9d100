"""The ledger: every movement of money is a set of entries on the books that sums to zero.

Books: ``wallet`` (a player's balance), ``pool`` (the €€€ pool), ``house`` (the operator's game
book: bet income, wins paid, pool funding) and ``cashier`` (money entering or leaving the
system). So at any time: sum(wallets) + pool + house = deposits - withdrawals.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from starfever.server.books import (  # the kinds of entry, named here for the callers
    BET,
    CASHIER,
    CONTRIBUTION,
    DEPOSIT,
    HOUSE,
    JACKPOT_WIN,
    POOL,
    REFILL,
    SEED,
    WALLET_KINDS,
    WIN,
    WITHDRAWAL,
)
from starfever.server.models import LedgerEntry

__all__ = ["BET", "CONTRIBUTION", "DEPOSIT", "JACKPOT_WIN", "REFILL", "SEED", "WALLET_KINDS",
           "WIN", "WITHDRAWAL", "book"]


def book(session: Session, book_name: str, kind: str, amount: int, now: datetime, *,
         account_id: int | None = None, balance_after: int | None = None,
         round_id: int | None = None) -> None:
    """Add one entry (in the caller's transaction)."""
    if book_name.partition(":")[0] not in (POOL, HOUSE, CASHIER) and account_id is None:
        raise ValueError(f"a {book_name!r} entry needs an account")
    session.add(LedgerEntry(book=book_name, account_id=account_id, kind=kind, amount=amount,
                            balance_after=balance_after, round_id=round_id, created_at=now))
