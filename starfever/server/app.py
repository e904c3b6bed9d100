"""The FastAPI application factory. Nothing happens at import time: ``create_app(settings)``
builds an app; ``app_from_env`` is the factory uvicorn workers call."""

from __future__ import annotations

import gc
import ipaddress
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from starfever.engine.model import load_model
from starfever.markets import load_market
from starfever.server import clock, metrics
from starfever.server.api import errors, round_details_page
from starfever.server.api.deps import Context
from starfever.server.api.query_checks import known_query_only
from starfever.server.api.request_checks import RequestChecks
from starfever.server.api.routes import (
    controls,
    demo,
    free_rounds,
    health,
    jackpot,
    launch,
    operator,
    players,
    protection,
    rounds,
    sessions,
    software,
    spins,
    unpaid_wins,
)
from starfever.server.api.routes import (
    wallet as wallet_routes,
)
from starfever.server.api.security import SecurityHeaders
from starfever.server.api.spin_route import SpinRoute
from starfever.server.db import Database
from starfever.server.identity import check_startup
from starfever.server.observe import Drain, RequestMiddleware
from starfever.server.schemas import ErrorPublic
from starfever.server.seamless_config import (
    DEFAULT_PROBE_S,
    OperatorConfig,
    get_operator_config,
)
from starfever.server.services import round_details
from starfever.server.services.anchor import ensure_boundary
from starfever.server.services.jackpot import ensure_pool
from starfever.server.services.wallet_probe import WalletProbe
from starfever.server.settings import Settings, get_settings
from starfever.server.spin.wallets import LedgerWallet, WalletPort
from starfever.web import mount_web
from starfever.web.backoffice import mount_backoffice
from starfever.web.routes import warm_figures

log = logging.getLogger("starfever.server")
API_PREFIX = "/api/v1"
ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorPublic, "description": description} for status, description in (
        (400, "Malformed request (malformed_json: not strict JSON, a key twice in an object; "
              "a missing, invalid or repeated Idempotency-Key)"),
        (401, "Missing, invalid or expired bearer token, or wrong credentials (operator "
              "mode: a forged launch, a used or expired launch token)"),
        (403, "Wrong role, self-excluded, or over the deposit limit (operator mode: "
              "player_blocked, or what is the operator's)"),
        (404, "No such resource (or not yours)"),
        (405, "Method not allowed"),
        (409, "Conflicts with the current state (funds, taken name, reused key, a reality "
              "check to acknowledge)"),
        (413, "Request body over the size limit"),
        (415, "A request body that is not JSON (Content-Type: application/json)"),
        (422, "Values not acceptable (validation_error lists the fields)"),
        (429, "Too many failed log-ins, or a spin before the market's minimum round duration "
              "(round_too_soon); the Retry-After header says when to try again"),
        (500, "The server failed; nothing was changed"),
        (502, "Operator mode: the operator's wallet refused a call for a reason of the "
              "integration; nothing was played"),
        (503, "Not ready (not_ready), busy (server_busy), the database connection was lost "
              "while saving (commit_unknown: the change may or may not have been made), no "
              "database that takes writes within reach (database_unavailable: a failover under "
              "way; send the request again with its Idempotency-Key after Retry-After), or, in "
              "operator mode, the operator's wallet did not answer (wallet_unavailable: the bet "
              "was rolled back and nothing was played)"),
    )}
"""Every API operation documents the one error body for each status it can answer."""
TEST_MODE_WARNING = ("STARFEVER_TEST_MODE=1: spins accept test_draws, outcomes can be forced. "
                     "NEVER run a real-money installation like this.")


