"""Operator views and the cashier."""

from __future__ import annotations

import uuid

from starfever.server.services.rtp_meters import RtpRow
from tests.harness import Server
from tests.server.helpers import books


def test_pool_meters_add_up(server: Server) -> None:
    _, token = server.player(deposit=2_000)
    for _ in range(5):
        server.spin(token, line_bet=2)
    meters = server.call("GET", "/operator/jackpot", server.operator_token).json()
    assert meters["pool"] == meters["contributions"] - meters["wins"] + meters["refills"]
    assert meters["pool"] == server.call("GET", "/jackpot").json()["pool"]
    assert meters["contributions"] > 0


def test_rtp_view_per_model_and_bet_class(server: Server) -> None:
    _, token = server.player(deposit=10_000)
    for line_bet in (1, 1, 2, 5):
        server.spin(token, line_bet=line_bet)
    view = server.call("GET", "/operator/rtp", server.operator_token)
    assert view.status_code == 200, view.text
    body = view.json()
    (model,) = [r for r in body["by_model"] if r["model_name"] == "default"]
    assert abs(model["theoretical_rtp"] - 0.955) < 0.0002
    assert model["rounds"] == sum(r["rounds"] for r in body["by_bet_class"])
    low, high = model["interval_99"]
    assert low <= model["actual_game_rtp"] <= high
    assert {r["line_bet"] for r in body["by_bet_class"]} >= {1, 2, 5}


def test_the_rtp_interval_never_reaches_below_zero() -> None:
    """Three rounds of 20 cents, one winning 600: the normal approximation's lower end would
    be -15.8 (an RTP below 0, which no set of wins can give); it is cut at 0, the upper end
    kept."""
    wins, bets = [0, 0, 600], [20, 20, 20]
    row = RtpRow("default", "2.0", 1, rounds=3, total_bet=60, total_win=600,
                 sum_game_sq=float(sum(w * w for w in wins)),
                 sum_game_bet=float(sum(w * b for w, b in zip(wins, bets, strict=True))),
                 sum_bet_sq=float(sum(b * b for b in bets)))
    assert row.actual_game_rtp == 10.0
    interval = row.interval_99
    assert interval is not None
    low, high = interval
    assert low == 0.0 and abs(high - (10.0 + 2.5758293035489 * 10.0)) < 1e-6
    assert row.half_width_99 is not None and abs(row.half_width_99 - 25.758293035489) < 1e-6


def test_player_list_and_withdrawal(server: Server) -> None:
    name, token = server.player(deposit=3_000)
    paid = server.call("POST", f"/players/{name}/withdrawals", server.operator_token,
                       json={"amount": 1_000},
                       headers={"Idempotency-Key": uuid.uuid4().hex})
    assert paid.status_code == 201 and paid.json()["balance"] == 2_000
    listed = server.call("GET", "/operator/players", server.operator_token,
                         params={"limit": 1000}).json()["players"]
    assert {"username": name, "balance": 2_000} in [
        {"username": p["username"], "balance": p["balance"]} for p in listed]
    entries = server.call("GET", "/wallet/entries", token).json()["entries"]
    assert [(e["kind"], e["amount"]) for e in entries] == [("withdrawal", -1_000),
                                                          ("deposit", 3_000)]
    sums = books(server.engine())
    assert sums["wallets_stored"] == sums["wallet"]
