"""Crashes: SIGKILL the whole server (both uvicorn workers) again and again while clients spin
with retries, restart it on the same database, and prove that nothing was half-settled, no money
appeared or vanished, every 2xx is in the player's history and every key settled exactly once.

A client that loses its connection (or gets a 5xx) retries the same ``Idempotency-Key`` until it
gets a 2xx: the retry either settles the round for the first time (201) or finds the round the
killed server had already committed (200, ``replayed``). Longer run:
``STARFEVER_CRASH_KILLS=50 pytest tests/assurance/test_crash.py``.
"""

from __future__ import annotations

import os
import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from tests.harness import DatabaseKind, Databases, Server, run_cli, start_server

KILLS = int(os.environ.get("STARFEVER_CRASH_KILLS", "4"))
CLIENTS = 6
DEPOSIT = 40_000  # the default weekly limit; 2,000 spins at 20 cents


@dataclass
class ClientLog:
    """What one client saw."""

    settled: dict[str, int] = field(default_factory=dict)
    """key -> round id of every spin that got a 2xx."""
    retried: set[str] = field(default_factory=set)
    """keys that needed more than one attempt."""
    replayed: set[str] = field(default_factory=set)
    """keys whose 2xx was a replay (the killed server had committed the round)."""
    refused: Counter[str] = field(default_factory=Counter)


def client(server: Server, token: str, stop: threading.Event, log: ClientLog) -> None:
    """Spin until told to stop; each key is retried until it gets a 2xx."""
    http = httpx.Client(timeout=10)
    while not stop.is_set():
        key = uuid.uuid4().hex
        attempts = 0
        while True:
            attempts += 1
            try:
                response = http.post(f"{server.base}/spins", json={"line_bet": 1},
                                     headers={"Authorization": f"Bearer {token}",
                                              "Idempotency-Key": key})
            except httpx.TransportError:
                time.sleep(0.05)
                continue
            if response.status_code >= 500:
                time.sleep(0.05)
                continue
            break
        assert response.status_code in (200, 201), response.text
        body = response.json()
        log.settled[key] = int(body["round"]["id"])
        if attempts > 1:
            log.retried.add(key)
        if body["replayed"]:
            log.replayed.add(key)
    http.close()


@pytest.mark.slow
def test_sigkill_while_spinning_loses_and_duplicates_nothing(
        db_kind: DatabaseKind, databases: Databases, tmp_path: Path) -> None:
    # two workers in their own process group, so that one SIGKILL takes the supervisor and
    # every worker down at once, as a machine crash or OOM kill would; a restarted server
    # keeps its port, so the clients' retries reach it
    server = start_server(databases, db_kind, tmp_path, workers=2, own_process_group=True,
                          start_timeout=90.0)
    url = server.database_url
    players = [server.player(deposit=DEPOSIT) for _ in range(CLIENTS)]
    logs = [ClientLog() for _ in players]
    stop = threading.Event()
    threads = [threading.Thread(target=client, args=(server, token, stop, log))
               for (_, token), log in zip(players, logs, strict=True)]
    for thread in threads:
        thread.start()
    rng = random.Random()
    for _ in range(KILLS):
        time.sleep(rng.uniform(0.3, 0.9))
        server.kill()
        time.sleep(rng.uniform(0.0, 0.3))
        server.start()  # same port: the clients' retries reach the new server
    time.sleep(0.5)
    stop.set()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive()

    # every 2xx is in the player's history, with the round id it was answered with
    for (_, token), log in zip(players, logs, strict=True):
        history: set[int] = set()
        before: int | None = None
        while True:
            page = server.call("GET", "/rounds", token,
                               params={"limit": 100, **({"before": before} if before else {})})
            assert page.status_code == 200, page.text
            history |= {int(r["id"]) for r in page.json()["rounds"]}
            before = page.json()["next_before"]
            if before is None:
                break
        assert set(log.settled.values()) <= history
        assert len(history) == len(log.settled), "a round no client was answered for"
    server.stop()

    # every key settled exactly once; no half-settled round; money conserved; audit passes
    engine = server.engine()
    with engine.connect() as conn:
        per_key = Counter(k for (k,) in conn.execute(text("SELECT idempotency_key FROM rounds")))
        unbooked = conn.execute(text(
            "SELECT COUNT(*) FROM rounds r WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e "
            "WHERE e.round_id = r.id AND e.kind = 'bet' AND e.book = 'wallet')")).scalar_one()
        wallets = conn.execute(text("SELECT SUM(balance) FROM wallets")).scalar_one()
        pool = conn.execute(text("SELECT amount FROM jackpot_pool")).scalar_one()
        house = conn.execute(text(
            "SELECT SUM(amount) FROM ledger_entries WHERE book = 'house'")).scalar_one()
    engine.dispose()
    all_keys = [k for log in logs for k in log.settled]
    retried = [k for log in logs for k in log.retried]
    assert all(per_key[k] == 1 for k in all_keys)
    assert sum(per_key.values()) == len(all_keys)
    assert unbooked == 0
    assert wallets + pool + house == CLIENTS * DEPOSIT
    audit = run_cli("audit", "--database-url", url)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    replayed = sum(len(log.replayed) for log in logs)
    print(f"\n[crash {db_kind}] kills={KILLS} rounds={len(all_keys)} retried_keys={len(retried)} "
          f"answered_by_replay={replayed} {audit.stdout.strip()}")
    assert KILLS == 0 or retried, "no request was ever cut off: the kills hit nothing"