def create_app(settings: Settings, *, wallet: WalletPort | None = None,
               operator_mode: OperatorConfig | None = None) -> FastAPI:
    """An application for ``settings`` (the database must already be migrated); with
    ``operator_mode``, in operator mode (OPERATOR-WALLET.md)."""
    from starfever.server.spin.seamless_wallet import SeamlessWallet

    settings.check()
    clock.follow_file(settings.test_clock_file or None)  # a test server only (ADR 0041)
    model = load_model(settings.model)
    identity = check_startup(settings, model)  # production refuses a mismatch (ADR 0020)
    db = Database(settings.database_url)
    if wallet is None:
        wallet = SeamlessWallet(db, operator_mode,
                                details_key=round_details.details_key(settings.secret_key),
                                probe_currency=settings.served_currencies[0]) \
            if operator_mode else LedgerWallet(db)
    if operator_mode is not None:
        from starfever.seamless import client

        if metrics.observe_wallet_call not in client.observers:
            client.observers.append(metrics.observe_wallet_call)
    context = Context(settings=settings, db=db, model=model, wallet=wallet)
    probe = WalletProbe(wallet, operator_mode.probe if operator_mode else DEFAULT_PROBE_S)

    drain = Drain(settings.drain_seconds, settings.drain_grace_seconds)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if settings.test_mode:
            log.warning("!" * 20 + " %s " + "!" * 20, TEST_MODE_WARNING)
        for warning in identity.warnings:
            log.warning("%s", warning)
        ensure_pool(db, model, settings.served_currencies)
        ensure_boundary(db, settings.chain_key())
        # the rules page and the game conditions state the model's exact figures: read them
        # from their cache now, or for a model never seen compute them (up to a minute, ADR
        # 0032) beside the serving, not in the first player's GET /game
        threading.Thread(target=warm_figures, args=(model, load_market(settings.market)),
                         daemon=True,
                         name="starfever-figures").start()
        context.wallet.start()
        probe.start()
        metrics.watch_gc()
        drain.install()
        # everything loaded so far (modules, the model, the engines, the app) lives as long as
        # the process: out of the collector's reach, a full collection no longer walks it
        # (it paused each worker for 110-130 ms, the load test's p99; ADR 0027)
        gc.collect()
        gc.freeze()
        yield
        drain.uninstall()
        probe.stop()
        await context.wallet.aclose()
        db.dispose()

    production = settings.environment == "production"
    # No Swagger UI at all: FastAPI's loads its script and styles from a CDN (a floating
    # version, no integrity check) on the origin that holds the player's token. The schema
    # itself is served in development only.
    app = FastAPI(title="Star Fever game server", version="1.0.0", lifespan=lifespan,
                  openapi_url=None if production else "/openapi.json", docs_url=None,
                  redoc_url=None)
    app.state.context = context
    app.state.identity = identity
    app.state.drain = drain
    app.state.wallet_probe = probe
    errors.install(app)
    app.add_middleware(errors.BodyLimit, max_bytes=settings.max_body_bytes)
    # inside the lean door, which serves only what passes these checks (ADR 0025)
    app.add_middleware(RequestChecks, max_bytes=settings.max_body_bytes)
    app.add_middleware(SpinRoute, context=context, max_bytes=settings.max_body_bytes)
    app.add_middleware(SecurityHeaders, production=production)
    app.add_middleware(RequestMiddleware, drain=drain)  # outermost: every answer has an id
    # the spin route first: FastAPI matches a request against the routes in order (twice:
    # to choose, then to handle), so the most frequent request scans the fewest. Each router
    # straight into the app: FastAPI builds a route again for every router it passes
    # through, and a router between them cost a third of every server start's route building
    routers = [module.router for module in (
        spins, health, players, sessions, wallet_routes, rounds, jackpot, protection,
        operator, unpaid_wins, software, launch, demo, free_rounds)]
    routers += [controls.signed, controls.backoffice, controls.public]  # ADR 0067
    for router in routers:
        # a query parameter no route takes is 422, never silently ignored (issue 35)
        app.include_router(router, prefix=API_PREFIX, responses=ERROR_RESPONSES,
                           dependencies=[Depends(known_query_only)])
    app.include_router(health.probes)
    _metrics_route(app, context)
    player_prefix = mount_web(app, api_prefix=API_PREFIX)
    mount_backoffice(app, player_prefix=player_prefix)
    round_details_page.mount(app, context, css=(f"{player_prefix}/css/app.css",
                                                f"{player_prefix}/css/round-details.css"),
                             script=f"{player_prefix}/js/round-replay.js")
    return app


def _metrics_route(app: FastAPI, context: Context) -> None:
    """``GET /metrics`` (Prometheus text format): with ``STARFEVER_METRICS_TOKEN`` set, for
    its bearer only; without, for loopback and private addresses only."""
    token = context.settings.metrics_token

    def refused(request: Request) -> bool:
        if token:
            import hmac

            sent = request.headers.get("authorization", "")
            return not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())
        host = request.client.host if request.client else ""
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return True
        return not (address.is_loopback or address.is_private)

    @app.get("/metrics", include_in_schema=False)
    def scrape(request: Request) -> Response:
        if refused(request):
            return JSONResponse({"error": {"code": "forbidden", "message": "metrics are for "
                                           "the monitoring (see docs/production.md)"}},
                                status_code=403)
        return Response(metrics.scrape(context.db, operator_mode=context.wallet.calls_operator),
                        media_type=metrics.CONTENT_TYPE)


def app_from_env() -> FastAPI:
    """The factory ``uvicorn --factory`` calls in every worker: settings from the environment
    (and ``STARFEVER_PROFILE``, a developer's switch: ``starfever.server.profiling``)."""
    from starfever.server import profiling

    profile = profiling.start()
    app = create_app(get_settings(), operator_mode=get_operator_config())
    if profile is not None:
        app.router.lifespan_context = profiling.writing_at_shutdown(app.router.lifespan_context,
                                                                    profile)
    return app
