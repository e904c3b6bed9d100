"""The back office's API (placeholder, filled in below)."""

from __future__ import annotations

from fastapi import APIRouter

from starfever.server.api.retry import RetryOnDisconnect

router = APIRouter(prefix="/backoffice", tags=["back office"], route_class=RetryOnDisconnect)
