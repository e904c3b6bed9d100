"""Support by anyone's ids (issue 35, finding 2): the wallet calls of a round with both sides'
ids, and the rounds and calls an id names, whoever's id it is: the operator's player id
(``accounts.external_id``), the operator's transaction id of a debit, credit or rollback
(``wallet_calls.operator_transaction_id``, from its reply), Star Fever's own call id
(``wallet_calls.transaction_id``) or the round id.

A call names its round directly (a credit, a played debit) or through its debit (a rollback,
or a debit's id when only the credit carries the round): both are followed, so any of a
spin's ids finds its round.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import Session, aliased

from starfever.server.db import Database
from starfever.server.models import Account, WalletCall
from starfever.server.spin.calls import CallKind

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
    """The stored round: its debit, its credit, and a rollback of its debit."""

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
    """The stored rounds of the calls both ids name (a call's own round, else its debit's)."""
    where = _id_condition(transaction_id, operator_transaction_id)
    if not where:
        return set()
    found: set[int] = set()
    debits: set[str] = set()
    for round_id, debit_id in session.execute(
            select(WalletCall.round_id, WalletCall.debit_transaction_id).where(*where)):
        if round_id is not None:
            found.add(int(round_id))
        elif debit_id is not None:
            debits.add(str(debit_id))
    if debits:
        found.update(int(r) for r in session.scalars(
            select(WalletCall.round_id).where(WalletCall.transaction_id.in_(debits)))
            if r is not None)
    return found


def _round_calls(round_id: int) -> ColumnElement[bool]:
    """The calls of a stored round: those naming it, and those whose debit names it."""
    debit = aliased(WalletCall)
    debits_of_round = select(debit.transaction_id).where(debit.round_id == round_id,
                                                         debit.kind == CallKind.DEBIT)
    return or_(WalletCall.round_id == round_id,
               WalletCall.debit_transaction_id.in_(debits_of_round.scalar_subquery()))


def find_calls(db: Database, wanted: CallFilter, limit: int = MAX_CALLS) -> list[CallLine]:
    """The wallet calls ``wanted`` names, oldest first (at most ``limit``)."""
    query = (select(WalletCall, Account.username, Account.external_id)
             .join(Account, Account.id == WalletCall.account_id))
    where = _id_condition(wanted.transaction_id, wanted.operator_transaction_id)
    if wanted.player_id is not None:
        where.append(Account.external_id == wanted.player_id)
    if wanted.round_id is not None:
        where.append(_round_calls(wanted.round_id))
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
