"""Operator mode's wallet calls as data: their states, their ``wallet_calls`` row and its
acknowledgement, and the one check that a retried request is the request first sent under its
key.

Every call to the operator's wallet (OPERATOR-WALLET.md) is a ``wallet_calls`` row written
*before* it is sent; the call book (``call_book``) writes a debit's, the rule (``rule``) a
round's credit, the seamless wallet (``seamless_wallet``) a rollback's, all built here, so the
row has one shape whoever writes it. Pure: no database, no clock (``now`` is an argument).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from starfever.seamless import protocol
from starfever.server.services.errors import Conflict


class CallState(StrEnum):
    """Where a call stands (the ``wallet_calls.status`` column)."""

    PENDING = "pending"
    """Recorded and not (yet) answered: sent again until it is."""
    ACKNOWLEDGED = "acknowledged"
    """The operator answered ``200``."""
    REFUSED = "refused"
    """The operator refused it with a final ``4xx`` code (``error``)."""
    ROLLED_BACK = "rolled_back"
    """A debit given up (no valid answer in time): its rollback is recorded beside it."""


class CallKind(StrEnum):
    """What a call asks of the operator's wallet (the protocol's method)."""

    DEBIT = protocol.DEBIT
    CREDIT = protocol.CREDIT
    ROLLBACK = protocol.ROLLBACK


NO_OPERATOR_SESSION = "-"
"""The ``operator_session`` sent for a session opened by a version-1 launch, which had none
(its credits are still sent; the operator never refuses a credit for its session)."""


@dataclass(frozen=True, slots=True)
class Carried:
    """What every wallet call of a session carries of the operator's launch (issue 36 item 3,
    ADR 0081): its ``operator_session`` and its ``brand``. Both are read from the session's row
    (``sessions``, through the call's ``session_id``) whenever a call is built, the first send
    and every resend alike, so a resend or rollback after a restart carries what the first
    send did."""

    operator_session: str | None = None
    """The launch's token (``None``: a version-1 launch, sent as :data:`NO_OPERATOR_SESSION`)."""
    brand: str | None = None
    """The launch's brand (``None``: it named none, and the calls carry no ``brand``)."""

    def fields(self) -> dict[str, str]:
        """The request fields: ``operator_session`` always, ``brand`` when the launch gave
        one."""
        sent = {"operator_session": self.operator_session or NO_OPERATOR_SESSION}
        if self.brand is not None:
            sent["brand"] = self.brand
        return sent


def call_row(kind: CallKind, transaction_id: str, *, account_id: int, session_id: int | None,
             round_ref: str, now: datetime, amount: int = 0, jackpot_amount: int = 0,
             round_id: int | None = None, key: str | None = None,
             fingerprint: str | None = None, debit_id: str | None = None,
             free_round: str | None = None, currency: str = "EUR") -> dict[str, Any]:
    """A new call's ``wallet_calls`` values (column -> value), ``pending`` and never tried:
    ``key`` and ``fingerprint`` are the spin request's (``Idempotency-Key`` and hash),
    ``debit_id`` names the debit a credit or rollback belongs to, ``free_round`` is a free
    round's ``free_round`` block (JSON) sent with it, ``currency`` its session's."""
    return {"transaction_id": transaction_id, "kind": kind, "account_id": account_id,
            "session_id": session_id, "round_ref": round_ref, "round_id": round_id,
            "idempotency_key": key, "request_hash": fingerprint,
            "debit_transaction_id": debit_id, "amount": amount,
            "jackpot_amount": jackpot_amount, "status": CallState.PENDING, "error": None,
            "operator_transaction_id": None, "balance": None, "attempts": 0,
            "next_attempt_at": now, "created_at": now, "updated_at": now,
            "free_round": free_round, "currency": currency}


def acknowledgement(transaction_id: str, *, balance: int | None,
                    operator_transaction_id: str | None, now: datetime) -> dict[str, Any]:
    """The update of a call's row (by ``transaction_id``) that records the operator's ``200``:
    its balance after the call and its own id."""
    return {"transaction_id": transaction_id, "status": CallState.ACKNOWLEDGED, "error": None,
            "balance": balance, "operator_transaction_id": operator_transaction_id,
            "updated_at": now}


def check_same_request(stored_hash: str | None, fingerprint: str) -> None:
    """Refuse a spin request sent under a key already used for a different one (``409
    idempotency_key_reused``): whatever was stored under the key, a round or a debit, must
    have been stored for this very request."""
    if stored_hash != fingerprint:
        raise Conflict("this Idempotency-Key was used for a different spin request",
                       code="idempotency_key_reused")


__all__ = ["NO_OPERATOR_SESSION", "CallKind", "CallState", "Carried", "acknowledgement",
           "call_row", "check_same_request"]
