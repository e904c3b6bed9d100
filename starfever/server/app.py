"""The FastAPI application factory. Nothing happens at import time: ``create_app(settings)``
builds an app; ``app_from_env`` is the factory uvicorn workers call."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI

from starfever.engine.model import load_model
from starfever.server.api import errors
from starfever.server.api.deps import Context
from starfever.server.api.routes import (
    health,
    jackpot,
    operator,
    players,
    protection,
    rounds,
    sessions,
    spins,
)
from starfever.server.api.routes import (
    wallet as wallet_routes,
)
from starfever.server.db import Database
from starfever.server.services.jackpot import ensure_pool
from starfever.server.services.wallet import LedgerWallet, WalletPort
from starfever.server.settings import Settings, get_settings
from starfever.web import mount_web

log = logging.getLogger("starfever.server")
API_PREFIX = "/api/v1"
TEST_MODE_WARNING = ("STARFEVER_TEST_MODE=1: spins accept test_draws, outcomes can be forced. "
                     "NEVER run a real-money installation like this.")


def create_app(settings: Settings, *, wallet: WalletPort | None = None) -> FastAPI:
    """An application for ``settings`` (the database must already be migrated)."""
    settings.check()
    model = load_model(settings.model)
    db = Database(settings.database_url)
    context = Context(settings=settings, db=db, model=model, wallet=wallet or LedgerWallet())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if settings.test_mode:
            log.warning("!" * 20 + " %s " + "!" * 20, TEST_MODE_WARNING)
        ensure_pool(db, model)
        yield
        db.dispose()

    app = FastAPI(title="Star Fever game server", version="1.0.0", lifespan=lifespan,
                  openapi_url="/openapi.json", docs_url="/docs", redoc_url=None)
    app.state.context = context
    errors.install(app)
    app.add_middleware(errors.BodyLimit, max_bytes=settings.max_body_bytes)
    api = APIRouter(prefix=API_PREFIX)
    for module in (health, players, sessions, wallet_routes, spins, rounds, jackpot,
                   protection, operator):
        api.include_router(module.router)
    app.include_router(api)
    mount_web(app, api_prefix=API_PREFIX)
    return app


def app_from_env() -> FastAPI:
    """The factory ``uvicorn --factory`` calls in every worker: settings from the environment."""
    return create_app(get_settings())
