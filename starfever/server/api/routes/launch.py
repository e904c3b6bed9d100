"""Operator mode: the operator's signed launch of a player (OPERATOR-WALLET.md)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Header, Request
from starlette.concurrency import run_in_threadpool

from starfever.markets import load_market
from starfever.seamless import protocol as p
from starfever.server.api.deps import ContextDep
from starfever.server.schemas import LaunchPublic
from starfever.server.services import controls, demo, market_rules
from starfever.server.services import launch as service
from starfever.server.services.errors import NotFound, Unavailable, Unprocessable, utcnow

router = APIRouter(prefix="/launch", tags=["operator mode"])


@router.post("")
async def launch(context: ContextDep, request: Request,
                 signature: Annotated[str | None, Header(alias=p.OPERATOR_SIGNATURE)] = None,
                 ) -> LaunchPublic:
    """The operator's back end launches a player it has verified (wallet protocol v2): the body
    ``{"launch_id", "player_id", "operator_session", "currency": "EUR", "language": "de"|"en",
    "market", "mode": "real", "return_url", "timestamp"}`` and optionally ``"brand"``,
    ``"reality_check_seconds"``, ``"session_time_limit_seconds"`` (each 60 s up to the token's
    lifetime, or a day: else ``422 reality_check_out_of_range`` /
    ``session_time_limit_out_of_range``) and ``"birth_date"`` (``403 under_age`` under 18),
    signed with ``X-Operator-Signature``
    (hex HMAC-SHA256 of the raw body under the shared secret). A ``launch_id`` used before is
    ``409 launch_replayed``, a ``timestamp`` more than 60 s old or 30 s ahead ``409
    stale_launch``; a currency not served ``422 currency_not_served``. ``mode: "demo"`` launches
    demo play (ADR 0066): the address carries ``demo_launch`` instead of ``launch``, a
    market that forbids demo play refuses it (``403 demo_not_allowed``). The answer is the
    game's address on the configured public origin (``--public-url``; never the request's
    ``Host`` header) with a single-use launch token valid for 60 s, and the market profile
    the game is played under: the one this server runs (``starfever serve --market``); a
    launch for another market is refused (``422 market_not_served``), and a real-money launch
    without ``birth_date`` in a market whose stake cap depends on age (``422
    birth_date_required``)."""
    secret = context.wallet.launch_secret
    if secret is None:
        raise NotFound("this server is not in operator mode (starfever serve --wallet "
                       "operator)", code="not_operator_mode")
    public_url = context.wallet.public_url
    if public_url is None:
        raise Unavailable("no public origin is configured for launch addresses (starfever "
                          "serve --public-url)", code="public_url_not_configured")
    raw = await request.body()
    await run_in_threadpool(controls.check_game_open, context.db)  # ADR 0067
    checked = service.check_launch(
        secret, raw, signature, utcnow(),
        max_reality_check_seconds=context.settings.token_ttl_seconds,
        currencies=context.settings.served_currencies)
    market = load_market(context.settings.market)
    if checked.market != market.name:
        raise Unprocessable(f"this server plays the market {market.name!r}, not "
                            f"{checked.market!r} (starfever serve --market)",
                            code="market_not_served")
    # a market whose stake cap depends on age needs the birth date (ADR 0077)
    market_rules.check_launch_birth_date(market, checked.options.birth_date,
                                         real=checked.mode == service.REAL)
    if checked.mode == service.DEMO:
        demo.check_market(market, verified=True)  # the operator verified its player
        client = request.client.host if request.client else ""
        token, expires = await run_in_threadpool(demo.launch, context.db, context.settings,
                                                 checked.launch_id, client, checked.currency)
        query = urlencode({"demo_launch": token, "lang": checked.language,
                           "return_url": checked.return_url})
        return LaunchPublic(url=f"{public_url}/?{query}", expires_at=expires,
                            market=market.public())
    token, expires = await run_in_threadpool(service.launch, context.db, context.settings,
                                             checked)
    query = urlencode({"launch": token, "lang": checked.language,
                       "return_url": checked.return_url, "player": checked.player_id})
    return LaunchPublic(url=f"{public_url}/?{query}", expires_at=expires,
                        market=market.public())
