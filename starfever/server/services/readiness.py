"""Readiness: the database must take a committed write. ``/health`` only proves that the
server runs and its database answers a read, which stays true on a full disk or a read-only
database, where every bet would fail."""

from __future__ import annotations

import os
import socket

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from starfever.server.db import Database
from starfever.server.models import WriteProbe
from starfever.server.services.errors import Unavailable, utcnow


def probe_id() -> str:
    """This process's row: ``host:pid`` (so concurrent probes of many workers do not queue on
    one row)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}"


def prove_write(db: Database) -> None:
    """Write and commit this process's probe row; raises the database's error if it cannot."""
    now = utcnow()
    with db.write() as session:
        row = session.get(WriteProbe, probe_id())
        if row is None:
            session.add(WriteProbe(id=probe_id(), checked_at=now))
        else:
            row.checked_at = now


def ready(db: Database) -> None:
    """:func:`prove_write`, or ``503 not_ready`` with the database's reason (one line)."""
    try:
        prove_write(db)
    except SQLAlchemyError as error:
        if isinstance(error, DBAPIError) and error.connection_invalidated:
            raise  # a dropped connection: the route tries once more (api.retry)
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()
        raise Unavailable("the database takes no writes: " + (reason[0] if reason else
                                                             type(error).__name__)) from None
