"""Leases: a task that one server process of the installation runs at a time, whatever the
number of workers and nodes (the wallet's resender, ADR 0062).

A lease is a row of ``leases``: its name, its holder and when it expires. A process takes it
when it is free or expired, and renews it while it works; one that stops hands it over at
once (:meth:`Lease.release`), one that dies leaves it to expire after :attr:`Lease.ttl`. The
row is the same on SQLite and on PostgreSQL (an advisory lock would be PostgreSQL's alone, and
would hold a connection for good). Expiry is read on the server's clock
(``services.errors.utcnow``): the nodes' clocks must agree to well within the time to live,
as NTP keeps them (a holder renews when a third of it has passed).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from datetime import timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError

from starfever.server.db import Database
from starfever.server.models import Lease as LeaseRow
from starfever.server.services.errors import utcnow


def holder_id() -> str:
    """This process's name as a holder: ``host:pid:nonce`` (the nonce tells two processes
    apart that reused a pid, and two leases of one process in a test)."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Lease:
    """One named lease as one process sees it."""

    def __init__(self, db: Database, name: str, ttl: float, holder: str | None = None) -> None:
        self.db = db
        self.name = name
        self.ttl = ttl
        """Seconds a taking or a renewal holds it."""
        self.holder = holder or holder_id()
        self._renewed = float("-inf")
        """When (``time.monotonic``) this process last took or renewed it."""

    def hold(self) -> bool:
        """Whether this process holds the lease now: renewed when a third of its time to live
        has passed since the last renewal, taken when free or expired. A holder that renews
        before every task it starts, each shorter than two thirds of the time to live, never
        works beside another one."""
        if time.monotonic() - self._renewed < self.ttl / 3:
            return True
        now = utcnow()
        with self.db.read() as session:
            found = session.execute(select(LeaseRow.holder, LeaseRow.expires_at)
                                    .where(LeaseRow.name == self.name)).first()
        if found is not None and found.holder != self.holder and found.expires_at > now:
            self._renewed = float("-inf")
            return False  # another's, and alive: a read, no write
        started = time.monotonic()
        until = now + timedelta(seconds=self.ttl)
        try:
            with self.db.write() as session:
                if found is None:
                    session.add(LeaseRow(name=self.name, holder=self.holder, expires_at=until))
                    taken = True
                else:
                    taken = bool(session.execute(
                        update(LeaseRow).where(LeaseRow.name == self.name, or_(
                            LeaseRow.holder == self.holder, LeaseRow.expires_at <= now))
                        .values(holder=self.holder, expires_at=until)
                    ).rowcount)  # type: ignore[attr-defined]
        except IntegrityError:  # another process inserted it first
            taken = False
        self._renewed = started if taken else float("-inf")
        return taken

    def release(self) -> None:
        """Hand the lease over at once (a clean stop): another process takes it at its next
        try instead of after the time to live."""
        if self._renewed == float("-inf"):
            return
        self._renewed = float("-inf")
        with self.db.write() as session:
            session.execute(update(LeaseRow).where(LeaseRow.name == self.name,
                                                   LeaseRow.holder == self.holder)
                            .values(expires_at=utcnow()))


__all__ = ["Lease", "holder_id"]
