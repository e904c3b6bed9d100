"""Registration, and the operator's cashier (deposits, withdrawals)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Path, Request, Response, status

from starfever.server.api.deps import ContextDep, OperatorDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import (
    IDEMPOTENCY_KEY_PATTERN,
    USERNAME_PATTERN,
    CashierPublic,
    DepositCreate,
    PlayerCreate,
    PlayerPublic,
    is_idempotency_key,
)
from starfever.server.services import auth, cashier
from starfever.server.services.currency import served_currency
from starfever.server.services.errors import BadRequest, TooManyRequests, Unavailable

router = APIRouter(prefix="/players", tags=["players"], route_class=RetryOnDisconnect)
UsernamePath = Path(pattern=USERNAME_PATTERN)


@router.post("", status_code=status.HTTP_201_CREATED)
def register(body: PlayerCreate, context: ContextDep, request: Request) -> PlayerPublic:
    """Register a player (username, password, birth date: 18 or older). Registrations from
    one address are limited per hour (``429 too_many_registrations``, ``Retry-After``). Not
    in operator mode, where players come from the operator's launch (403 ``operator_mode``).
    The wallet holds the installation's first currency, or ``currency`` if it is served
    (``422 currency_not_served`` otherwise, nothing written)."""
    book = context.wallet.ledger("registration")  # refused where the operator keeps players
    currency = served_currency(context.settings, body.currency)
    birth = body.birth()
    auth.check_player_age(birth)  # a refusal that costs nothing is not counted
    client = request.client.host if request.client else ""
    attempt = auth.claim_registration(context.db, context.settings, client)
    try:
        account = auth.register(context.db, book, body.username, body.password,
                                birth_date=birth, settings=context.settings, client=client,
                                currency=currency)
    except (TooManyRequests, Unavailable):  # the hashing gate: nothing was hashed
        auth.forget_registration(context.db, attempt)
        raise
    return PlayerPublic(username=account.username, role=account.role,
                        birth_date=account.birth_date, created_at=account.created_at,
                        currency=currency)


_CASHIER_REPLAYED = {"model": CashierPublic,
                     "description": "A retry of an Idempotency-Key already booked: the first "
                                    "answer, no money moved"}
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key")]
KeyPath = Path(json_schema_extra={"pattern": IDEMPOTENCY_KEY_PATTERN})
"""The key of a cashier lookup: documented with its pattern, checked by :func:`_key` so that a
bad one is the same ``400 invalid_idempotency_key`` as in the header of the POST."""


def _key(idempotency_key: str | None) -> str:
    """The request's key: a cashier request without one is refused (``400
    idempotency_key_required``), so no retry can book twice (ADR 0053)."""
    if idempotency_key is None:
        raise BadRequest("a cashier request needs an Idempotency-Key header (1-128 characters "
                         "of A-Z a-z 0-9 _ . : -), the same one when it is retried",
                         code="idempotency_key_required")
    if not is_idempotency_key(idempotency_key):
        raise BadRequest("the Idempotency-Key must be 1-128 characters of A-Z a-z 0-9 _ . : -",
                         code="invalid_idempotency_key")
    return idempotency_key


def _public(result: cashier.CashierResult, response: Response | None = None) -> CashierPublic:
    if response is not None and result.replayed:
        response.status_code = status.HTTP_200_OK
    return CashierPublic(username=result.username, kind=result.kind, amount=result.amount,
                         balance=result.balance, transaction_id=result.entry_id,
                         idempotency_key=result.idempotency_key, created_at=result.created_at,
                         replayed=result.replayed and response is not None)


@router.post("/{username}/deposits", status_code=status.HTTP_201_CREATED,
             responses={status.HTTP_200_OK: _CASHIER_REPLAYED})
def deposit(body: DepositCreate, context: ContextDep, operator: OperatorDep,
            response: Response, idempotency_key: IdempotencyKey = None,
            username: str = UsernamePath) -> CashierPublic:
    """Cashier: credit a player's wallet (operator only; limits and self-exclusion apply).
    An ``Idempotency-Key`` is required (ADR 0017, 0053; without one ``400
    idempotency_key_required``): send the same one when retrying, and a retry answers the
    first booking (200, ``replayed``) and moves no money; the same key with another request is
    ``409 idempotency_key_reused``."""
    result = cashier.deposit(context.db, context.settings, context.wallet.ledger("the cashier"),
                             username, body.amount,
                             key=_key(idempotency_key), operator_id=operator.account_id)
    return _public(result, response)


@router.post("/{username}/withdrawals", status_code=status.HTTP_201_CREATED,
             responses={status.HTTP_200_OK: _CASHIER_REPLAYED})
def withdraw(body: DepositCreate, context: ContextDep, operator: OperatorDep,
             response: Response, idempotency_key: IdempotencyKey = None,
             username: str = UsernamePath) -> CashierPublic:
    """Cashier: pay out of a player's wallet (operator only), once per ``Idempotency-Key``,
    required as for deposits."""
    result = cashier.withdraw(context.db, context.settings, context.wallet.ledger("the cashier"),
                              username, body.amount, key=_key(idempotency_key),
                              operator_id=operator.account_id)
    return _public(result, response)


@router.get("/{username}/deposits/{key}")
def deposit_by_key(context: ContextDep, _operator: OperatorDep, username: str = UsernamePath,
                   key: str = KeyPath) -> CashierPublic:
    """Cashier: the deposit booked under this Idempotency-Key (``404 transaction_not_found``:
    none was, and a POST with the key books it)."""
    return _public(cashier.lookup(context.db, "deposit", username, _key(key)))


@router.get("/{username}/withdrawals/{key}")
def withdrawal_by_key(context: ContextDep, _operator: OperatorDep,
                      username: str = UsernamePath, key: str = KeyPath) -> CashierPublic:
    """Cashier: the withdrawal booked under this Idempotency-Key (as for deposits)."""
    return _public(cashier.lookup(context.db, "withdrawal", username, _key(key)))
