"""Refusals a service can give: each carries an HTTP status and a machine-readable code, and the
API turns it into ``{"error": {"code": ..., "message": ...}}``."""

from __future__ import annotations

from datetime import datetime

from starfever.server import clock


def utcnow() -> datetime:
    """Now, in UTC: the one clock of the server (``starfever.server.clock``, which tests
    move)."""
    return clock.now()


class ServiceError(Exception):
    """A request the server refuses; nothing was changed."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class BadRequest(ServiceError):
    """The request is malformed."""


class Unauthorized(ServiceError):
    """No valid credentials."""

    status = 401
    code = "unauthorized"


class Forbidden(ServiceError):
    """Valid credentials, but not allowed (role, self-exclusion, limits)."""

    status = 403
    code = "forbidden"


class NotFound(ServiceError):
    """No such thing (or not yours)."""

    status = 404
    code = "not_found"


class Conflict(ServiceError):
    """The request conflicts with the current state."""

    status = 409
    code = "conflict"


class Unprocessable(ServiceError):
    """Well-formed, but the values are not acceptable."""

    status = 422
    code = "invalid_request"


class TooManyRequests(ServiceError):
    """Too many attempts; try again after :attr:`retry_after` seconds."""

    status = 429
    code = "too_many_attempts"

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


class Unavailable(ServiceError):
    """The server cannot serve this now (its database takes no writes)."""

    status = 503
    code = "not_ready"

    def __init__(self, message: str, *, code: str | None = None,
                 retry_after: int | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after
