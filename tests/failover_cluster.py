"""A highly available PostgreSQL on this one machine, for the failover drill
(``scripts/failover-drill``, ADR 0070): one etcd member and two PostgreSQL 15 nodes under Patroni,
in synchronous mode, each with its own data directory and ports in a folder of its own, started
and removed by :class:`Cluster`. Plain Python, no pytest (like ``tests/harness.py``).

- :meth:`Cluster.start` starts etcd and both Patroni agents and waits until one node leads and
  the other streams from it as its *synchronous* standby (before that a commit is not on two
  nodes, and the drill's RPO of zero would not hold);
- :meth:`Cluster.kill` SIGKILLs a node whole, as a machine that loses its power: its Patroni
  agent and its PostgreSQL (the postmaster's process group: every backend with it). Killing
  PostgreSQL alone would not fail over: the agent, still holding the leader key, would start it
  again as the primary;
- :meth:`Cluster.rejoin` starts the killed node's agent again: it finds the other node leading
  and makes its own PostgreSQL a standby of it (``pg_rewind`` first, for the WAL it wrote that
  the new primary never got);
- :meth:`Cluster.url` is the game servers' URL: both nodes, ``target_session_attrs=read-write``.

The timings are the drill's, shorter than production's (``ttl`` 10 s instead of Patroni's 30 s:
docs/production.md §7). PostgreSQL refuses to run as root: run as root, every process of the
cluster runs as the ``postgres`` system user, in a folder under ``/tmp`` that user can reach.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tests.harness import HOST, free_port

PG_BIN = Path("/usr/lib/postgresql/15/bin")
"""Debian's PostgreSQL 15 programs (``postgresql-15``)."""
PROGRAMS = {"patroni": "patroni", "etcd": "etcd-server"}
"""The commands the cluster runs, and the Debian package of each."""
TTL_S = 10
"""How long the leader key outlives its holder's last renewal: what a dead primary costs
before the standby may take over (Patroni's default is 30 s)."""
LOOP_WAIT_S = 1
RETRY_TIMEOUT_S = 4
"""``loop_wait + 2 * retry_timeout <= ttl``, as Patroni wants."""
SYSTEM_USER = "postgres"
"""Who runs the cluster when the drill runs as root."""


class ClusterError(RuntimeError):
    """The cluster did not reach the state waited for, or a program is missing."""


def missing_programs() -> list[str]:
    """The Debian packages to install before a cluster can start (empty: none)."""
    missing = [package for program, package in PROGRAMS.items() if shutil.which(program) is None]
    if not (PG_BIN / "postgres").exists():
        missing.append("postgresql-15")
    return missing


def wait_for(what: str, check: Callable[[], Any], timeout: float, every: float = 0.2) -> Any:
    """Poll ``check`` until it returns something true; that value. :class:`ClusterError`
    naming ``what`` after ``timeout`` seconds (the machine may be loaded: deadlines are
    generous, and a condition met early ends the wait at once)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise ClusterError(f"{what}: not within {timeout:.0f} s")
        time.sleep(every)


@dataclass
class Node:
    """One PostgreSQL node and its Patroni agent."""

    name: str
    pg_port: int
    api_port: int
    folder: Path
    agent: subprocess.Popen[bytes] | None = None

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "patroni.log"

    def url(self, database: str) -> str:
        """This node alone (a server configured with one host: what the split-brain check
        uses)."""
        return f"postgresql://{SYSTEM_USER}@{HOST}:{self.pg_port}/{database}"

    def status(self) -> dict[str, Any] | None:
        """The agent's ``GET /patroni`` (its role and state), or ``None`` while it does not
        answer."""
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.api_port}/patroni",
                                        timeout=2) as answer:
                return dict(json.load(answer))
        except urllib.error.HTTPError as error:  # 503: not the leader, still a JSON status
            try:
                return dict(json.load(error))
            except ValueError:
                return None
        except (OSError, ValueError):
            return None

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid from ``postmaster.pid`` (``None``: none)."""
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
            os.kill(pid, 0)
        except (OSError, ValueError, IndexError):
            return None
        return pid


def _stopped(node: Node) -> bool:
    return node.postmaster_pid() is None


