"""The cashier: money entering (deposits) and leaving (withdrawals) a player's wallet, on an
operator's order. Deposits pass the player-protection checks under the wallet lock, so two
concurrent deposits can never pass the weekly limit together. Each one's wallet entry joins
the keyed cashier chain (``services.anchor``), so a deposit written straight into the
database fails the audit."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import CASHIER, PLAYER, Account
from starfever.server.services import anchor, ledger, protection
from starfever.server.services.errors import NotFound, utcnow
from starfever.server.services.wallet import WalletPort
from starfever.server.settings import Settings


@dataclass(frozen=True, slots=True)
class CashierResult:
    """A booked deposit or withdrawal."""

    username: str
    amount: int
    balance: int


def _player(session: Session, username: str) -> Account:
    account = session.scalar(select(Account).where(Account.username == username,
                                                      Account.role == PLAYER))
    if account is None:
        raise NotFound(f"no player {username!r}", code="player_not_found")
    return account


def deposit(db: Database, settings: Settings, wallet: WalletPort, username: str,
            amount: int) -> CashierResult:
    """Credit ``amount`` cents to the player, within their limits."""
    now = utcnow()
    with db.write() as session:
        account = _player(session, username)
        wallet.lock(session, account.id)
        # the cashier chain's head before the entry is booked: entries then get their ids in
        # chain order, also when deposits of different players run at once (PostgreSQL)
        anchor.lock_cashier_head(session)
        protection.check_deposit(session, settings, account, amount, now)
        balance = wallet.credit(session, account.id, amount, ledger.DEPOSIT, now)
        ledger.book(session, CASHIER, ledger.DEPOSIT, -amount, now)
        anchor.chain_cashier_entry(session, settings.chain_key(), account.id, ledger.DEPOSIT)
        return CashierResult(username=username, amount=amount, balance=balance)


def withdraw(db: Database, settings: Settings, wallet: WalletPort, username: str,
             amount: int) -> CashierResult:
    """Pay ``amount`` cents out of the player's wallet (``insufficient_funds`` if short)."""
    now = utcnow()
    with db.write() as session:
        account = _player(session, username)
        wallet.lock(session, account.id)
        anchor.lock_cashier_head(session)  # before the entry, as in deposit()
        balance = wallet.debit(session, account.id, amount, ledger.WITHDRAWAL, now)
        ledger.book(session, CASHIER, ledger.WITHDRAWAL, amount, now)
        anchor.chain_cashier_entry(session, settings.chain_key(), account.id, ledger.WITHDRAWAL)
        return CashierResult(username=username, amount=amount, balance=balance)
