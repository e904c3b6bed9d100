"""CPU of the settler's group commit, per batch and per spin, by batch size: where a spin's
server CPU goes once it is drawn (ADR 0027). Not a test: prints one table.

In this process, on a fresh database of a real server (the tests' harness, tests/harness.py;
PostgreSQL through ``STARFEVER_TEST_PG``, default 127.0.0.1:5432, or SQLite), 16 funded
players; batches of ledger-mode spins drawn beforehand are settled with
``settle.settle_batch`` one after the other, and for each batch size it prints the median
CPU of the settling thread per batch and per spin, the median wall time, the CPU PostgreSQL's
processes spent per batch, and the settling thread's CPU split into its three parts: reading
the books, the pure settlement (``rule.settle``), and writing and committing.

Under load, batches are small when spins arrive paced (a few per batch at 500 spins/s on two
workers) and grow with the load, so the first rows are what a paced spin costs and the last
ones what a spin costs back to back.

    python benchmarks/settle.py [--db postgresql|sqlite] [--batches N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # ``python benchmarks/settle.py`` puts only benchmarks/ there
    sys.path.insert(0, str(REPO_ROOT))

from load import CpuMeter  # noqa: E402  (benchmarks/load.py)

from starfever.engine.model import load_model  # noqa: E402
from starfever.engine.rng import SeededSource  # noqa: E402
from starfever.engine.round import play_round  # noqa: E402
from starfever.server.db import Database  # noqa: E402
from starfever.server.services import auth  # noqa: E402
from starfever.server.spin import draw as rounds  # noqa: E402
from starfever.server.spin import rule, sql  # noqa: E402
from starfever.server.spin import settler as settle  # noqa: E402
from tests.harness import running_server, settings_like_servers  # noqa: E402

SIZES = (1, 2, 4, 8, 16, 32, 64)
PARTS = ("read", "settle", "write")


def _timing_parts(spent: dict[str, float]) -> None:
    """Wrap the settler's three parts so that each adds its thread CPU to ``spent``."""
    def timed(name: str, part: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            started = time.thread_time()
            try:
                return part(*args)
            finally:
                spent[name] += time.thread_time() - started
        return run

    sql.read_books = timed("read", sql.read_books)
    rule.settle = timed("settle", rule.settle)
    sql.write = timed("write", sql.write)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("postgresql", "sqlite"), default="postgresql")
    parser.add_argument("--batches", type=int, default=200,
                        help="batches per size, at most (fewer of the larger sizes)")
    args = parser.parse_args()
    model = load_model("default")
    source = SeededSource(1)
    with tempfile.TemporaryDirectory() as folder, running_server(
            Path(folder), args.db, {"STARFEVER_WEEKLY_DEPOSIT_LIMIT": str(10**9)}) as server:
        settings = settings_like_servers(server.database_url)
        db = Database(server.database_url)
        players = [auth.authenticate(db, settings, server.player(deposit=10**8)[1])
                   for _ in range(16)]

        def jobs(n: int) -> list[settle.Job]:
            return [settle.Job(settings=settings, model=model, principal=players[i % 16],
                               bet=1, key=uuid.uuid4().hex,
                               fingerprint=rounds.request_hash(1, None),
                               drawn=play_round(model, 1, source, pool=model.seed_cents),
                               test=False) for i in range(n)]

        for _ in range(50):  # warm: connections, prepared statements, caches
            settle.settle_batch(db, jobs(4))
        spent = dict.fromkeys(PARTS, 0.0)
        _timing_parts(spent)
        print(f"{args.db}, load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
              f"(median per batch; the parts are means)")
        print(f"{'batch':>5} {'CPU ms/batch':>13} {'CPU us/spin':>12} {'wall ms':>8} "
              f"{'PostgreSQL ms':>14}   " + "  ".join(f"{p + ' ms':>9}" for p in PARTS))
        for size in SIZES:
            count = max(20, min(args.batches, 4000 // size))
            batches = [jobs(size) for _ in range(count)]
            cpu, wall = [], []
            spent.update(dict.fromkeys(PARTS, 0.0))
            meter = CpuMeter()  # PostgreSQL's CPU, ended backends included
            meter.start()
            for batch in batches:
                started, clock = time.thread_time(), time.perf_counter()
                settle.settle_batch(db, batch)
                cpu.append(time.thread_time() - started)
                wall.append(time.perf_counter() - clock)
            postgres = meter.stop()["postgres_cpu_s"] / count if args.db == "postgresql" \
                else float("nan")
            median = statistics.median(cpu)
            print(f"{size:>5} {median * 1e3:>13.2f} {median / size * 1e6:>12.0f} "
                  f"{statistics.median(wall) * 1e3:>8.2f} {postgres * 1e3:>14.2f}   "
                  + "  ".join(f"{spent[p] / count * 1e3:>9.2f}" for p in PARTS))
        db.dispose()


if __name__ == "__main__":
    main()