class Cluster:
    """etcd and two Patroni nodes in ``folder`` (made under ``/tmp`` when none is given)."""

    def __init__(self, folder: Path | None = None, *, scope: str = "starfever-drill") -> None:
        as_root = os.geteuid() == 0
        self.folder = folder or Path(tempfile.mkdtemp(prefix="starfever-ha-",
                                                      dir="/tmp" if as_root else None))
        self.scope = scope
        self.user = SYSTEM_USER if as_root else None
        self.etcd_port, self.etcd_peer_port = free_port(), free_port()
        self.etcd: subprocess.Popen[bytes] | None = None
        self.nodes = [Node(name, free_port(), free_port(), self.folder / name)
                      for name in ("node-a", "node-b")]

    # --- the processes ----------------------------------------------------------------
    def _spawn(self, command: list[str], log: Path) -> subprocess.Popen[bytes]:
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(self.folder)}
        with open(log, "ab") as out:
            return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    cwd=self.folder, start_new_session=True,
                                    user=self.user, group=self.user,
                                    extra_groups=[] if self.user else None)

    def start(self, timeout: float = 180, *, wait_standby: bool = True) -> Cluster:
        """Start etcd and both agents; wait for a leader with a synchronous standby (or, with
        ``wait_standby`` false, only for the leader: the standby is then still being copied,
        and :meth:`wait_synchronous` waits for it)."""
        missing = missing_programs()
        if missing:
            raise ClusterError("missing Debian packages: " + " ".join(missing))
        for node in self.nodes:
            node.folder.mkdir(parents=True, exist_ok=True)
            (node.folder / "patroni.yml").write_text(self._config(node))
        if self.user is not None:
            self.folder.chmod(0o755)
            shutil.chown(self.folder, self.user, self.user)
            for path in self.folder.rglob("*"):
                shutil.chown(path, self.user, self.user)
        self.etcd = self._spawn(
            ["etcd", "--name", "drill", "--data-dir", str(self.folder / "etcd"),
             "--listen-client-urls", f"http://{HOST}:{self.etcd_port}",
             "--advertise-client-urls", f"http://{HOST}:{self.etcd_port}",
             "--listen-peer-urls", f"http://{HOST}:{self.etcd_peer_port}",
             "--initial-advertise-peer-urls", f"http://{HOST}:{self.etcd_peer_port}",
             "--initial-cluster", f"drill=http://{HOST}:{self.etcd_peer_port}",
             "--initial-cluster-state", "new", "--log-level", "warn"],
            self.folder / "etcd.log")
        wait_for("etcd answers", self._etcd_answers, timeout)
        self.start_agent(self.nodes[0])
        wait_for("the first node leads", lambda: self.leader() is self.nodes[0], timeout)
        self.start_agent(self.nodes[1])
        if wait_standby:
            self.wait_synchronous(timeout)
        return self

    def _etcd_answers(self) -> bool:
        if self.etcd is not None and self.etcd.poll() is not None:
            raise ClusterError(f"etcd exited: {self._tail(self.folder / 'etcd.log')}")
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.etcd_port}/health",
                                        timeout=2) as answer:
                return bool(json.load(answer).get("health") == "true")
        except (OSError, ValueError):
            return False

    def start_agent(self, node: Node) -> None:
        """Start ``node``'s Patroni agent (which starts, or makes, its PostgreSQL)."""
        node.agent = self._spawn(["patroni", str(node.folder / "patroni.yml")], node.log)

    def _config(self, node: Node) -> str:
        """``node``'s Patroni configuration (JSON is YAML)."""
        parameters = {
            "wal_level": "replica", "hot_standby": "on", "wal_log_hints": "on",
            "max_wal_senders": 8, "max_replication_slots": 8, "max_connections": 300,
            "synchronous_commit": "on", "unix_socket_directories": str(node.folder),
            "shared_buffers": "64MB", "log_min_messages": "warning",
        }
        config = {
            "scope": self.scope, "name": node.name, "namespace": "/starfever-drill/",
            "restapi": {"listen": f"{HOST}:{node.api_port}",
                        "connect_address": f"{HOST}:{node.api_port}"},
            "etcd3": {"hosts": [f"{HOST}:{self.etcd_port}"]},
            "bootstrap": {
                "dcs": {"ttl": TTL_S, "loop_wait": LOOP_WAIT_S,
                        "retry_timeout": RETRY_TIMEOUT_S,
                        "maximum_lag_on_failover": 1048576,
                        "synchronous_mode": True, "synchronous_mode_strict": False,
                        "postgresql": {"use_pg_rewind": True, "use_slots": True,
                                       "parameters": parameters}},
                "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}, "data-checksums"],
            },
            "postgresql": {
                "listen": f"{HOST}:{node.pg_port}", "connect_address": f"{HOST}:{node.pg_port}",
                "data_dir": str(node.data_dir), "bin_dir": str(PG_BIN),
                "pgpass": str(node.folder / "pgpass"),
                "authentication": {"superuser": {"username": SYSTEM_USER},
                                   "replication": {"username": "replicator"}},
                "parameters": {"unix_socket_directories": str(node.folder)},
                "pg_hba": ["local all all trust", f"host all all {HOST}/32 trust",
                           f"host replication replicator {HOST}/32 trust"],
                # the standby's copy asks the primary for an immediate checkpoint: a spread
                # one paces its writes over most of checkpoint_timeout, and under a loaded
                # machine the copy then waited past the drill's 180 s (seen in a CI run)
                "basebackup": {"checkpoint": "fast"},
                "remove_data_directory_on_rewind_failure": True,
                "remove_data_directory_on_diverged_timelines": True,
            },
            "watchdog": {"mode": "off"},
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False,
                     "nosync": False},
        }
        return json.dumps(config, indent=2)

    # --- what the cluster looks like ---------------------------------------------------
    def leader(self) -> Node | None:
        """The node whose agent says it runs the primary, if exactly one does."""
        leading = [node for node in self.nodes
                   if (status := node.status()) is not None
                   and status.get("role") in ("master", "primary")
                   and status.get("state") == "running"]
        return leading[0] if len(leading) == 1 else None

    def members(self) -> list[dict[str, Any]]:
        """``GET /cluster`` of any agent that answers: each member's role and state."""
        for node in self.nodes:
            try:
                with urllib.request.urlopen(f"http://{HOST}:{node.api_port}/cluster",
                                            timeout=2) as answer:
                    return list(json.load(answer).get("members", []))
            except (OSError, ValueError):
                continue
        return []

    def synchronous(self) -> bool:
        """A leader runs and the other node streams from it as its synchronous standby,
        checked on the leader itself (``pg_stat_replication``): its commits wait for it."""
        leader = self.leader()
        if leader is None:
            return False
        rows = self.sql(leader, "SELECT count(*) FROM pg_stat_replication "
                                "WHERE sync_state = 'sync' AND state = 'streaming'")
        return rows == "1"

    def wait_synchronous(self, timeout: float = 180) -> Node:
        """Wait until :meth:`synchronous`; the leader."""
        wait_for("a leader with a synchronous standby", self.synchronous, timeout, every=0.3)
        leader = self.leader()
        assert leader is not None
        return leader

    def sql(self, node: Node, query: str, database: str = "postgres") -> str | None:
        """One query through ``psql`` on ``node``: its output, or ``None`` if it failed."""
        done = subprocess.run([str(PG_BIN / "psql"), "-X", "-A", "-t", "-q", "-h", HOST,
                               "-p", str(node.pg_port), "-U", SYSTEM_USER, "-d", database,
                               "-c", query], capture_output=True, text=True, timeout=30,
                              env={"PATH": "/usr/bin:/bin", "PGCONNECT_TIMEOUT": "3"})
        return done.stdout.strip() if done.returncode == 0 else None

    def create_database(self, name: str) -> None:
        """``CREATE DATABASE`` on the leader (replicated to the standby)."""
        leader = self.leader()
        if leader is None or self.sql(leader, f'CREATE DATABASE "{name}"') is None:
            raise ClusterError(f"could not create the database {name}")

    def url(self, database: str, **options: str) -> str:
        """The game servers' URL: both nodes, the one that takes writes chosen at each
        connection (``target_session_attrs=read-write``), a dead host given up after 2 s."""
        hosts = "&".join(f"host={HOST}:{node.pg_port}" for node in self.nodes)
        extra = "".join(f"&{key}={value}" for key, value in options.items())
        return (f"postgresql://{SYSTEM_USER}@/{database}?{hosts}"
                f"&target_session_attrs=read-write&connect_timeout=2{extra}")

    # --- failing it -------------------------------------------------------------------
    def kill(self, node: Node) -> float:
        """SIGKILL ``node`` whole (its agent, then its PostgreSQL's process group); the
        monotonic time when both signals were sent (PostgreSQL commits until its own: a time
        taken between the two would count those commits as after the kill)."""
        postmaster = node.postmaster_pid()
        if node.agent is not None:
            os.killpg(node.agent.pid, signal.SIGKILL)
        if postmaster is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(postmaster), signal.SIGKILL)
        killed_at = time.monotonic()
        if node.agent is not None:
            node.agent.wait()
            node.agent = None
        wait_for(f"{node.name}'s PostgreSQL is gone", lambda: node.postmaster_pid() is None, 30)
        return killed_at

    def rejoin(self, node: Node, timeout: float = 180) -> None:
        """Start ``node``'s agent again and wait until it is the leader's synchronous
        standby."""
        self.start_agent(node)
        wait_for(f"{node.name} streams as the synchronous standby",
                 lambda: self.synchronous() and self.leader() is not node, timeout, every=0.3)

    def stop(self) -> None:
        """End every process of the cluster and remove its folder."""
        for node in self.nodes:
            postmaster = node.postmaster_pid()
            if node.agent is not None and node.agent.poll() is None:
                os.killpg(node.agent.pid, signal.SIGKILL)
                node.agent.wait()
            node.agent = None
            if postmaster is not None:  # a fast shutdown (shared memory freed), then the kill
                try:
                    os.kill(postmaster, signal.SIGINT)
                    wait_for("PostgreSQL stops", partial(_stopped, node), 30)
                except (ProcessLookupError, ClusterError):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(os.getpgid(postmaster), signal.SIGKILL)
        if self.etcd is not None and self.etcd.poll() is None:
            os.killpg(self.etcd.pid, signal.SIGKILL)
            self.etcd.wait()
        self.etcd = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def logs(self, characters: int = 2000) -> str:
        """The end of every log of the cluster (for a failure's message)."""
        paths = [self.folder / "etcd.log", *(node.log for node in self.nodes)]
        return "\n".join(f"--- {path.name} ({path.parent.name})\n{self._tail(path, characters)}"
                         for path in paths if path.exists())

    @staticmethod
    def _tail(path: Path, characters: int = 2000) -> str:
        try:
            return path.read_text(errors="replace")[-characters:]
        except OSError:
            return ""

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


