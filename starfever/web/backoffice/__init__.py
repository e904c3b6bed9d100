"""The back office: an operator's pages at ``/operator`` (plain HTML, CSS and JavaScript
modules, no build step, like the player client), on the back-office API under
``/api/v1/operator``.

Its files are served under ``/operator/static/<version>/`` (a hash of them, cached for good,
as the player client's). The round recall imports the player client's own modules (reels,
Hold & Cash board, round player) from the player client's versioned prefix, which the page
is given in ``data-player-assets``: the back office replays a round with the very code the
player saw it with, never a copy.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from starlette.middleware.gzip import GZipMiddleware

from starfever.web import VersionedFiles, asset_version

STATIC_DIR = Path(__file__).parent / "static"


def mount_backoffice(app: FastAPI, *, player_prefix: str) -> str:
    """Serve the back office at ``/operator`` and its files; returns its asset prefix."""
    prefix = f"/operator/static/{asset_version(STATIC_DIR)}"
    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8") \
        .replace('"/operator/static/', f'"{prefix}/') \
        .replace('"/static/', f'"{player_prefix}/') \
        .replace('data-player-assets=""', f'data-player-assets="{player_prefix}"')
    app.mount(prefix, GZipMiddleware(VersionedFiles(directory=STATIC_DIR), minimum_size=512),
              name="backoffice-static")

    @app.api_route("/operator", methods=["GET", "HEAD"], include_in_schema=False)
    def backoffice_page() -> HTMLResponse:
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    return prefix
