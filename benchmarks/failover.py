"""The failover drill (``scripts/failover-drill``, ADR 0070): the PostgreSQL primary dies under
load and the standby takes over; prove that not a cent and not a round was lost, and measure
how long the players were refused. Not a test: prints one report (and ``--json``); exit 0 only
if every check passed. ``tests/assurance/test_failover.py`` runs it.

    python benchmarks/failover.py                # the suite's short run, about a minute
    python benchmarks/failover.py --long         # more players, a minute of play each side

What it does, all on this machine (``tests/failover_cluster.py``):
1. builds a cluster: etcd and two PostgreSQL 15 nodes under Patroni, in synchronous mode, in a
   folder of its own (removed at the end); two databases on it, one per wallet mode;
2. starts three game servers (``starfever serve``, the tests' harness): ``ledger`` and
   ``operator`` (operator mode, against the reference operator wallet) on the multi-host URL
   (both nodes, ``target_session_attrs=read-write``), and ``stale``, a ledger server whose
   URL names the first primary alone, as a server left with an old configuration would;
3. the load generator's players (``benchmarks/load.py``'s connections) spin on all three, each
   spin under a fresh ``Idempotency-Key`` sent again after a ``503`` (its ``Retry-After``) or a
   lost connection until it gets its answer, as the web client does;
4. SIGKILLs the primary's node (PostgreSQL and its Patroni agent, as a machine losing power)
   and lets Patroni promote the standby; the play goes on;
5. starts the old primary's node again: Patroni rewinds it and makes it the new primary's
   standby; the ``stale`` server, still talking to it, must settle nothing there (no spin
   sent after the kill is answered 2xx: ``settled_after_kill``; one sent before it may have
   been committed before it and answered after);
6. stops, then checks on the new primary: every acknowledged round is there under its key
   (rounds lost), no key has two rounds or two answers (rounds doubled), the books are
   conserved (ledger) and agree with the operator's wallet call by call (operator mode),
   ``starfever audit`` passes on both databases and ``starfever reconcile`` finds nothing in
   doubt; and on the old primary, now a standby, the very same rounds.

Unavailability, per server: from the first spin refused after the kill to the first spin
settled after that (the players' view), and from the kill itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.load import (  # noqa: E402
    LIMITS,
    Connection,
    both_books,
    conservation,
    fund_players,
    launch_players,
    settle_in_doubt,
)
from tests.failover_cluster import Cluster, ClusterError, Node, wait_for  # noqa: E402
from tests.harness import (  # noqa: E402
    OperatorWallet,
    Server,
    create_operator,
    operator_mode_args,
    operator_mode_env,
    run_cli,
)

DEPOSIT = 10_000_000
"""Cents per player: enough for every spin of a run."""
SPIN = {"line_bet": 1}
START_TIMEOUT_S = 300.0
"""A server's start on a loaded two-core machine can take a minute; waits end when the
condition holds, so a generous deadline costs nothing on a quiet one."""


@dataclass
class Side:
    """What the players of one game server saw."""

    name: str
    acknowledged: dict[str, int] = field(default_factory=dict)
    """Idempotency-Key -> round id of every spin answered 2xx."""
    doubled: list[str] = field(default_factory=list)
    """Keys answered twice with different rounds."""
    settled_at: list[float] = field(default_factory=list)
    """When each 2xx arrived (monotonic)."""
    sent_at: list[float] = field(default_factory=list)
    """When the request of each 2xx was sent (monotonic): one sent after the kill can have been
    settled only by a database that took writes after it, where one answered after the kill
    may have been committed just before it."""
    refused_at: list[float] = field(default_factory=list)
    """When each refusal arrived: a ``503`` or a lost connection."""
    refusals: Counter[str] = field(default_factory=Counter)
    """Refusals by kind (``503 database_unavailable``, ``ConnectionResetError``, ...)."""
    replayed_after_refusal: int = 0
    """Spins refused first, then answered ``200`` (replayed): their commit had reached the
    database that took over, which the client could not know."""
    errors: Counter[str] = field(default_factory=Counter)
    """Anything else: a 500, a 4xx. Must stay empty."""
    abandoned: int = 0
    """Spins never answered when the play stopped (only the ``stale`` server's)."""

    def unavailability(self, killed_at: float) -> dict[str, Any]:
        """From the first refusal after the kill to the first settled spin after it."""
        refused = [t for t in self.refused_at if t >= killed_at]
        if not refused:
            return {"refused_after_kill": 0}
        first = refused[0]
        back = [t for t in self.settled_at if t > first]
        return {"refused_after_kill": len(refused),
                "first_refused_s_after_kill": round(first - killed_at, 2),
                "unavailable_s": round(back[0] - first, 2) if back else None,
                "kill_to_first_settled_s": round(back[0] - killed_at, 2) if back else None}


class Play:
    """The players' loops on one event loop in a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.stopping = False
        self.tasks: list[Future[None]] = []
        self.thread = threading.Thread(target=self.loop.run_forever, name="drill-play",
                                       daemon=True)
        self.thread.start()

    def add(self, port: int, token: str, side: Side, pause: float, *,
            give_up: bool = False) -> None:
        """One player spinning on ``port`` every ``pause`` seconds."""
        self.tasks.append(asyncio.run_coroutine_threadsafe(
            self._player(port, token, side, pause, give_up), self.loop))

    def stop(self, timeout: float = 120) -> None:
        """No new spins; wait until every spin sent is answered (a ``give_up`` player drops
        its spin in flight instead)."""
        self.stopping = True
        deadline = time.monotonic() + timeout
        for task in self.tasks:
            task.result(timeout=max(1.0, deadline - time.monotonic()))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)

    async def _player(self, port: int, token: str, side: Side, pause: float,
                      give_up: bool) -> None:
        conn = Connection(port)
        headers = {"Authorization": f"Bearer {token}"}
        while not self.stopping:
            key = headers["Idempotency-Key"] = uuid.uuid4().hex
            refused = False
            while True:
                if give_up and self.stopping:
                    side.abandoned += 1
                    break
                sent = time.monotonic()
                try:
                    status, answer = await conn.request("POST", "/api/v1/spins", SPIN, headers)
                except (OSError, asyncio.IncompleteReadError) as error:
                    side.refused_at.append(time.monotonic())
                    side.refusals[type(error).__name__] += 1
                    refused = True
                    await asyncio.sleep(0.2)
                    continue
                code = (answer or {}).get("error", {}).get("code", "?") if answer else "?"
                if status in (200, 201):
                    round_id = int(answer["round"]["id"])
                    if side.acknowledged.setdefault(key, round_id) != round_id:
                        side.doubled.append(key)
                    side.settled_at.append(time.monotonic())
                    side.sent_at.append(sent)
                    side.replayed_after_refusal += int(refused and status == 200)
                    break
                if status == 503:
                    side.refused_at.append(time.monotonic())
                    side.refusals[f"503 {code}"] += 1
                    refused = True
                    await asyncio.sleep(1.0)  # the Retry-After of every such 503
                    continue
                side.errors[f"{status} {code}"] += 1
                break
            await asyncio.sleep(pause)
        conn.close()


def _parallel(*calls: Callable[[], Any]) -> list[Any]:
    """Run ``calls`` at once (server starts, audits: each mostly a process of its own)."""
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return [future.result() for future in [pool.submit(call) for call in calls]]


def _rounds(url: str) -> dict[str, int]:
    """Idempotency-Key -> round id of every stored round (through the game servers' URL: on
    the primary)."""
    from sqlalchemy import create_engine, text

    from starfever.server.db import sqlalchemy_url

    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            return {str(key): int(rid) for rid, key in conn.execute(text(
                "SELECT id, idempotency_key FROM rounds"))}
    finally:
        engine.dispose()


def _lost_and_doubled(side: Side, stored: dict[str, int], url: str) -> dict[str, int]:
    """Rounds acknowledged to a player but not stored under their key (lost), and keys with
    two rounds or two different answers (doubled)."""
    from sqlalchemy import create_engine, text

    from starfever.server.db import sqlalchemy_url

    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            twice = int(conn.execute(text(
                "SELECT count(*) FROM (SELECT account_id, idempotency_key FROM rounds "
                "GROUP BY account_id, idempotency_key HAVING count(*) > 1) AS twice")
                ).scalar_one())
    finally:
        engine.dispose()
    lost = sum(1 for key, rid in side.acknowledged.items() if stored.get(key) != rid)
    return {"acknowledged": len(side.acknowledged), "lost": lost,
            "doubled": twice + len(side.doubled)}


def operator_calls(url: str, wallet: OperatorWallet) -> dict[str, int]:
    """Operator mode, call by call: every debit the operator applied was either played (a
    round in Star Fever's books, its credit applied once, no rollback) or rolled back (its
    rollback applied, no credit); nothing else."""
    from sqlalchemy import create_engine, text

    from starfever.server.db import sqlalchemy_url

    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            played = {str(t) for (t,) in conn.execute(text(
                "SELECT transaction_id FROM wallet_calls WHERE kind = 'debit' "
                "AND round_id IS NOT NULL"))}
    finally:
        engine.dispose()
    applied = {row["transaction_id"] for row in wallet.transactions() if row["applied"]}
    debits = [t for t in applied if t.startswith("sfd-")]
    wrong = 0
    for debit in debits:
        credit, rollback = "sfc-" + debit[4:], "sfb-" + debit[4:]
        if debit in played:
            wrong += int(credit not in applied or rollback in applied)
        else:
            wrong += int(rollback not in applied or credit in applied)
    return {"debits_applied": len(debits), "debits_played": len(played & applied),
            "rolled_back": sum(1 for t in applied if t.startswith("sfb-")),
            "calls_wrong": wrong + sum(1 for t in applied if t.startswith("sfc-")
                                       and "sfd-" + t[4:] not in played)}


def _standby_holds_the_same(cluster: Cluster, old: Node, new: Node,
                            databases: list[str]) -> dict[str, Any]:
    """Once the old primary replayed what the new one wrote: the same rounds on both, and the
    old one in recovery (a standby that takes no writes)."""
    target = cluster.sql(new, "SELECT pg_current_wal_lsn()")
    wait_for("the old primary replays the new one's WAL", lambda: cluster.sql(
        old, f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn") == "t", 120)
    query = "SELECT count(*), coalesce(sum(id), 0), coalesce(max(id), 0) FROM rounds"
    same = {name: cluster.sql(old, query, name) == cluster.sql(new, query, name)
            for name in databases}
    return {"in_recovery": cluster.sql(old, "SELECT pg_is_in_recovery()") == "t",
            "same_rounds": all(same.values())}


def _audit(url: str) -> dict[str, Any]:
    done = run_cli("audit", "--database-url", url, env=LIMITS, timeout=900)
    said = done.stdout.strip().splitlines()[:1] or done.stderr.strip().splitlines()[-1:]
    return {"ok": done.returncode == 0, "said": said[0] if said else ""}


def drill(*, players: int, pause: float, before: float, after: float, workers: int,
          folder: Path, say: Callable[[str], None]) -> dict[str, Any]:
    """Run the drill (module docstring); the report."""
    report: dict[str, Any] = {"players_per_server": players, "pause_s": pause,
                              "workers": workers}
    started = time.monotonic()
    cluster = Cluster()
    wallet: OperatorWallet | None = None
    servers: list[Server] = []
    play: Play | None = None
    try:
        say("== building the cluster: etcd, two PostgreSQL nodes under Patroni")
        cluster.start(wait_standby=False)  # the standby is copied while the servers start
        first = cluster.nodes[0]
        databases = {"ledger": "starfever_ledger", "operator": "starfever_operator"}
        urls = {mode: cluster.url(name) for mode, name in databases.items()}
        for name in databases.values():
            cluster.create_database(name)
        secrets = {mode: create_operator(url) for mode, url in urls.items()}
        report["primary_ready_s"] = round(time.monotonic() - started, 1)

        say(f"== starting three game servers (the first primary: {first.name})")
        wallet = OperatorWallet(folder, quiet=True)
        env = {**LIMITS, "STARFEVER_DRAIN_SECONDS": "10"}
        ledger = Server(urls["ledger"], folder / "ledger.log", env, test_mode=False,
                        workers=workers, start_timeout=START_TIMEOUT_S)
        operator = Server(urls["operator"], folder / "operator.log",
                          {**env, **operator_mode_env(wallet)}, test_mode=False,
                          workers=workers, start_timeout=START_TIMEOUT_S,
                          args=operator_mode_args(wallet))
        stale = Server(first.url(databases["ledger"]), folder / "stale.log", env,
                       test_mode=False, workers=1, start_timeout=START_TIMEOUT_S)
        servers = [ledger, operator, stale]
        ledger.operator_totp, operator.operator_totp = secrets["ledger"], secrets["operator"]
        _parallel(*(server.start for server in servers))
        ledger_tokens = fund_players(ledger, players + 2, DEPOSIT)
        ids, operator_tokens = launch_players(operator, wallet, players, DEPOSIT)
        if cluster.wait_synchronous() is not first:
            raise ClusterError("the first node lost its lead before the play")
        report["set_up_s"] = round(time.monotonic() - started, 1)

        sides = {name: Side(name) for name in ("ledger", "operator", "stale")}
        play = Play()
        for token in ledger_tokens[:players]:
            play.add(ledger.port, token, sides["ledger"], pause)
        for token in operator_tokens:
            play.add(operator.port, token, sides["operator"], pause)
        for token in ledger_tokens[players:]:
            play.add(stale.port, token, sides["stale"], pause, give_up=True)
        wait_for("every server settles spins", lambda: all(
            len(side.acknowledged) >= players for side in sides.values()), 120)
        time.sleep(before)  # the play before the kill: as long as asked

        say(f"== SIGKILL {first.name} (PostgreSQL and its Patroni agent) under load")
        killed_at = cluster.kill(first)
        new = wait_for("Patroni promotes the standby", cluster.leader, 180, every=0.1)
        report["promoted_s_after_kill"] = round(time.monotonic() - killed_at, 2)

        def back(side: Side) -> bool:
            return any(t > killed_at for t in side.settled_at)

        wait_for("both servers on the new primary settle spins again",
                 lambda: back(sides["ledger"]) and back(sides["operator"]), 180)
        recovered_at = time.monotonic()
        time.sleep(after)

        say(f"== {first.name} rejoins as the standby of {new.name}; "
            "the stale server still talks to it")
        rejoin_started = time.monotonic()
        cluster.rejoin(first)
        report["rejoined_s"] = round(time.monotonic() - rejoin_started, 1)
        rejoined_at = time.monotonic()
        wait_for("the stale server's players are refused by the standby", lambda: sum(
            t > rejoined_at for t in sides["stale"].refused_at) >= 3, 60)
        stale_ready = stale.http.get(f"{stale.url}/readyz")
        say("== stopping the play; the wallet's retrier settles what is in doubt")
        play.stop()
        play = None
        in_doubt = settle_in_doubt(urls["operator"])
        _parallel(*(server.stop for server in servers))

        say("== checking the new primary, and the old one as its standby")
        report["standby"] = _standby_holds_the_same(cluster, first, new,
                                                    list(databases.values()))
        report["stale_readyz_while_standby"] = stale_ready.status_code
        stored = {mode: _rounds(url) for mode, url in urls.items()}
        stale_after_kill = sum(t >= killed_at for t in sides["stale"].sent_at)
        for name, side in sides.items():
            mode = "operator" if name == "operator" else "ledger"
            report[name] = {**_lost_and_doubled(side, stored[mode], urls[mode]),
                            **side.unavailability(killed_at),
                            "refusals": dict(side.refusals),
                            "replayed_after_refusal": side.replayed_after_refusal,
                            "errors": dict(side.errors)}
        report["stale"].update(settled_after_kill=stale_after_kill,
                               abandoned=sides["stale"].abandoned)
        report["ledger_books"] = conservation(urls["ledger"])
        report["operator_books"] = both_books(urls["operator"], wallet, ids, DEPOSIT)
        report["operator_calls"] = operator_calls(urls["operator"], wallet)
        report["reconcile"] = in_doubt
        audits = _parallel(lambda: _audit(urls["ledger"]), lambda: _audit(urls["operator"]))
        report["audit"] = {"ledger": audits[0], "operator": audits[1]}
        report["recovered_s_after_kill"] = round(recovered_at - killed_at, 2)
    except BaseException:
        say(cluster.logs())
        raise
    finally:
        if play is not None:
            play.stopping = True
        for server in servers:
            server.kill()
        if wallet is not None:
            wallet.stop()
        cluster.stop()
    report["drill_s"] = round(time.monotonic() - started, 1)
    report["passed"] = passed(report)
    return report


def passed(report: dict[str, Any]) -> bool:
    """Whether every check of the drill holds (the module docstring's step 6)."""
    sides = [report[name] for name in ("ledger", "operator", "stale")]
    return (all(side["lost"] == 0 and side["doubled"] == 0 and not side["errors"]
                for side in sides)
            and all(report[name].get("unavailable_s") is not None
                    for name in ("ledger", "operator"))
            and report["stale"]["settled_after_kill"] == 0
            and report["stale_readyz_while_standby"] == 503
            and report["standby"] == {"in_recovery": True, "same_rounds": True}
            and report["ledger_books"]["conserved"] == 1
            and report["operator_books"]["agree"] == 1
            and report["operator_calls"]["calls_wrong"] == 0
            and report["reconcile"]["reconcile_ok"] is True
            and all(audit["ok"] for audit in report["audit"].values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=6, help="players per game server")
    parser.add_argument("--pause", type=float, default=0.1,
                        help="seconds between a player's answer and its next spin")
    parser.add_argument("--before", type=float, default=2.0,
                        help="seconds of play before the kill")
    parser.add_argument("--after", type=float, default=2.0,
                        help="seconds of play on the new primary before the old one rejoins")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes of the ledger and operator servers")
    parser.add_argument("--long", action="store_true",
                        help="16 players a server, 2 workers, 60 s of play before the kill "
                             "and after")
    parser.add_argument("--logs", type=Path, default=None, metavar="DIR",
                        help="keep the servers' and the wallet's logs there")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if args.long:
        args.players, args.workers, args.before, args.after = 16, 2, 60.0, 60.0
    folder = args.logs or Path(tempfile.mkdtemp(prefix="starfever-failover-"))
    folder.mkdir(parents=True, exist_ok=True)

    def say(line: str) -> None:
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)

    try:
        report = drill(players=args.players, pause=args.pause, before=args.before,
                       after=args.after, workers=args.workers, folder=folder, say=say)
    except ClusterError as error:
        print(f"failover-drill: {error} (logs: {folder})", file=sys.stderr)
        return 2
    if report["passed"] and args.logs is None:
        shutil.rmtree(folder, ignore_errors=True)
    elif not report["passed"]:
        say(f"failover-drill: FAILED; the servers' logs are in {folder}")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:>28}: {value}")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
