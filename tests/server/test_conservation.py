"""Money is conserved: over thousands of rounds, wallets + pool + house = deposits -
withdrawals, every wallet equals its ledger, and the pool equals its meters."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from starfever.server.db import Database
from starfever.server.services import auth
from starfever.server.services.errors import Conflict
from starfever.server.spin import draw as rounds
from starfever.server.spin.settler import settler
from tests.harness import ADULT_BIRTH_DATE, Server, settings_like_servers, unique_name
from tests.server.helpers import books, model

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

HTTP_SPINS = 400
SERVICE_SPINS = 1_600


def test_money_is_conserved(server: Server) -> None:
    players = [server.player(deposit=40_000) for _ in range(4)]

    def play(token: str) -> int:
        done = 0
        for _ in range(HTTP_SPINS // len(players)):
            response = server.spin(token, line_bet=2)
            assert response.status_code in (201, 409), response.text
            done += response.status_code == 201
        return done

    with ThreadPoolExecutor(max_workers=len(players)) as pool:
        http_played = sum(pool.map(play, [t for _, t in players]))

    # thousands more through the service layer, in this process, against the same database
    settings = settings_like_servers(server.database_url)
    db = Database(server.database_url)
    name = unique_name("svc")
    server.call("POST", "/players", json={"username": name, "password": "password-1",
                                          "birth_date": ADULT_BIRTH_DATE})
    server.deposit(name, 40_000)
    principal = auth.authenticate(db, settings, server.login(name, "password-1"))
    service_played = 0
    for i in range(SERVICE_SPINS):
        try:
            job = rounds.queued_spin(settings, model(), principal, 1, f"svc-{i}", None)
            settler(db).enqueue(job).result()
            service_played += 1
        except Conflict:
            break
    db.dispose()
    assert http_played + service_played >= 2_000

    sums = books(server.engine())
    deposits = -sums.get("cashier", 0)  # the cashier book is the outside world
    assert sums["wallets_stored"] + sums["pool_stored"] + sums["house"] == deposits
    assert sums["wallet"] == sums["wallets_stored"]
    assert sums["pool"] == sums["pool_stored"]
    meters = server.call("GET", "/operator/jackpot", server.operator_token).json()
    assert meters["pool"] == meters["contributions"] - meters["wins"] + meters["refills"]
    listed = server.call("GET", "/operator/players", server.operator_token,
                         params={"limit": 1000}).json()["players"]
    assert sum(p["balance"] for p in listed) == sums["wallets_stored"]