class Link:
    """A TCP proxy on 127.0.0.1 standing for the network path from game servers to their
    primary: :meth:`cut` drops every connection and refuses new ones (the primary died),
    :meth:`restore` lets them through again (a new primary answers at the same address);
    :meth:`cut_at_commit` cuts at the next group commit's ``COMMIT`` (``spin.transaction``: a
    message of ``EXECUTE sf_...`` statements that ends in ``COMMIT``), before it reaches the
    database or once the database has answered it, so whether it committed is unknown to the
    server. A test of the servers' side of a failover without Patroni."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._listener: socket.socket | None = None
        self._commit_cut: str | None = None
        self._skip = 0
        self._answer_dropped: socket.socket | None = None
        self.commits_cut = 0
        self.restore()

    def restore(self) -> None:
        """Accept connections again."""
        with self._lock:
            if self._listener is not None:
                return
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((HOST, self.port))
            listener.listen(64)
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Drop every connection and refuse new ones."""
        with self._lock:
            listener, self._listener = self._listener, None
            pairs, self._pairs = self._pairs, []
        if listener is not None:
            listener.close()
        for pair in pairs:
            for end in pair:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()

    def cut_at_commit(self, when: str, *, skip: int = 0) -> None:
        """At a group commit's ``COMMIT`` (the next, or the one after ``skip`` more):
        ``"before"`` it reaches the database, or ``"after"`` the database answered it (the
        answer is dropped); then :meth:`cut`."""
        assert when in ("before", "after")
        self._commit_cut, self._skip = when, skip

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection((HOST, self.target_port))
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    server.close()
                    return
                self._pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server, True),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False),
                             daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upstream: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if upstream and self._commit_cut and b"EXECUTE sf_" in chunk \
                        and chunk.rstrip(b"\x00").endswith(b"COMMIT"):
                    if self._skip:
                        self._skip -= 1
                    else:
                        when, self._commit_cut = self._commit_cut, None
                        self.commits_cut += 1
                        if when == "before":
                            self.cut()
                            return
                        self._answer_dropped = sink
                if not upstream and self._answer_dropped is source:
                    if b"COMMIT\x00" in chunk:  # its tag: committed; the answer never arrives
                        self._answer_dropped = None
                        self.cut()
                        return
                    continue
                sink.sendall(chunk)
        except OSError:
            pass
