"""The wallet behind one interface, so an operator platform's wallet could replace it.

:class:`LedgerWallet` keeps the balance in the ``wallets`` row and writes a ledger entry for
every change, in the caller's transaction; the row is locked first, so concurrent spins of one
player are serialized and can never overdraw (the CHECK constraint is the last line)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from starfever.server.models import WALLET, Wallet
from starfever.server.services import ledger
from starfever.server.services.errors import Conflict, NotFound, Unprocessable


class WalletPort(Protocol):
    """What the game needs from a wallet. Every method runs in the caller's transaction."""

    def open(self, session: Session, account_id: int, now: datetime) -> None:
        """Create an empty wallet for a new player."""
        ...

    def lock(self, session: Session, account_id: int) -> int:
        """Lock the player's wallet until the transaction ends; return the balance."""
        ...

    def balance(self, session: Session, account_id: int) -> int:
        """The balance, without locking."""
        ...

    def debit(self, session: Session, account_id: int, amount: int, kind: str, now: datetime,
              *, round_id: int | None = None) -> int:
        """Take ``amount`` cents (refused if the balance is short); return the new balance."""
        ...

    def credit(self, session: Session, account_id: int, amount: int, kind: str, now: datetime,
               *, round_id: int | None = None) -> int:
        """Add ``amount`` cents; return the new balance."""
        ...


class LedgerWallet:
    """The built-in wallet: a balance row plus one ledger entry per change."""

    def open(self, session: Session, account_id: int, now: datetime) -> None:
        """Create an empty wallet for a new player."""
        session.add(Wallet(account_id=account_id, balance=0, updated_at=now))

    def _row(self, session: Session, account_id: int, *, lock: bool) -> Wallet:
        query = select(Wallet).where(Wallet.account_id == account_id)
        if lock:
            query = query.with_for_update()
        row = session.scalar(query)
        if row is None:
            raise NotFound(f"player {account_id} has no wallet", code="wallet_not_found")
        return row

    def lock(self, session: Session, account_id: int) -> int:
        """Lock the wallet row (``FOR UPDATE``; SQLite already holds the write lock)."""
        return self._row(session, account_id, lock=True).balance

    def balance(self, session: Session, account_id: int) -> int:
        """The balance, without locking."""
        return self._row(session, account_id, lock=False).balance

    def _change(self, session: Session, account_id: int, delta: int, kind: str, now: datetime,
                round_id: int | None) -> int:
        if kind not in ledger.WALLET_KINDS:
            raise ValueError(f"unknown wallet entry kind {kind!r}")
        # the caller locked the row (lock()); the identity map holds it, so no query here
        row = session.get(Wallet, account_id) or self._row(session, account_id, lock=True)
        if row.balance + delta < 0:
            raise Conflict(f"the balance of {row.balance} cents does not cover {-delta} cents",
                           code="insufficient_funds")
        row.balance += delta
        row.updated_at = now
        ledger.book(session, WALLET, kind, delta, now, account_id=account_id,
                    balance_after=row.balance, round_id=round_id)
        return row.balance

    def debit(self, session: Session, account_id: int, amount: int, kind: str, now: datetime,
              *, round_id: int | None = None) -> int:
        """Take ``amount`` cents; :class:`Conflict` ``insufficient_funds`` if short."""
        if amount <= 0:
            raise Unprocessable(f"a debit must be positive, got {amount!r}")
        return self._change(session, account_id, -amount, kind, now, round_id)

    def credit(self, session: Session, account_id: int, amount: int, kind: str, now: datetime,
               *, round_id: int | None = None) -> int:
        """Add ``amount`` cents."""
        if amount <= 0:
            raise Unprocessable(f"a credit must be positive, got {amount!r}")
        return self._change(session, account_id, amount, kind, now, round_id)
