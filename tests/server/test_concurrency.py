"""Concurrent spins of one player never overdraw; concurrent €€€ winners share correctly."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

from starfever.engine import replay_round
from tests.harness import Server
from tests.server.helpers import jackpot_draws, model


def test_concurrent_spins_of_one_player_never_overdraw(server: Server) -> None:
    _, token = server.player(deposit=1_000)  # 50 spins at 20 cents, if nothing is won
    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(lambda _: server.spin(token, line_bet=1), range(80)))
    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {201, 409}, statuses
    played = [r.json()["round"] for r in responses if r.status_code == 201]
    refused = [r.json()["error"]["code"] for r in responses if r.status_code == 409]
    assert set(refused) <= {"insufficient_funds"}
    balance = server.balance(token)
    assert balance >= 0
    assert balance == 1_000 - sum(r["total_bet"] - r["total_win"] for r in played)
    chain = sorted(played, key=lambda r: r["id"])
    for earlier, later in pairwise(chain):
        assert later["balance_before"] == earlier["balance_after"]


def test_two_simultaneous_jackpot_winners_share_the_pool(server: Server) -> None:
    players = [server.player(deposit=10_000)[1] for _ in range(2)]
    draws = list(jackpot_draws())
    with ThreadPoolExecutor(max_workers=2) as pool:
        responses = list(pool.map(lambda t: server.spin(t, line_bet=50, draws=draws), players))
    assert [r.status_code for r in responses] == [201, 201]
    first, second = sorted((r.json()["round"] for r in responses), key=lambda r: r["id"])
    assert second["pool_before"] == first["pool_after"] + second["contribution"]
    for played in (first, second):
        expected = replay_round(model(), 50, draws, pool=played["pool_before"])
        assert played["progressive_win"] == expected.progressive_win
        assert played["progressive_win"] == played["pool_before"] // 2
        assert played["pool_after"] == expected.pool_after
    assert server.call("GET", "/jackpot").json()["pool"] == second["pool_after"]
