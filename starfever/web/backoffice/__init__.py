"""The back office (placeholder)."""

from __future__ import annotations

from fastapi import FastAPI


def mount_backoffice(app: FastAPI) -> None:
    """Serve the back office at ``/operator``."""
