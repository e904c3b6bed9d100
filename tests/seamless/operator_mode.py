"""Operator mode's shared helpers for its test modules (test_operator_mode*.py): a launched
player, the server's wallet calls and rounds, the reference wallet's applied transactions.
The module-scoped ``wallet``, ``databases`` and ``server`` and the per-test ``kind`` are in
this folder's conftest.py. The tests are four modules so that pytest-xdist's ``--dist
loadfile`` can give them to different workers (ADR 0045)."""

from __future__ import annotations

import contextlib
import time
import uuid

import httpx
from sqlalchemy import func, select, text

from starfever.engine.model import MathModel, load_model
from starfever.server.db import Database
from starfever.server.models import Account, SessionToken
from starfever.server.seamless_config import OperatorConfig
from starfever.server.services import round_details
from starfever.server.services.auth import Principal
from starfever.server.settings import Settings
from starfever.server.spin.seamless_wallet import SeamlessWallet
from tests.harness import (
    OperatorWallet,
    Server,
    expect,
    launched_player,
    settings_like_servers,
)

TIMEOUT_S = 1.0
"""The server's STARFEVER_WALLET_TIMEOUT here: a delay beyond it is a lost reply."""
BET = 20  # line bet 1 x 20 lines


def new_player(server: Server, wallet: OperatorWallet, balance: int = 10_000, *,
            blocked: bool = False) -> tuple[str, str]:
    player_id = f"op-player-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, balance, blocked=blocked)
    return player_id, launched_player(server, wallet.secret, player_id)


def rounds_of(server: Server, token: str) -> list[dict[str, object]]:
    return list(expect(server.call("GET", "/rounds", token, params={"limit": 100}), 200)
                .json()["rounds"])


def calls(server: Server, where: str = "1 = 1") -> list[dict[str, object]]:
    with server.engine().connect() as conn:
        return [dict(row._mapping) for row in conn.execute(text(
            f"SELECT * FROM wallet_calls WHERE {where} ORDER BY id"))]


def wait_for(condition: object, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.1)
    raise AssertionError("the condition did not come true in time")


def settled(server: Server, player_id: str) -> bool:
    """Every call of the player's spins has its final status in Star Fever's books."""
    with server.engine().connect() as conn:
        return not conn.execute(text(
            "SELECT 1 FROM wallet_calls JOIN accounts ON accounts.id = wallet_calls.account_id "
            "WHERE accounts.external_id = :p AND wallet_calls.status = 'pending'"),
            {"p": player_id}).first()


def applied(wallet: OperatorWallet, player_id: str, method: str) -> list[dict[str, object]]:
    return [t for t in wallet.transactions(player_id) if t["method"] == method and t["applied"]]


def spin_ignoring_transport_errors(server: Server, token: str, key: str) -> None:
    with contextlib.suppress(httpx.TransportError):  # the server was killed under it
        server.spin(token, key=key)


def all_rounds(server: Server, token: str) -> list[dict[str, object]]:
    """Every round of the player (``GET /rounds`` paged to the end)."""
    found: list[dict[str, object]] = []
    params: dict[str, int] = {"limit": 100}
    while True:
        page = expect(server.call("GET", "/rounds", token, params=params), 200).json()
        found += page["rounds"]
        if page.get("next_before") is None:
            return found
        params["before"] = int(page["next_before"])


def in_process_wallet(server: Server, wallet: OperatorWallet, db: Database, *,
                      timeout: float = TIMEOUT_S) -> tuple[SeamlessWallet, Settings, MathModel]:
    """Operator mode's wallet adapter in this test process on the server's database, as one
    more worker would run it (its own settler), with its own wallet ``timeout``."""
    settings = settings_like_servers(server.database_url)
    adapter = SeamlessWallet(db, OperatorConfig(url=wallet.url, secret=wallet.secret,
                                                timeout=timeout, public_url=server.url),
                             details_key=round_details.details_key(settings.secret_key))
    return adapter, settings, load_model(settings.model)


def principal_of(db: Database, external_id: str) -> Principal:
    """The operator's player ``external_id`` as its newest session's principal."""
    with db.read() as session:
        account = session.scalars(select(Account).where(
            Account.external_id == external_id)).one()
        session_id = session.scalar(select(func.max(SessionToken.id)).where(
            SessionToken.account_id == account.id))
        return Principal(account.id, account.username, "player", int(str(session_id)))
