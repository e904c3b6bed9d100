"""Every error as ``{"error": {"code": ..., "message": ...}}``: service refusals, validation
errors, unknown paths and methods, oversized bodies and unexpected failures."""

from __future__ import annotations

import errno
import logging
import sqlite3
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from starfever.server.db import CommitUnknown, database_unavailable
from starfever.server.services.errors import ServiceError

log = logging.getLogger("starfever.server")

HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 413: "body_too_large", 415: "unsupported_media_type"}


def error_response(status: int, code: str, message: str, *, retry_after: int | None = None,
                   **extra: Any) -> JSONResponse:
    """The one error body (401 adds ``WWW-Authenticate``, 429 ``Retry-After``)."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return JSONResponse({"error": {"code": code, "message": message, **extra}},
                        status_code=status, headers=headers or None)


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc if part != "body") or "body"


def install(app: FastAPI) -> None:
    """Register the exception handlers."""

    @app.exception_handler(ServiceError)
    async def _service(_: Request, error: ServiceError) -> JSONResponse:
        return answer(error)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, error: HTTPException) -> JSONResponse:
        code = HTTP_CODES.get(error.status_code, "http_error")
        return error_response(error.status_code, code, str(error.detail))

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = error.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return error_response(400, "malformed_json", "the body is not valid JSON")
        fields = [{"field": _where(tuple(p.get("loc", ()))), "problem": str(p.get("msg"))}
                  for p in problems[:20]]
        message = "; ".join(f"{f['field']}: {f['problem']}" for f in fields[:3])
        return error_response(422, "validation_error", message, fields=fields)

    @app.exception_handler(CommitUnknown)
    async def _commit_unknown(_: Request, error: CommitUnknown) -> JSONResponse:
        return answer(error)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, error: Exception) -> JSONResponse:
        return answer(error)


DATABASE_UNAVAILABLE_RETRY_S = 1
"""The ``Retry-After`` of ``503 database_unavailable``: a failover takes seconds (ADR 0070)."""
_unavailable_logged = [0.0, 0]
"""When the last line about an unreachable database was logged, and how many answers were
given since: one line a second, not one per request, while a failover lasts."""
STORAGE_FULL_RETRY_S = 60
"""The ``Retry-After`` of ``503 storage_full``: space is freed by a person, not in a second."""
PG_DISK_FULL = "53100"
"""PostgreSQL's SQLSTATE ``disk_full`` (psycopg raises it as ``errors.DiskFull``)."""


def storage_full(error: BaseException) -> bool:
    """Whether ``error``, or an error it was raised from, says the disk is full: SQLite's
    ``SQLITE_FULL`` ("database or disk is full"), PostgreSQL's ``disk_full`` (SQLSTATE
    53100), or ``OSError`` ``ENOSPC``."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for candidate in (current, getattr(current, "orig", None)):  # SQLAlchemy wraps
            if isinstance(candidate, OSError) and candidate.errno == errno.ENOSPC:
                return True
            if isinstance(candidate, sqlite3.Error) and \
                    (getattr(candidate, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL:
                return True
            if getattr(candidate, "sqlstate", None) == PG_DISK_FULL or \
                    getattr(candidate, "pgcode", None) == PG_DISK_FULL:
                return True
        current = current.__cause__ or current.__context__
    return False


def answer(error: Exception) -> JSONResponse:
    """The answer to an exception raised while a request was served: a service's refusal, a
    full disk (503 ``storage_full``: the database refused the write, so nothing was saved,
    also when it refused the COMMIT), no database that takes writes within reach (503
    ``database_unavailable``: a failover, ADR 0070), a commit whose outcome is unknown (503),
    anything else 500 (logged with its traceback)."""
    if isinstance(error, ServiceError):
        return error_response(error.status, error.code, error.message,
                              retry_after=getattr(error, "retry_after", None))
    if storage_full(error):
        said = str(getattr(error, "orig", None) or error.__cause__ or error)
        log.error("storage full: a write was refused (%s)", said.splitlines()[0][:200])
        return error_response(503, "storage_full", "the server's storage is full: nothing was "
                              "saved; try again later", retry_after=STORAGE_FULL_RETRY_S)
    if isinstance(error, CommitUnknown):
        log.warning("connection lost during COMMIT: %s", error.__cause__)
        return error_response(503, "commit_unknown", "the database connection was lost while "
                              "saving: the change may or may not have been made; check, then "
                              "retry", retry_after=1)
    if database_unavailable(error):
        _log_unavailable(error)
        return error_response(503, "database_unavailable", "the database is not reachable "
                              "now (a failover may be under way): try again in a moment; a "
                              "request sent again with its Idempotency-Key is settled once",
                              retry_after=DATABASE_UNAVAILABLE_RETRY_S)
    log.exception("unexpected error", exc_info=error)
    return error_response(500, "internal_error", "the server failed; nothing was changed")


def _log_unavailable(error: BaseException) -> None:
    """One warning a second at most while the database cannot be reached, with the count of
    the requests answered ``503`` since the last."""
    _unavailable_logged[1] += 1
    now = time.monotonic()
    if now - _unavailable_logged[0] >= 1.0:
        said = str(getattr(error, "orig", None) or error.__cause__ or error).strip()
        log.warning("the database is not reachable (%d requests answered 503 "
                    "database_unavailable): %s", _unavailable_logged[1],
                    said.splitlines()[0][:200] if said else type(error).__name__)
        _unavailable_logged[:] = [now, 0]


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``max_bytes`` with 413 (declared length or
    counted while streaming)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.max_bytes
                except ValueError:
                    too_big = True
                if too_big:
                    await self._refuse(scope, receive, send)
                    return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, f"request bodies are limited to "
                                             f"{self.max_bytes} bytes")
            return message

        await self.app(scope, limited, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(413, "body_too_large",
                                  f"request bodies are limited to {self.max_bytes} bytes")
        await response(scope, receive, send)
