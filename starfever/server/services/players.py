"""What a player reads about their own wallet, and the operator's list of players."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from starfever.server.db import Database
from starfever.server.models import PLAYER, WALLET, Account, LedgerEntry, Wallet
from starfever.server.services.auth import Principal


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """One line of the operator's player list."""

    username: str
    balance: int | None
    """The embedded wallet's balance; None for an operator-mode player (the operator keeps
    it)."""
    created_at: datetime
    excluded_until: datetime | None


def ledger_entries(db: Database, principal: Principal, limit: int,
                   before: int | None) -> list[LedgerEntry]:
    """The player's wallet entries, newest first."""
    query = select(LedgerEntry).where(LedgerEntry.book == WALLET,
                                      LedgerEntry.account_id == principal.account_id)
    if before is not None:
        query = query.where(LedgerEntry.id < before)
    with db.read() as session:
        return list(session.scalars(query.order_by(LedgerEntry.id.desc()).limit(limit)))


def list_players(db: Database, limit: int, offset: int) -> list[PlayerRow]:
    """Every player, by name, with the balance where it is kept here: an operator-mode
    player has no wallet row (the outer join), and is listed all the same."""
    query = (select(Account.username, Wallet.balance, Account.created_at, Account.excluded_until)
             .outerjoin(Wallet, Wallet.account_id == Account.id).where(Account.role == PLAYER)
             .order_by(Account.username).limit(limit).offset(offset))
    with db.read() as session:
        return [PlayerRow(username=u, balance=b, created_at=c, excluded_until=e)
                for u, b, c, e in session.execute(query)]
