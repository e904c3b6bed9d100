"""Registration, and the operator's cashier (deposits, withdrawals)."""

from __future__ import annotations

from fastapi import APIRouter, Path, Request, status

from starfever.server.api.deps import ContextDep, OperatorDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import (
    USERNAME_PATTERN,
    CashierPublic,
    DepositCreate,
    PlayerCreate,
    PlayerPublic,
)
from starfever.server.services import auth, cashier, launch

router = APIRouter(prefix="/players", tags=["players"], route_class=RetryOnDisconnect)
UsernamePath = Path(pattern=USERNAME_PATTERN)


@router.post("", status_code=status.HTTP_201_CREATED)
def register(body: PlayerCreate, context: ContextDep, request: Request) -> PlayerPublic:
    """Register a player (username, password, birth date: 18 or older). Registrations from
    one address are limited per hour (``429 too_many_registrations``, ``Retry-After``). Not
    in operator mode, where players come from the operator's launch (403 ``operator_mode``)."""
    if context.operator is not None:
        launch.refuse_in_operator_mode("registration")
    birth = body.birth()
    auth.check_player_age(birth)  # a refusal that costs nothing is not counted
    auth.claim_registration(context.db, context.settings,
                            request.client.host if request.client else "")
    account = auth.register(context.db, context.wallet, body.username, body.password,
                            birth_date=birth, settings=context.settings)
    return PlayerPublic(username=account.username, role=account.role,
                        birth_date=account.birth_date, created_at=account.created_at)


@router.post("/{username}/deposits", status_code=status.HTTP_201_CREATED)
def deposit(body: DepositCreate, context: ContextDep, _operator: OperatorDep,
            username: str = UsernamePath) -> CashierPublic:
    """Cashier: credit a player's wallet (operator only; limits and self-exclusion apply)."""
    if context.operator is not None:
        launch.refuse_in_operator_mode("the cashier")
    result = cashier.deposit(context.db, context.settings, context.wallet, username, body.amount)
    return CashierPublic(username=result.username, amount=result.amount, balance=result.balance)


@router.post("/{username}/withdrawals", status_code=status.HTTP_201_CREATED)
def withdraw(body: DepositCreate, context: ContextDep, _operator: OperatorDep,
             username: str = UsernamePath) -> CashierPublic:
    """Cashier: pay out of a player's wallet (operator only)."""
    if context.operator is not None:
        launch.refuse_in_operator_mode("the cashier")
    result = cashier.withdraw(context.db, context.settings, context.wallet, username,
                              body.amount)
    return CashierPublic(username=result.username, amount=result.amount, balance=result.balance)
