"""How soon after an operator wallet's recovery every round in doubt is closed (issue 35: "a
wallet outage ... closes every round in doubt within 5 s of recovery"; ADR 0062). Not a test:
prints one line per outage.

A real ``starfever serve --wallet operator`` (the tests' harness, tests/harness.py; two
workers; PostgreSQL through ``STARFEVER_TEST_PG``, default 127.0.0.1:5432, or SQLite) at the
production defaults of the wallet's timeout (5 s) and retry interval (1 s), against the
reference wallet as a real process. Clients play for ``--outage`` seconds while the wallet
fails every credit and every rollback, and a debit every half second: ``error`` answers 500 at
once, ``hang`` holds each call past the timeout (applied on its side, the answer lost). The
rounds in doubt are the credits and rollbacks still pending in Star Fever's books. Then the
wallet recovers (its faults cleared) and the script reads the books every 50 ms until none
is pending: the figure is the seconds from the recovery to the last one closed.

    python benchmarks/recovery.py [--db postgresql|sqlite] [--outage 30] [--kind error|hang]
                                  [--timeout 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # ``python benchmarks/recovery.py`` puts only benchmarks/
    sys.path.insert(0, str(REPO_ROOT))

from sqlalchemy import text  # noqa: E402

from tests.harness import (  # noqa: E402
    Databases,
    OperatorWallet,
    Server,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    start_server,
)

TIMEOUT_S = 5.0
"""``STARFEVER_WALLET_TIMEOUT``'s default."""
RETRY_S = 1.0
"""``STARFEVER_WALLET_RETRY_SECONDS``'s default."""
CLIENTS = 4
PENDING = ("SELECT COUNT(*) FROM wallet_calls WHERE status = 'pending' "
           "AND kind IN ('credit', 'rollback')")


def _pending(server: Server) -> int:
    with server.engine().connect() as conn:
        return int(conn.execute(text(PENDING)).scalar_one())


def _play(server: Server, tokens: list[str], until: float) -> int:
    """Spins from ``CLIENTS`` threads until ``until`` (monotonic); how many were sent."""
    sent = [0] * CLIENTS

    def client(i: int) -> None:
        while time.monotonic() < until:
            server.spin(tokens[i % len(tokens)])
            sent[i] += 1

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(client, range(CLIENTS)))
    return sum(sent)


def outage(server: Server, wallet: OperatorWallet, tokens: list[str], seconds: float,
           kind: str, timeout: float) -> tuple[int, int, float]:
    """One outage of ``seconds``: (spins sent, rounds in doubt at recovery, seconds from the
    recovery to the last one closed)."""
    fault, held = ("error", 0.0) if kind == "error" else ("delay", 2 * timeout)
    for method in ("credit", "rollback"):
        wallet.fault(method, fault, times=100_000, seconds=held)
    stop_debits = threading.Event()

    def failing_debits() -> None:  # one debit in every few fails too
        while not stop_debits.wait(0.5):
            wallet.fault("debit", fault, seconds=held)

    injector = threading.Thread(target=failing_debits)
    injector.start()
    try:
        spins = _play(server, tokens, time.monotonic() + seconds)
    finally:
        stop_debits.set()
        injector.join()
    in_doubt = _pending(server)
    wallet.clear_faults()
    recovered = time.monotonic()
    while _pending(server):
        if time.monotonic() - recovered > 300:
            raise RuntimeError("rounds still in doubt 300 s after the recovery")
        time.sleep(0.05)
    return spins, in_doubt, time.monotonic() - recovered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("postgresql", "sqlite"), default="postgresql")
    parser.add_argument("--outage", type=float, default=30.0, help="seconds (default 30)")
    parser.add_argument("--kind", choices=("error", "hang", "both"), default="both")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S,
                        help=f"STARFEVER_WALLET_TIMEOUT (default {TIMEOUT_S:g})")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Databases(Path(folder) / "db") as databases:
        wallet = OperatorWallet(Path(folder), quiet=True)
        server = start_server(databases, args.db, Path(folder),
                              operator_mode_env(wallet, timeout=args.timeout, retry=RETRY_S),
                              workers=args.workers, args=operator_mode_args(wallet),
                              start_timeout=180.0)
        try:
            tokens = []
            for i in range(8):
                wallet.player(f"recovery-{i}", 10_000_000)
                tokens.append(launched_player(server, wallet.secret, f"recovery-{i}"))
            print(f"{args.db}, {args.workers} workers, timeout {args.timeout:g} s, retry "
                  f"{RETRY_S:g} s, {CLIENTS} clients, outage {args.outage:g} s")
            for kind in (("error", "hang") if args.kind == "both" else (args.kind,)):
                spins, in_doubt, closed = outage(server, wallet, tokens, args.outage, kind,
                                                 args.timeout)
                print(f"  {kind:5}: {spins} spins in the outage, {in_doubt} calls in doubt at "
                      f"the recovery, all closed {closed:.2f} s after it", flush=True)
        finally:
            server.stop()
            wallet.stop()


if __name__ == "__main__":
    main()
