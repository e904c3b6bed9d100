"""The browser client: static files (HTML, CSS, JavaScript modules, no build step) served by the
game server at ``/``, and ``GET /api/v1/game`` with the rules as data (:mod:`.routes`).

The files are served under ``/static/<version>/``, where the version is a hash of them all:
a browser may keep them for a year (``immutable``), and a changed file comes under a new
address at once. Relative module imports stay under the same prefix by themselves; the page
itself (``/``, also ``HEAD``) is never cached. The page and the static files are sent
gzip-compressed to a browser that accepts it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import Response

STATIC_DIR = Path(__file__).parent / "static"
"""Where the page, its styles and its modules live (shipped as package data)."""
CACHE_FOREVER = "public, max-age=31536000, immutable"


def asset_version(directory: Path = STATIC_DIR) -> str:
    """A hash of every file under ``directory`` (names and bytes): the assets' URL prefix."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


class VersionedFiles(StaticFiles):
    """Static files under a versioned prefix: cached for good by browsers and proxies."""

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result,
                      scope: Any, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = CACHE_FOREVER
        return response


def mount_web(app: FastAPI, *, api_prefix: str = "/api/v1") -> str:
    """Serve the page at ``/``, its files under ``/static/<version>`` and the game data
    router; returns the asset prefix."""
    from fastapi import Depends

    from starfever.server.api.query_checks import known_query_only
    from starfever.web.routes import router

    prefix = f"/static/{asset_version()}"
    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8").replace('"/static/',
                                                                           f'"{prefix}/')
    zipped = gzip.compress(page.encode("utf-8"), mtime=0)  # the page is fixed: zipped once
    # the game data is part of the API: an unknown query parameter is 422 there too
    app.include_router(router, prefix=api_prefix, dependencies=[Depends(known_query_only)])
    app.mount(prefix, GZipMiddleware(VersionedFiles(directory=STATIC_DIR), minimum_size=512),
              name="web-static")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def index(request: Request) -> HTMLResponse:
        headers = {"Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
        if "gzip" in request.headers.get("accept-encoding", "").lower():
            return HTMLResponse(zipped, headers={**headers, "Content-Encoding": "gzip"})
        return HTMLResponse(page, headers=headers)

    return prefix
