"""The browser client: static files (HTML, CSS, JavaScript modules, no build step) served by the
game server at ``/``, and ``GET /api/v1/game`` with the rules as data (:mod:`.routes`)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"
"""Where the page, its styles and its modules live (shipped as package data)."""


def mount_web(app: FastAPI, *, api_prefix: str = "/api/v1") -> None:
    """Serve the page at ``/``, its files under ``/static`` and the game data router."""
    from starfever.web.routes import router

    app.include_router(router, prefix=api_prefix)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="web-static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html",
                            headers={"Cache-Control": "no-cache"})
