"""Typed dependencies of the routes: the server context and the caller's identity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request
from starlette.concurrency import run_in_threadpool

from starfever.engine.model import MathModel
from starfever.server import logs
from starfever.server.db import Database
from starfever.server.models import OPERATOR, PLAYER
from starfever.server.services import auth
from starfever.server.services.auth import Principal
from starfever.server.services.errors import Unauthorized
from starfever.server.settings import Settings
from starfever.server.spin.wallets import WalletPort


@dataclass(frozen=True, slots=True)
class Context:
    """What every request may use: settings, database, the live model, the wallet."""

    settings: Settings
    db: Database
    model: MathModel
    wallet: WalletPort
    """The wallet port: a route asks it what it can do, never which mode runs."""


async def get_context(request: Request) -> Context:
    """The application's context (async: no I/O, so it need not take a worker thread)."""
    context: Context = request.app.state.context
    return context


ContextDep = Annotated[Context, Depends(get_context)]


def bearer_token(authorization: str | None) -> str:
    """The token of ``Authorization: Bearer <token>``; ``Unauthorized`` for anything else."""
    if not authorization:
        raise Unauthorized("send Authorization: Bearer <token>", code="missing_token")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 256:
        raise Unauthorized("the Authorization header must be 'Bearer <token>'",
                           code="invalid_token")
    return token


def current_principal(context: ContextDep,
                      authorization: Annotated[str | None, Header()] = None) -> Principal:
    """The caller, from ``Authorization: Bearer <token>`` (its account a field of the
    request's log lines)."""
    principal = auth.authenticate(context.db, context.settings, bearer_token(authorization))
    logs.bind(account_id=principal.account_id, role=principal.role)
    return principal


async def current_spinner(context: ContextDep,
                          authorization: Annotated[str | None, Header()] = None) -> Principal:
    """The caller of a spin, who must be a player; the token's session is checked again
    inside the spin's transaction. A token this process has already seen valid is known from
    memory (:func:`auth.known_spinner`); any other is looked up in a worker thread."""
    token = bearer_token(authorization)
    principal = auth.known_spinner(context.db, context.settings, token)
    if principal is None:
        principal = await run_in_threadpool(auth.authenticate, context.db, context.settings,
                                            token)
    logs.bind(account_id=principal.account_id, role=principal.role)
    return auth.require_role(principal, PLAYER)


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def current_player(principal: PrincipalDep) -> Principal:
    """The caller, who must be a player."""
    return auth.require_role(principal, PLAYER)


def current_operator(principal: PrincipalDep) -> Principal:
    """The caller, who must be an operator."""
    return auth.require_role(principal, OPERATOR)


PlayerDep = Annotated[Principal, Depends(current_player)]
OperatorDep = Annotated[Principal, Depends(current_operator)]
SpinnerDep = Annotated[Principal, Depends(current_spinner)]
