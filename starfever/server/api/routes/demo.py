"""Demo play (ADR 0066), under ``/demo``: a session for a play balance (no account), the
spin and the balance of the real game and model, the demo €€€ pool. Nothing here touches the
books (``services.demo``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, status
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from starfever.markets import load_market
from starfever.server.api.deps import ContextDep, bearer_token
from starfever.server.schemas import (
    DemoPoolPublic,
    DemoSessionCreate,
    DemoSessionPublic,
    DemoWalletPublic,
    SpinCreate,
    is_idempotency_key,
)
from starfever.server.services import demo
from starfever.server.services.errors import BadRequest, NotFound

router = APIRouter(prefix="/demo", tags=["demo play"])


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


def _demo_token(authorization: str | None) -> str:
    token = bearer_token(authorization)
    if not token.startswith(demo.TOKEN_PREFIX):
        raise BadRequest("demo play takes a demo token (POST /demo/sessions)",
                         code="not_a_demo_token")
    return token


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
async def open_demo(body: DemoSessionCreate, context: ContextDep,
                    request: Request) -> DemoSessionPublic:
    """A demo session with a play balance of EUR 1,000.00 for 12 hours: ``{}`` where the
    market allows demo play to anyone (``403 demo_not_allowed`` /
    ``demo_requires_verified_player`` otherwise; an address may open
    ``STARFEVER_DEMO_SESSIONS_PER_ADDRESS`` an hour, then ``429 too_many_demo_sessions``), or
    ``{"launch_token"}`` from the operator's demo launch (once, within 60 s). ``503
    maintenance`` while the game is closed."""
    market = load_market(context.settings.market)
    if body.launch_token is not None:
        if context.wallet.launch_secret is None:
            raise NotFound("demo launch tokens exist only in operator mode",
                           code="not_operator_mode")
        token, expires = await run_in_threadpool(demo.exchange, context.db, context.settings,
                                                 body.launch_token)
    else:
        token, expires = await run_in_threadpool(demo.open_session, context.db,
                                                 context.settings, market, _client(request))
    return DemoSessionPublic(token=token, expires_at=expires, balance=demo.DEMO_BALANCE,
                             currency=demo.currency_of(context.settings, token))


@router.get("/wallet")
def demo_wallet(context: ContextDep,
                authorization: Annotated[str | None, Header()] = None) -> DemoWalletPublic:
    """The demo session's play balance, in the currency its operator launch named (else the
    first served; ADR 0078)."""
    token = _demo_token(authorization)
    return DemoWalletPublic(balance=demo.balance(context.db, context.settings, token),
                            currency=demo.currency_of(context.settings, token))


@router.get("/jackpot")
def demo_jackpot(context: ContextDep) -> DemoPoolPublic:
    """The demo €€€ pool (fed by demo bets only; never the real pool)."""
    return DemoPoolPublic(pool=demo.pool(context.db, context.model))


@router.post("/spins", status_code=status.HTTP_201_CREATED)
async def demo_spin(body: SpinCreate, context: ContextDep, request: Request,
                    authorization: Annotated[str | None, Header()] = None,
                    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
                    ) -> Any:
    """A demo round: as ``POST /spins`` (the same answer, with ``"demo": true`` and no
    reality check), on the play balance and the demo pool. The market's stake limit and
    least time per round hold; ``STARFEVER_DEMO_SPINS_PER_ADDRESS`` a minute per address
    (``429 too_many_demo_spins``); ``503 maintenance`` while the game is closed. A retry of
    the last spin under its key answers it again (200)."""
    token = _demo_token(authorization)
    if idempotency_key is None or not is_idempotency_key(idempotency_key):
        raise BadRequest("send an Idempotency-Key header of 1-128 characters of "
                         "A-Z a-z 0-9 _ . : -", code="idempotency_key_required")
    market = load_market(context.settings.market)
    answer = await run_in_threadpool(
        demo.spin, context.db, context.settings, context.model, market, token, body.line_bet,
        idempotency_key, body.test_draws, _client(request))
    return JSONResponse(answer, status_code=200 if answer["replayed"] else 201)
