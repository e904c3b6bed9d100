"""The wallet port (ADR 0038): every money movement of a spin passes one interface, with two
real adapters, the embedded ledger (:class:`LedgerWallet`, here) and the operator's seamless
wallet (``seamless_wallet.SeamlessWallet``). A route asks the port what it can do (does it
keep the balances? take deposits? launch players?), never which mode runs.

:class:`LedgerWallet` keeps the balance in the ``wallets`` row and writes a ledger entry for
every change, in the caller's transaction; the row is locked first, so concurrent spins of one
player are serialized and can never overdraw (the CHECK constraint is the last line). Its spin
is drawn at once and settled by the group commit (``settler``) against the wallet row."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.engine.rng import RandomSource, SystemRandomSource
from starfever.server.models import WALLET, Wallet
from starfever.server.services import ledger
from starfever.server.services.errors import Conflict, Forbidden, NotFound, Unprocessable

if TYPE_CHECKING:
    from starfever.server.db import Database
    from starfever.server.services.auth import Principal
    from starfever.server.spin.rule import Job, SpinOutcome

NOT_HERE = "operator_mode"
"""The code of a refusal of what the operator keeps (its wallet and its players)."""


def refuse_not_kept(what: str) -> Forbidden:
    """The refusal of ``what``, which the operator keeps (403 ``operator_mode``)."""
    return Forbidden(f"{what} is the operator's in operator mode (its wallet and its players)",
                     code=NOT_HERE)


class WalletPort(Protocol):
    """Where a spin's money moves, and what else the wallet does (see the module docstring)."""

    @property
    def keeps_balances(self) -> bool:
        """The balances are kept here: with them the players (registration, password
        log-in), their deposits and withdrawals, deposit limits and self-exclusion. False
        where the operator keeps them (its wallet refuses a bet with ``player_blocked``)."""
        ...

    @property
    def launches_players(self) -> bool:
        """Players arrive by the operator's signed launch (``/launch``, launch tokens)."""
        ...

    @property
    def calls_operator(self) -> bool:
        """A spin calls the operator's wallet: a credit can be pending (meters, metrics)."""
        ...

    @property
    def launch_secret(self) -> str | None:
        """The secret the operator signs its launches with (None where no one launches)."""
        ...

    @property
    def public_url(self) -> str | None:
        """The public origin launch addresses are built on (None where no one launches)."""
        ...

    async def spin(self, job: Job) -> SpinOutcome:
        """Play ``job`` (checked, its test draws drawn): take the bet, draw the round if not
        drawn yet, settle it (``settler``), pay the win; the stored round and the balance."""
        ...

    def balance(self, principal: Principal) -> int:
        """The player's balance in cents."""
        ...

    def ledger(self, what: str) -> LedgerWallet:
        """The ledger that keeps ``what`` (a balance's booking, a deposit, a limit, an
        exclusion); :func:`refuse_not_kept` where the operator keeps it."""
        ...

    @property
    def resend_hold(self) -> timedelta:
        """How long the resender leaves a credit an operator handed back to the request that
        sends it (``services.unpaid_actions.resend``)."""
        ...

    def resend_credit(self, transaction_id: str) -> None:
        """Send an unpaid win's credit, handed back by an operator, once now and record its
        answer (operator mode: the ledger has no unpaid wins)."""
        ...

    def ready(self) -> str:
        """What the readiness probe says of the wallet (``none`` for the embedded ledger,
        ``answers`` once the operator's answered); ``Unavailable`` if it cannot take bets."""
        ...

    def start(self) -> None:
        """Start the wallet's background work (the application's start-up)."""
        ...

    async def aclose(self) -> None:
        """Stop it and close its connections (the application's shutdown)."""
        ...


class LedgerWallet:
    """The built-in wallet: a balance row plus one ledger entry per change. The booking
    methods (:meth:`open`, :meth:`lock`, :meth:`stored_balance`, :meth:`debit`,
    :meth:`credit`) run in the caller's transaction and need no database of their own; the
    port's (:meth:`spin`, :meth:`balance`) use ``db``."""

    keeps_balances = True
    launches_players = False
    calls_operator = False
    launch_secret = None
    public_url = None

    def __init__(self, db: Database | None = None) -> None:
        self._db = db
        self.live_source: Callable[[], RandomSource] = SystemRandomSource
        """Where a live round's draws come from (``draw.draw_live``)."""

    @property
    def db(self) -> Database:
        if self._db is None:
            raise RuntimeError("this LedgerWallet books in its callers' transactions only")
        return self._db

    async def spin(self, job: Job) -> SpinOutcome:
        """Draw the round now (the draws never depend on the pool or on anyone's balance) and
        await the settler's future, so no thread waits per spin (ADR 0010); a spin that lost
        a race on its key to another process's gets that request's round."""
        from starfever.server.spin import draw, settler

        draw.draw_live(job, self.live_source)
        try:
            return await asyncio.wrap_future(settler.settler(self.db).enqueue(job))
        except IntegrityError:
            return await asyncio.to_thread(draw.after_key_race, self.db, job.settings, self,
                                           job.principal, job.key, job.fingerprint)

    def balance(self, principal: Principal) -> int:
        """The balance of the player's wallet row."""
        with self.db.read() as session:
            return self.stored_balance(session, principal.account_id)

    def ledger(self, what: str) -> LedgerWallet:
        """This ledger keeps everything."""
        return self

    resend_hold = timedelta(0)

    def resend_credit(self, transaction_id: str) -> None:
        """The ledger pays a win in its round's own transaction: there is nothing to resend."""
        raise NotFound("the ledger wallet has no unpaid wins", code="no_unpaid_win")

    def ready(self) -> str:
        """Nothing to ask beyond the database."""
        return "none"

    def start(self) -> None:
        """No background work."""

    async def aclose(self) -> None:
        """Nothing to close."""

    def open(self, session: Session, account_id: int, now: datetime,
             currency: str = "EUR") -> None:
        """Create an empty wallet for a new player, in ``currency`` (one a wallet keeps)."""
        session.add(Wallet(account_id=account_id, balance=0, updated_at=now,
                           currency=currency))

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

    def stored_balance(self, session: Session, account_id: int) -> int:
        """The balance in the caller's transaction, without locking."""
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
