"""Load test of ``starfever serve``: N concurrent players spin for a bounded time, then the
whole database is checked (money conservation and ``starfever audit``). Not a test: prints one
report (and ``--json``). Only ever talks to 127.0.0.1.

    python benchmarks/load.py --db postgresql --workers 2 --players 64 --duration 20
    python benchmarks/load.py --db sqlite --workers 2
    python benchmarks/load.py --db postgresql --rate 500     # 500 spins/s offered
    python benchmarks/load.py --wallet operator --rate 500   # operator mode, reference wallet
    python benchmarks/load.py --wallet operator --profile /tmp/prof   # cProfile the server

What it does:
1. creates a fresh database (SQLite file in a temp dir, or a new PostgreSQL database through
   ``STARFEVER_TEST_PG``, default 127.0.0.1:5432, dropped afterwards unless ``--keep``), an
   operator, and starts ``starfever serve --workers W`` on a free port of 127.0.0.1 (no test
   mode), all with the tests' harness (tests/harness.py);
2. before the clock starts: registers the players, logs them in and deposits for each;
3. timed phase: one asyncio task per player, each on its own HTTP/1.1 keep-alive connection
   (raw asyncio streams: a few microseconds of client CPU per request, so the generator does
   not eat the 2-core budget), spins back to back (fresh ``Idempotency-Key`` each) for
   ``--duration`` seconds after ``--warmup`` seconds that are not counted (on PostgreSQL
   followed by an ``ANALYZE``, as autovacuum would take on a running system; ``--no-analyze``
   leaves the fresh database without statistics); with ``--rate R``
   the players are paced instead: spins fall due at Poisson times, R per second from all
   players together, and each latency counts from the time its spin fell due;
4. reports settled spins/s, p50/p95/p99/max latency, errors, the machine's CPU use and load,
   the generator's own CPU, and on PostgreSQL how often a server backend was waiting on a row
   lock (sampled from ``pg_stat_activity``: that is the pool / chain-head contention), how
   often one waited for the WAL to reach the disk, and the longest such wait (a commit's
   flush: where the disk stalls, ``benchmarks/fsync.py``, that wait sets the p99);
5. stops the server and checks: every wallet + pool + house book = deposits - withdrawals, the
   ledger sums to zero, and ``starfever audit`` (every round replayed, hash chain) exits 0.

With ``--wallet operator`` the server runs in operator mode against the reference operator
wallet (``starfever operator-wallet-demo``, a process of its own on the same machine, its books
in its own SQLite file): the players are created there with the deposit as their balance and
launched with a signed ``POST /launch``; every spin is a debit and a credit over HTTP. After
the timed phase it waits until ``starfever reconcile`` finds nothing in doubt (the retrier
has sent every credit), then checks both sides' books: for every player, the operator's
balance = deposit + the wins - the bets of that player's rounds in Star Fever's database, and
every round has exactly one credit applied at the operator; then the audit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ``python benchmarks/load.py`` puts only benchmarks/ on the path; the harness is tests/harness.py
REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from sqlalchemy.engine import make_url  # noqa: E402

from tests.harness import (  # noqa: E402
    HOST,
    DatabaseKind,
    OperatorWallet,
    PostgresUnavailable,
    Server,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    run_cli,
    running_server,
)

LIMITS = {"STARFEVER_WEEKLY_DEPOSIT_LIMIT": str(10**9),
          "STARFEVER_MAX_HASHES_PER_ADDRESS": "64", "STARFEVER_MAX_HASH_WAITERS": "128"}
"""The benchmark's server settings: the deposit limit (players are funded for the whole run)
and the password-hashing gate (ADR 0052), which allows 2 checks at a time per address: the
generator registers and logs in all its players at once from one address, as many clients
behind one proxy would. Log-ins are set-up, not what the benchmark measures."""


class Connection:
    """One HTTP/1.1 keep-alive connection, JSON in and out, nothing else."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None,
                      headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """Send one request, read one response: (status, parsed JSON or None). A kept-alive
        connection the server closed meanwhile is reopened once (the request is resent as is:
        spins carry an idempotency key)."""
        reused = self.writer is not None
        try:
            return await self._request(method, path, body, headers)
        except (asyncio.IncompleteReadError, ConnectionError):
            if not reused:
                raise
            return await self._request(method, path, body, headers)

    async def _request(self, method: str, path: str, body: Any,
                       headers: dict[str, str] | None) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
        assert self.reader is not None
        payload = b"" if body is None else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}",
                 f"Content-Length: {len(payload)}"]
        if body is not None:
            lines.append("Content-Type: application/json")
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            data = await self.reader.readexactly(length) if length else b""
        except (asyncio.IncompleteReadError, ConnectionError):
            self.close()
            raise
        return status, (json.loads(data) if data else None)

    def close(self) -> None:
        """Drop the connection (the next request opens a new one)."""
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def run_loop(main: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """Run the timed phase on uvloop (as the server and the reference wallet run): the load
    generator shares the two cores with them, and asyncio's own loop spent about twice its
    CPU a spin at a paced rate (a timer and a wake-up a spin)."""
    try:
        import uvloop
    except ImportError:  # (not on Windows)
        return asyncio.run(main)
    return uvloop.run(main)


@dataclass
class Tally:
    """What the timed phase saw."""

    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    counting: bool = False
    stop: bool = False

    def error(self, what: str) -> None:
        """Count one failed spin (only while counting)."""
        if self.counting:
            self.errors[what] = self.errors.get(what, 0) + 1


async def player_loop(port: int, token: str, line_bet: int, tally: Tally,
                      rate: float | None = None, seed: int = 0) -> None:
    """Spin until told to stop: back to back, or, with ``rate``, at Poisson times of mean rate
    ``rate`` per second with one spin in flight (a spin due while the previous one is
    unanswered is sent when it is answered). Latency counts from the time the spin fell due,
    not from when it could be sent, so a slow server is not hidden by the player waiting for
    it (no coordinated omission); back to back, those are the same time."""
    conn = Connection(port)
    headers = {"Authorization": f"Bearer {token}"}
    body = {"line_bet": line_bet}
    draw = random.Random(seed)
    due = time.perf_counter() + (draw.expovariate(rate) if rate else 0.0)
    while not tally.stop:
        if rate is None:
            due = time.perf_counter()
        elif (wait := due - time.perf_counter()) > 0:
            await asyncio.sleep(wait)
            if tally.stop:
                break
        headers["Idempotency-Key"] = uuid.uuid4().hex
        counted = tally.counting
        try:
            status, answer = await conn.request("POST", "/api/v1/spins", body, headers)
        except (OSError, asyncio.IncompleteReadError) as error:
            tally.error(type(error).__name__)
            await asyncio.sleep(0.05)
            continue
        elapsed = time.perf_counter() - due
        if rate is not None:
            due += draw.expovariate(rate)
        if status != 201:
            code = (answer or {}).get("error", {}).get("code", "?") if answer else "?"
            tally.error(f"{status} {code}")
        elif counted and tally.counting:
            tally.latencies.append(elapsed)
    conn.close()


def fund_players(server: Server, players: int, deposit: int) -> list[str]:
    """Register, fund and log in every player, eight at a time; their tokens."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        made = list(pool.map(lambda _: server.player(deposit=deposit), range(players)))
    return [token for _, token in made]


def launch_players(server: Server, wallet: OperatorWallet, players: int,
                   deposit: int) -> tuple[list[str], list[str]]:
    """Operator mode: create every player at the operator with ``deposit`` and launch it;
    (operator player ids, session tokens)."""
    ids = [f"load-{uuid.uuid4().hex[:12]}" for _ in range(players)]

    def launch(player_id: str) -> str:
        wallet.player(player_id, deposit)
        return launched_player(server, wallet.secret, player_id)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return ids, list(pool.map(launch, ids))


def settle_in_doubt(url: str, seconds: float = 120.0) -> dict[str, Any]:
    """Wait until ``starfever reconcile`` finds nothing in doubt (the retrier sends what was
    left pending); its summary line, whether it did, and how long it took."""
    started = time.perf_counter()
    while True:
        done = run_cli("reconcile", "--database-url", url, timeout=600)
        summary = next((line for line in done.stdout.splitlines()
                        if line.startswith("reconcile:")), done.stderr.strip()[-300:])
        waited = time.perf_counter() - started
        if done.returncode == 0 or waited > seconds:
            return {"reconcile": summary, "reconcile_ok": done.returncode == 0,
                    "waited_s": round(waited, 1)}
        time.sleep(1.0)


def both_books(url: str, wallet: OperatorWallet, ids: list[str],
               deposit: int) -> dict[str, Any]:
    """Operator mode: each player's balance at the operator against Star Fever's rounds."""
    from sqlalchemy import create_engine, text

    from starfever.server.db import sqlalchemy_url

    engine = create_engine(sqlalchemy_url(url))
    with engine.connect() as conn:
        net = {str(pid): (int(n or 0), int(c)) for pid, n, c in conn.execute(text(
            "SELECT a.external_id, SUM(r.total_win - r.total_bet), COUNT(*) FROM rounds r "
            "JOIN accounts a ON a.id = r.account_id GROUP BY a.external_id"))}
    engine.dispose()
    applied: dict[str, int] = {}
    for row in wallet.transactions():
        if row["method"] == "credit" and row["applied"]:
            applied[row["player_id"]] = applied.get(row["player_id"], 0) + 1
    disagree = []
    for player_id in ids:
        rounds_net, rounds = net.get(player_id, (0, 0))
        if wallet.balance(player_id) != deposit + rounds_net or \
                applied.get(player_id, 0) != rounds:
            disagree.append(player_id)
    return {"players": len(ids), "players_disagreeing": len(disagree),
            "rounds": sum(c for _, c in net.values()),
            "operator_net": sum(wallet.balance(p) - deposit for p in ids),
            "rounds_net": sum(n for n, _ in net.values()),
            "credits_applied": sum(applied.values()), "agree": int(not disagree)}


def _process_table() -> dict[int, tuple[int, str, int]]:
    """Every process's parent, name and CPU ticks, from /proc: its own (user + system) and
    those of its children that ended and were waited for (cutime + cstime), so that the CPU
    of a PostgreSQL backend that ends within the window (a connection closed) still counts,
    in its postmaster's ticks."""
    table: dict[int, tuple[int, str, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry)] = (int(fields[1]), name, sum(int(v) for v in fields[11:15]))
    return table


def _ticks_by_part(roots: dict[str, int]) -> dict[str, int]:
    """CPU ticks of each named process tree (``roots``: part -> root pid) and of every
    PostgreSQL process (``postgres``), now."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    ticks = {part: 0 for part in roots}
    for part, root in roots.items():
        stack = [root]
        while stack:
            pid = stack.pop()
            if pid in table:
                ticks[part] += table[pid][2]
            stack.extend(children.get(pid, ()))
    ticks["postgres"] = sum(t for _, name, t in table.values() if name == "postgres")
    return ticks


class CpuMeter:
    """Machine-wide CPU busy share from /proc/stat between start() and stop(), and the CPU
    seconds of each part (the server's processes, the reference wallet's, PostgreSQL's)."""

    def __init__(self, roots: dict[str, int] | None = None) -> None:
        self.roots = roots or {}

    @staticmethod
    def _read() -> tuple[int, int]:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        idle = values[3] + values[4]
        return sum(values) - idle, sum(values)

    def start(self) -> None:
        """Begin measuring."""
        self.busy0, self.total0 = self._read()
        self.proc0 = os.times()
        self.parts0 = _ticks_by_part(self.roots)

    def stop(self) -> dict[str, float]:
        """Busy share of all CPUs, and the generator's own CPU seconds."""
        busy, total = self._read()
        proc = os.times()
        parts = _ticks_by_part(self.roots)
        hz = os.sysconf("SC_CLK_TCK")
        return {"machine_busy": (busy - self.busy0) / max(1, total - self.total0),
                "generator_cpu_s": (proc.user + proc.system) - (self.proc0.user
                                                                 + self.proc0.system),
                **{f"{part}_cpu_s": (parts[part] - self.parts0[part]) / hz for part in parts}}


class LockSampler(threading.Thread):
    """Samples pg_stat_activity of the load database every 20 ms: backends waiting on a lock
    vs busy, and backends waiting for the WAL to be flushed to disk (``IO``/``WALSync``, or
    ``LWLock``/``WALWrite`` behind another backend's flush): every commit waits for that flush,
    and on a disk whose flushes stall now and then (``benchmarks/fsync.py``) those stalls, not
    the CPU, make the tail of the latencies."""

    def __init__(self, url: str, dbname: str) -> None:
        super().__init__(daemon=True)
        self.url, self.dbname = url, dbname
        self.samples = 0
        self.waiting = 0
        self.active = 0
        self.flushing = 0
        """Samples in which some backend waited for a WAL flush."""
        self.longest_flush = 0.0
        """The longest wait for a WAL flush seen (one backend, consecutive samples)."""
        self._flushing_since: dict[int, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.done.is_set():
                rows = conn.execute(
                    "SELECT pid, wait_event_type, wait_event FROM pg_stat_activity WHERE "
                    "datname = %s AND state = 'active' AND pid <> pg_backend_pid()",
                    (self.dbname,)).fetchall()
                now = time.perf_counter()
                self.samples += 1
                self.active += len(rows)
                self.waiting += sum(1 for _, kind, _ in rows if kind == "Lock")
                flushing = {pid for pid, _, event in rows if event in ("WALSync", "WALWrite")}
                self.flushing += bool(flushing)
                for pid in flushing:
                    self._flushing_since.setdefault(pid, now)
                self._end_flushes(now, keep=flushing)
                time.sleep(0.02)
            self._end_flushes(time.perf_counter(), keep=set())

    def _end_flushes(self, now: float, keep: set[int]) -> None:
        for pid in [pid for pid in self._flushing_since if pid not in keep]:
            self.longest_flush = max(self.longest_flush, now - self._flushing_since.pop(pid))


def process_roots(server: Server, wallet: OperatorWallet | None) -> dict[str, int]:
    """The root process of each part whose CPU the report splits out."""
    roots = {}
    if server.process is not None:
        roots["server"] = server.process.pid
    if wallet is not None and wallet.process is not None:
        roots["wallet"] = wallet.process.pid
    return roots


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of the values, nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def conservation(url: str) -> dict[str, int]:
    """The books as stored: wallets + pool + house must equal deposits - withdrawals."""
    from sqlalchemy import create_engine, text

    from starfever.server.db import sqlalchemy_url

    engine = create_engine(sqlalchemy_url(url))
    with engine.connect() as conn:
        q = lambda sql: int(conn.execute(text(sql)).scalar_one() or 0)  # noqa: E731
        figures = {
            "wallets": q("SELECT COALESCE(SUM(balance), 0) FROM wallets"),
            "pool": q("SELECT amount FROM jackpot_pool"),
            "house": q("SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE book='house'"),
            "deposits": q("SELECT COALESCE(SUM(amount), 0) FROM ledger_entries "
                          "WHERE book='wallet' AND kind='deposit'"),
            "withdrawals": q("SELECT COALESCE(-SUM(amount), 0) FROM ledger_entries "
                             "WHERE book='wallet' AND kind='withdrawal'"),
            "ledger_sum": q("SELECT COALESCE(SUM(amount), 0) FROM ledger_entries"),
            "rounds": q("SELECT COUNT(*) FROM rounds"),
        }
    engine.dispose()
    figures["conserved"] = int(
        figures["wallets"] + figures["pool"] + figures["house"]
        == figures["deposits"] - figures["withdrawals"] and figures["ledger_sum"] == 0)
    return figures


def analyze(url: str) -> None:
    """``ANALYZE`` the load database: the statistics autovacuum takes of a running system
    within its first minute. A database made for this run has none: PostgreSQL then plans
    the server's prepared statements for nearly empty tables (a scan of the whole table,
    not its index) and keeps those plans, as the tables grow, until statistics arrive."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")


async def timed_phase(port: int, tokens: list[str], line_bet: int, warmup: float,
                      duration: float, sampler: LockSampler | None,
                      rate: float | None = None,
                      roots: dict[str, int] | None = None,
                      analyze_url: str | None = None) -> dict[str, Any]:
    """Warm up (then ``ANALYZE`` the database at ``analyze_url``), then count ``duration``
    seconds of spins (back to back, or paced so that all players together are due ``rate``
    spins per second)."""
    tally = Tally()
    each = None if rate is None else rate / len(tokens)
    tasks = [asyncio.create_task(player_loop(port, t, line_bet, tally, each, seed))
             for seed, t in enumerate(tokens)]
    await asyncio.sleep(warmup)
    if analyze_url is not None:
        await asyncio.to_thread(analyze, analyze_url)
        await asyncio.sleep(1.0)  # the plans made again, out of the count
    meter = CpuMeter(roots)
    load_before = os.getloadavg()
    tally.counting = True
    meter.start()
    if sampler is not None:
        sampler.start()
    started = time.perf_counter()
    await asyncio.sleep(duration)
    tally.counting = False
    elapsed = time.perf_counter() - started
    cpu = meter.stop()
    if sampler is not None:
        sampler.done.set()
    tally.stop = True
    await asyncio.gather(*tasks)
    lat = tally.latencies
    result: dict[str, Any] = {
        "settled": len(lat), "seconds": round(elapsed, 2),
        "spins_per_s": round(len(lat) / elapsed, 1),
        "p50_ms": round(percentile(lat, 0.50) * 1000, 1),
        "p95_ms": round(percentile(lat, 0.95) * 1000, 1),
        "p99_ms": round(percentile(lat, 0.99) * 1000, 1),
        "max_ms": round(max(lat, default=float("nan")) * 1000, 1),
        "mean_ms": round(statistics.fmean(lat) * 1000, 1) if lat else None,
        "errors": sum(tally.errors.values()), "error_kinds": tally.errors,
        "machine_cpu_busy": round(cpu["machine_busy"], 3),
        "generator_cpu_s": round(cpu["generator_cpu_s"], 2),
        "cpu_ms_per_spin": {part.removesuffix("_cpu_s"): round(1000 * s / max(1, len(lat)), 3)
                            for part, s in cpu.items() if part.endswith("_cpu_s")},
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }
    if sampler is not None:
        result["pg_active_backends_avg"] = round(sampler.active / max(1, sampler.samples), 2)
        result["pg_lock_waiting_avg"] = round(sampler.waiting / max(1, sampler.samples), 2)
        result["pg_wal_flush_waiting_share"] = round(sampler.flushing / max(1, sampler.samples),
                                                     3)
        result["pg_wal_flush_longest_ms"] = round(sampler.longest_flush * 1e3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="postgresql")
    parser.add_argument("--wallet", choices=("ledger", "operator"), default="ledger",
                        help="ledger: the embedded wallet; operator: operator mode against "
                             "the reference operator wallet, started on this machine")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    parser.add_argument("--players", type=int, default=64)
    parser.add_argument("--duration", type=float, default=20.0, help="counted seconds")
    parser.add_argument("--warmup", type=float, default=3.0, help="uncounted seconds first")
    parser.add_argument("--no-analyze", action="store_true",
                        help="PostgreSQL: no ANALYZE after the warm-up (a fresh database's "
                        "plans throughout)")
    parser.add_argument("--rate", type=float, default=None,
                        help="spins per second due from all players together (Poisson "
                             "arrivals, latency from the due time); default: back to back")
    parser.add_argument("--line-bet", type=int, default=1)
    parser.add_argument("--deposit", type=int, default=10_000_000, help="cents per player")
    parser.add_argument("--skip-audit", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="cProfile every server process (STARFEVER_PROFILE): one "
                             "DIR/server-PID.prof each, by CPU time per thread; slows it down")
    args = parser.parse_args(argv)
    if args.duration > 600:
        parser.error("--duration is bounded to 600 s")
    if args.rate is not None and not args.rate > 0:
        parser.error("--rate must be a positive number of spins per second")

    tmp = Path(tempfile.mkdtemp(prefix="starfever-load-"))
    report: dict[str, Any] = {"db": args.db, "wallet": args.wallet, "workers": args.workers,
                              "players": args.players, "duration_s": args.duration,
                              "line_bet": args.line_bet,
                              "offered_spins_per_s": args.rate or "back to back",
                              "cpus": os.cpu_count()}
    kind: DatabaseKind = args.db
    wallet = OperatorWallet(tmp, quiet=True) if args.wallet == "operator" else None
    env = {**LIMITS, **(operator_mode_env(wallet) if wallet else {})}
    if args.profile is not None:
        env["STARFEVER_PROFILE"] = str(args.profile.resolve())
    try:
        with running_server(tmp, kind, env, keep=args.keep, test_mode=False,
                            workers=args.workers, start_timeout=90.0,
                            args=operator_mode_args(wallet) if wallet else ()) as server:
            url = server.database_url
            ids: list[str] = []
            if wallet is not None:
                ids, tokens = launch_players(server, wallet, args.players, args.deposit)
            else:
                tokens = fund_players(server, args.players, args.deposit)
            dbname = make_url(url).database if kind == "postgresql" else None
            sampler = LockSampler(url, dbname) if dbname else None
            report.update(run_loop(timed_phase(
                server.port, tokens, args.line_bet, args.warmup, args.duration, sampler,
                args.rate, process_roots(server, wallet),
                analyze_url=url if dbname and not args.no_analyze else None)))
            if wallet is not None:
                report.update(settle_in_doubt(url))
            server.stop()
            if wallet is not None:
                report["books"] = both_books(url, wallet, ids, args.deposit)
            else:
                report["books"] = conservation(url)
            if not args.skip_audit:
                started = time.perf_counter()
                # the audit re-checks deposits against the limits the server ran with
                audit = run_cli("audit", "--database-url", url, env=LIMITS, timeout=1800)
                report["audit"] = audit.stdout.strip().splitlines()[0] if audit.stdout else \
                    audit.stderr.strip()[-500:]
                report["audit_ok"] = audit.returncode == 0
                report["audit_s"] = round(time.perf_counter() - started, 1)
            if args.keep:
                report["database_url"] = make_url(url).render_as_string(hide_password=True)
    except PostgresUnavailable as error:
        print(f"load.py: {error}", file=sys.stderr)
        return 2
    finally:
        if wallet is not None:
            wallet.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:>24}: {value}")
    books = report.get("books", {})
    ok = (report.get("errors") == 0 and report.get("audit_ok", True)
          and (books.get("agree") == 1 and report.get("reconcile_ok") is True
               if wallet is not None else books.get("conserved") == 1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
