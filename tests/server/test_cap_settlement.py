"""A max-win cap that holds the whole round (RULES.md "Maximum win") through a real server on
real SQLite: a €€€ share is paid only up to what the cap leaves above the round's game win, and
the rest stays in the shared pool, in the round the player is answered, the stored round, the
wallet and the pool's meters. Settlement is ``engine.round.at_pool`` (ADR 0009): the server's
part of the rule is that it re-derives every €€€ round at the pool it settles against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from starfever.engine.model import MAX_WIN_ROUND, MathModel, load_model, model_from_dict
from starfever.engine.round import replay_round
from starfever.engine.symbols import JACKPOT
from tests.harness import Server, expect, running_server

CAP_X = 1800


def _model_file(folder: Path) -> tuple[Path, MathModel]:
    data: dict[str, Any] = load_model("capped").to_dict()
    data.update(name="capped-whole-round", max_win_x=CAP_X, max_win_scope=MAX_WIN_ROUND)
    path = folder / "capped-whole-round.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, model_from_dict(data)


def _jackpot_draws(model: MathModel) -> list[int]:
    """Stops with JACKPOT on the top row of reels 0-2 and no feature."""
    stops = [strip.index(JACKPOT) for strip in model.base_reels[:3]]
    for s3 in range(len(model.base_reels[3])):
        for s4 in range(len(model.base_reels[4])):
            result = replay_round(model, 100, (*stops, s3, s4))
            if result.feature is None and result.jackpot_hits:
                return [*stops, s3, s4]
    raise AssertionError("no EUR draws without a feature")


def _pool(server: Server) -> dict[str, int]:
    with server.engine().connect() as conn:
        row = conn.execute(text("SELECT amount, wins, refills, hits FROM jackpot_pool")).one()
    return dict(row._mapping)


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("cap")
    path, model = _model_file(folder)
    with running_server(folder, "sqlite", {"STARFEVER_MODEL": str(path)}) as server:
        yield server, model


def test_a_share_beyond_the_cap_stays_in_the_pool(capped: tuple[Server, MathModel]) -> None:
    server, model = capped
    draws = _jackpot_draws(model)
    _, token = server.player(deposit=10_000)
    expect(server.spin(token, line_bet=100), 201)  # creates the pool row
    big = 5_000_000  # EUR 50,000: at EUR 1.00 a line the share is the whole pool
    with server.engine().begin() as conn:
        conn.execute(text("UPDATE jackpot_pool SET amount = :a"), {"a": big})
    before, balance = _pool(server), server.balance(token)
    played = expect(server.spin(token, line_bet=100, draws=draws), 201).json()["round"]
    cap = CAP_X * 2_000
    contribution = played["contribution"]
    assert played["pool_before"] == big + contribution
    assert played["total_win"] == cap  # the round stops at the cap, the share included
    assert played["progressive_win"] == cap - played["base_win"]
    assert played["pool_after"] == played["pool_before"] - played["progressive_win"]
    assert played["pool_refill"] == 0
    events = played["events"]
    jackpot = next(e for e in events if e["type"] == "jackpot")
    assert jackpot["win"] == played["progressive_win"]
    assert jackpot["withheld"] == played["pool_before"] - played["progressive_win"]
    assert [e["type"] for e in events][-2:] == ["max_win", "round_end"]
    assert server.balance(token) == balance - 2_000 + cap
    after = _pool(server)
    assert after["amount"] == played["pool_after"] > model.seed_cents
    assert after["wins"] - before["wins"] == played["progressive_win"]
    assert after["refills"] == before["refills"] and after["hits"] == before["hits"] + 1
    public = expect(server.call("GET", "/jackpot"), 200).json()
    assert public["pool"] == played["pool_after"]
    # the stored round is what the player was answered, and replays to it
    stored = expect(server.call("GET", f"/rounds/{played['id']}", token), 200).json()
    assert stored["progressive_win"] == played["progressive_win"]
    again = replay_round(model, 100, draws, pool=played["pool_before"])
    assert again.total_win == cap and again.events == tuple(events)


def test_a_share_within_the_cap_is_paid_whole(capped: tuple[Server, MathModel]) -> None:
    server, model = capped
    draws = _jackpot_draws(model)
    _, token = server.player(deposit=10_000)
    with server.engine().begin() as conn:
        conn.execute(text("UPDATE jackpot_pool SET amount = :a"), {"a": 200_000})
    played = expect(server.spin(token, line_bet=5, draws=draws), 201).json()["round"]
    assert played["progressive_win"] == played["pool_before"] * 5 // 100
    assert not any(e["type"] == "max_win" for e in played["events"])
    assert "withheld" not in next(e for e in played["events"] if e["type"] == "jackpot")
