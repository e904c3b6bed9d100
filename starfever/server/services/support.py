"""Support by anyone's ids (issue 35, finding 2): the wallet calls of a round with both sides'
ids, and the rounds and calls an id names, whoever's id it is: the operator's player id
(``accounts.external_id``), the operator's transaction id of a debit, credit or rollback
(``wallet_calls.operator_transaction_id``, from its reply), Star Fever's own call id
(``wallet_calls.transaction_id``) or the round id.

A played round's debit and credit both name it (``wallet_calls.round_id``, ADR 0024), so
either's id finds it; a rollback's spin played no round, and its calls are found by
:func:`find_calls` by Star Fever's ids or the player's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import Account, WalletCall

MAX_CALLS = 200
"""The most calls one search answers."""


@dataclass(frozen=True, slots=True)
class CallFilter:
    """What a wallet-call search asks for (every part optional, all of them together)."""

    transaction_id: str | None = None
    """Star Fever's id of a debit, credit or rollback."""
    operator_transaction_id: str | None = None
    """The operator's id of one, from its reply."""
    player_id: str | None = None
    """The operator's player id (the launch's ``player_id``)."""
    round_id: int | None = None
    """The stored round: its debit and its credit."""

    @property
    def empty(self) -> bool:
        return (self.transaction_id is None and self.operator_transaction_id is None
                and self.player_id is None and self.round_id is None)


@dataclass(frozen=True, slots=True)
class CallLine:
    """One wallet call with both sides' ids and the player's."""

    transaction_id: str
    operator_transaction_id: str | None
    kind: str
    status: str
    error: str | None
    amount: int
    jackpot_amount: int
    round_ref: str
    round_id: int | None
    debit_transaction_id: str | None
    attempts: int
    next_attempt_at: datetime
    created_at: datetime
    updated_at: datetime
    username: str
    player_id: str | None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def _id_condition(transaction_id: str | None,
                  operator_transaction_id: str | None) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    if transaction_id is not None:
        where.append(WalletCall.transaction_id == transaction_id)
    if operator_transaction_id is not None:
        where.append(WalletCall.operator_transaction_id == operator_transaction_id)
    return where


def rounds_of_ids(session: Session, transaction_id: str | None,
                  operator_transaction_id: str | None) -> set[int]:
    """The stored rounds of the calls both ids name. A played round's debit and credit both
    name it (``wallet_calls.round_id``); a rollback's spin played none."""
    where = _id_condition(transaction_id, operator_transaction_id)
    if not where:
        return set()
    return {int(r) for r in session.scalars(select(WalletCall.round_id).where(*where))
            if r is not None}


def find_calls(db: Database, wanted: CallFilter, limit: int = MAX_CALLS) -> list[CallLine]:
    """The wallet calls ``wanted`` names, oldest first (at most ``limit``)."""
    query = (select(WalletCall, Account.username, Account.external_id)
             .join(Account, Account.id == WalletCall.account_id))
    where = _id_condition(wanted.transaction_id, wanted.operator_transaction_id)
    if wanted.player_id is not None:
        where.append(Account.external_id == wanted.player_id)
    if wanted.round_id is not None:
        where.append(WalletCall.round_id == wanted.round_id)
    with db.read() as session:
        rows = session.execute(query.where(*where).order_by(WalletCall.id).limit(limit)).all()
    return [_line(call, username, player_id) for call, username, player_id in rows]


def _line(c: WalletCall, username: str, player_id: str | None) -> CallLine:
    return CallLine(transaction_id=c.transaction_id,
                    operator_transaction_id=c.operator_transaction_id, kind=c.kind,
                    status=c.status, error=c.error, amount=int(c.amount),
                    jackpot_amount=int(c.jackpot_amount), round_ref=c.round_ref,
                    round_id=c.round_id, debit_transaction_id=c.debit_transaction_id,
                    attempts=int(c.attempts), next_attempt_at=c.next_attempt_at,
                    created_at=c.created_at, updated_at=c.updated_at, username=username,
                    player_id=player_id)


def player_id_of_round(db: Database, round_id: int) -> str | None:
    """The operator's player id of a stored round's player (``None``: ledger mode's)."""
    from starfever.server.models import Round

    with db.read() as session:
        found = session.scalar(select(Account.external_id)
                               .join(Round, Round.account_id == Account.id)
                               .where(Round.id == round_id))
    return None if found is None else str(found)


def round_calls(db: Database, round_id: int) -> list[CallLine]:
    """A stored round's wallet calls (none in ledger mode), oldest first."""
    return find_calls(db, CallFilter(round_id=round_id))


__all__ = ["MAX_CALLS", "CallFilter", "CallLine", "find_calls", "player_id_of_round",
           "round_calls", "rounds_of_ids"]
