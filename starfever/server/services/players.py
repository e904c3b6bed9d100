"""What a player reads about their own wallet, and the operator's list of players."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from starfever.server.db import Database
from starfever.server.models import PLAYER, WALLET, Account, LedgerEntry, Wallet
from starfever.server.services import protection
from starfever.server.services.auth import Principal
from starfever.server.services.errors import utcnow
from starfever.server.services.protection import RealityCheck
from starfever.server.settings import Settings
from starfever.server.spin.wallets import WalletPort


@dataclass(frozen=True, slots=True)
class WalletStatus:
    """A player's balance and reality check."""

    balance: int
    reality_check: RealityCheck


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """One line of the operator's player list."""

    username: str
    balance: int
    created_at: datetime
    excluded_until: datetime | None


def read_wallet(db: Database, settings: Settings, wallet: WalletPort,
                principal: Principal) -> WalletStatus:
    """The player's balance and reality check."""
    with db.read() as session:
        return WalletStatus(
            balance=wallet.balance(session, principal.account_id),
            reality_check=protection.reality_check(session, settings, principal.account_id,
                                                   utcnow()))


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
    """Players with their balances, by name."""
    query = (select(Account.username, Wallet.balance, Account.created_at, Account.excluded_until)
             .join(Wallet, Wallet.account_id == Account.id).where(Account.role == PLAYER)
             .order_by(Account.username).limit(limit).offset(offset))
    with db.read() as session:
        return [PlayerRow(username=u, balance=b, created_at=c, excluded_until=e)
                for u, b, c, e in session.execute(query)]
