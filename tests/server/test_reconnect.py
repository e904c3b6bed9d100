"""Non-spin routes survive PostgreSQL dropping every connection (issue 13): the request runs
once more on a fresh connection instead of answering 500 (spins already retry in the
settler: test_settle.py)."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.harness import Databases, start_server, terminate_backends
from tests.server.conftest import skip_unless_available

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

KILLS = 10
GAP_S = 1.0
"""Between two kills: one retry outlives one drop, not a second drop while it runs (on a
loaded two-core machine a request can take a few hundred milliseconds)."""


def test_non_spin_routes_retry_once_when_the_database_drops_its_connections(
        databases: Databases, tmp_path: Path) -> None:
    skip_unless_available(databases, "postgresql")
    server = start_server(databases, "postgresql", tmp_path)
    try:
        name, token = server.player(deposit=1_000)
        player = {"Authorization": f"Bearer {token}"}
        operator = {"Authorization": f"Bearer {server.operator_token}"}
        calls = [("GET", "/wallet", player, None), ("GET", "/limits", player, None),
                 ("PUT", "/limits", player, {"weekly_deposit_limit": 30_000}),
                 ("GET", "/rounds", player, None), ("GET", "/wallet/entries", player, None),
                 ("GET", "/reality-check", player, None), ("GET", "/jackpot", {}, None),
                 ("GET", "/operator/players", operator, None), ("GET", "/ready", {}, None)]
        codes: Counter[int] = Counter()
        failures: list[str] = []
        stop = threading.Event()

        def client() -> None:
            with httpx.Client(base_url=server.base, timeout=30) as http:
                while not stop.is_set():
                    for method, path, headers, body in calls:
                        response = http.request(method, path, headers=headers, json=body)
                        codes[response.status_code] += 1
                        if response.status_code >= 500:
                            failures.append(f"{method} {path}: {response.text}")

        threads = [threading.Thread(target=client) for _ in range(4)]
        for thread in threads:
            thread.start()
        try:
            dropped = terminate_backends(server.database_url, KILLS, GAP_S)
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        print(f"{dropped} connections dropped in {KILLS} kills; answers {dict(codes)}")
        assert dropped >= KILLS // 2
        assert failures == []
        assert set(codes) == {200}
        assert server.deposit(name, 100).status_code == 201  # and money still moves
    finally:
        server.stop()


def test_a_drop_during_commit_is_retried_only_for_idempotent_methods() -> None:
    from fastapi import APIRouter, FastAPI
    from fastapi.testclient import TestClient

    from starfever.server.api import errors
    from starfever.server.api.retry import RetryOnDisconnect
    from starfever.server.db import CommitUnknown

    runs: Counter[str] = Counter()
    app = FastAPI()
    errors.install(app)
    router = APIRouter(route_class=RetryOnDisconnect)

    def flaky(method: str) -> dict[str, str]:
        runs[method] += 1
        if runs[method] == 1:  # the first run loses its connection during COMMIT
            raise CommitUnknown("lost during COMMIT")
        return {"ok": method}

    router.add_api_route("/thing", lambda: flaky("PUT"), methods=["PUT"])
    router.add_api_route("/thing", lambda: flaky("POST"), methods=["POST"])
    app.include_router(router)
    with TestClient(app) as client:
        assert client.put("/thing").json() == {"ok": "PUT"}  # the same state twice: retried
        posted = client.post("/thing")
    assert posted.status_code == 503 and posted.json()["error"]["code"] == "commit_unknown"
    assert "may or may not" in posted.json()["error"]["message"]
    assert runs == {"PUT": 2, "POST": 1}  # a POST is never run twice (a deposit, twice)
