"""Readiness: the database must take a committed write (the operator's wallet is not asked:
it is every node's, probed apart, ``wallet_probe``; ADR 0057). ``/health`` only proves that the
server runs and its database answers a read, which stays true on a full disk or a read-only
database, where every bet would fail."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from starfever.server.db import Database
from starfever.server.models import WriteProbe
from starfever.server.services.errors import Unavailable, utcnow

if TYPE_CHECKING:
    from starfever.server.spin.seamless_wallet import SeamlessWallet


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


PROBE_PLAYER = "starfever-readiness-probe"
"""The player id of the wallet probe's ``balance`` call (the operator need not know it:
any signed answer, a refusal included, shows that its wallet answers)."""


def wallet_answers(operator: SeamlessWallet) -> None:
    """Operator mode: the operator's wallet answers a signed ``balance`` call in time, with
    a reply that is correctly signed (a ``4xx`` such as an unknown player counts: it answered);
    ``Unavailable`` otherwise, also when it refuses our signature (a wrong shared secret);
    the background probe (``wallet_probe``) calls it. The call names a currency the server
    serves (its first: ``probe_currency``), never one it does not."""
    from starfever.seamless import protocol
    from starfever.seamless.client import WalletRefused, WalletUnavailable

    try:
        operator.client.call(protocol.BALANCE, {"player_id": PROBE_PLAYER,
                                                "session_id": "readiness",
                                                "operator_session": "readiness",
                                                "currency": operator.probe_currency})
    except WalletRefused as refused:
        if refused.code == protocol.BAD_SIGNATURE:
            raise Unavailable("the operator's wallet refuses our signature (check "
                              "STARFEVER_OPERATOR_SECRET)") from None
    except WalletUnavailable as error:
        raise Unavailable(f"the operator's wallet does not answer: {error}") from None
