"""One retry for a request whose database connection dropped (issue 14 of the hostile test:
10 answers of 500 while PostgreSQL's backends were terminated; spins already retried, in the
settler).

A statement that fails because the connection died rolls its transaction back, and
SQLAlchemy then drops the pool's connections (``connection_invalidated``), so running the
route once more, on a fresh connection, is safe: nothing of the first try was written. A drop
during COMMIT is not retried: then nobody knows whether the transaction committed
(:class:`starfever.server.db.CommitUnknown`), and a deposit must not be booked twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from sqlalchemy.exc import DBAPIError

log = logging.getLogger("starfever.server")


class RetryOnDisconnect(APIRoute):
    """An API route that runs its handler once more when the database connection dropped
    before the transaction's commit. The request body is read once and kept by Starlette, so
    the second run sees the same request."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def retrying(request: Request) -> Response:
            try:
                return await handler(request)
            except DBAPIError as error:
                if not error.connection_invalidated:
                    raise
                log.warning("database connection lost during %s %s; retrying once",
                            request.method, request.url.path)
                return await handler(request)

        return retrying
