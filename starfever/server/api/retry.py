"""One retry for a request whose database connection dropped (issue 14 of the hostile test:
10 answers of 500 while PostgreSQL's backends were terminated; spins already retried, in the
settler).

A statement that fails because the connection died rolls its transaction back, and
SQLAlchemy then drops the pool's connections (``connection_invalidated``), so running the
route once more, on a fresh connection, is safe: nothing of the first try was written. A drop
during COMMIT leaves it unknown whether the transaction committed
(:class:`starfever.server.db.CommitUnknown`): only an idempotent method is run again then (a
deposit must not be booked twice); a POST answers ``503 commit_unknown``, which says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from sqlalchemy.exc import DBAPIError

from starfever.server.db import CommitUnknown

log = logging.getLogger("starfever.server")
IDEMPOTENT = frozenset(("GET", "HEAD", "PUT", "DELETE"))


class RetryOnDisconnect(APIRoute):
    """An API route that runs its handler once more when the database connection dropped
    before the transaction's commit, and, for the HTTP-idempotent methods (GET, PUT, DELETE:
    running them twice ends in the same state), also when it dropped during the COMMIT. The
    request body is read once and kept by Starlette, so the second run sees the same
    request."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def retrying(request: Request) -> Response:
            try:
                return await handler(request)
            except CommitUnknown:
                if request.method not in IDEMPOTENT:
                    raise  # answered 503 commit_unknown: a second run could book twice
            except DBAPIError as error:
                if not error.connection_invalidated:
                    raise
            log.warning("database connection lost during %s %s; retrying once",
                        request.method, request.url.path)
            return await handler(request)

        return retrying
