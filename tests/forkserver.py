"""A fork server for the suite's own ``starfever`` processes in test mode (ADR 0084).

The suite starts about 250 ``starfever serve`` and ``operator-wallet-demo`` processes; a
second of each start's two (on two idle cores) is importing FastAPI, SQLAlchemy, pydantic,
uvicorn and the server's own modules. A fork server, one per test process and started on first
use, imports them once, then forks a child for each command asked of it. The child takes the
asked environment, working folder and log, and runs ``python -m starfever.cli ARGS`` as the
interpreter does (:func:`runpy.run_module` as ``__main__``, then the interpreter's own exit):
everything from the command's ``main()`` on is the real command in a real process of its own,
with its own pid, signals and exit status. Only the imports are not repeated; a start's
imports stay proven by every command the suite runs as a fresh process (the quick start, the
production servers, :func:`tests.harness.run_cli`), and ``STARFEVER_TEST_FORKS=0`` runs the
whole suite without the fork server (the benchmarks never use it).

Protocol: JSON lines. The test process writes a request ``{"args", "env", "cwd", "log",
"new_session"}`` to the fork server's stdin; the fork server answers ``{"started": PID}`` on
its stdout, and ``{"exited": PID, "code": CODE}`` when that child ends (``CODE`` as
:attr:`subprocess.Popen.returncode` gives it: negative for a signal). When its stdin closes
(the test process ended), it kills the children left and ends.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from queue import Empty, Queue
from typing import Any

# (imports no prometheus_client: the fork server sets the variable before that import)
from starfever.server.cli import MULTIPROCESS_ENV

ROOT = Path(__file__).resolve().parents[1]
FORKS_ENV = "STARFEVER_TEST_FORKS"

PRELOADED = (
    # what ``starfever serve`` imports before it serves (starfever/server/cli.py) and what
    # uvicorn imports as it starts; the reference wallet's command
    "starfever.cli", "starfever.server.cli", "starfever.server.app", "starfever.server.db",
    "starfever.server.identity", "starfever.server.logs", "starfever.server.services.anchor",
    "starfever.server.services.events", "starfever.server.services.jackpot",
    "starfever.server.services.readiness", "starfever.server.spin.transaction",
    "starfever.server.transport", "starfever.engine.model", "starfever.markets",
    "starfever.currencies", "starfever.seamless.cli", "uvicorn", "uvicorn.server",
    "uvicorn.lifespan.on", "uvicorn.loops.auto", "uvicorn.protocols.http.auto",
    "uvicorn.protocols.websockets.auto", "alembic.command", "alembic.config",
)

_PARENT_PID = os.getpid()
"""The fork server's own pid (a child on its way out leaves the server's things alone)."""


def enabled() -> bool:
    """Whether the harness forks its test-mode commands: ``STARFEVER_TEST_FORKS=1``, which the
    test suite sets unless it is given (``0``: never). The benchmarks and the screenshots,
    which use the harness too, start every command as a fresh interpreter."""
    return os.environ.get(FORKS_ENV) == "1"


# --- the fork server's side ------------------------------------------------------------------

def serve_forks() -> None:
    """Import :data:`PRELOADED`, then fork a child for each request on stdin (never returns in
    a child: the command's exit ends it)."""
    replies = os.dup(1)
    os.dup2(2, 1)  # a stray print of an import must not corrupt the replies
    # prometheus_client chooses its multiprocess mode when it is imported, and ``serve`` gives
    # every server a metrics directory before it imports it: so does this process (its
    # children's counters reopen their files in their own directory, as after any fork)
    metrics = tempfile.mkdtemp(prefix="starfever-forkserver-metrics-")
    os.environ[MULTIPROCESS_ENV] = metrics
    for name in PRELOADED:
        importlib.import_module(name)
    del os.environ[MULTIPROCESS_ENV]
    children: dict[int, int] = {}
    pending = b""
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, None)
    try:
        while True:
            for key, _ in selector.select():
                if key.data is None:
                    chunk = os.read(0, 1 << 16)
                    if not chunk:
                        return
                    pending += chunk
                    while b"\n" in pending:
                        line, pending = pending.split(b"\n", 1)
                        request = json.loads(line)
                        if threading.active_count() != 1:
                            raise RuntimeError("a thread started in the fork server")
                        pid = os.fork()
                        if pid == 0:
                            selector.close()
                            for fd in (replies, *children.values()):
                                os.close(fd)
                            _become(request)  # raises SystemExit: the child never comes back
                        pidfd = os.pidfd_open(pid)
                        children[pid] = pidfd
                        selector.register(pidfd, selectors.EVENT_READ, pid)
                        _reply(replies, {"started": pid})
                else:
                    pid = key.data
                    _, status = os.waitpid(pid, 0)
                    selector.unregister(key.fd)
                    os.close(children.pop(pid))
                    _reply(replies, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})
    finally:
        if os.getpid() == _PARENT_PID:
            for pid in children:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            shutil.rmtree(metrics, ignore_errors=True)


def _reply(fd: int, message: Mapping[str, Any]) -> None:
    os.write(fd, json.dumps(message).encode() + b"\n")


def _become(request: Mapping[str, Any]) -> None:
    """In the child: take the request's session, streams, folder and environment, and run
    ``python -m starfever.cli ARGS`` as the interpreter would (its exit ends the process)."""
    if request["new_session"]:
        os.setsid()
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    sys.path[0] = os.getcwd()  # as ``python -m`` puts it
    sys.argv = ["-m", *request["args"]]  # run_module puts the module's file first
    # as in a fresh interpreter, the command's module is not imported before it runs as
    # ``__main__`` (a module imported later under its name is another one, as there)
    sys.modules.pop("starfever.cli", None)
    runpy.run_module("starfever.cli", run_name="__main__", alter_sys=True)
    raise SystemExit(0)  # (the module's own ``sys.exit(main())`` ends it first)


# --- the test process's side -----------------------------------------------------------------

class ForkedProcess:
    """A child of the fork server, with the part of :class:`subprocess.Popen`'s interface the
    harness uses (the fork server reaps it and reports its exit status)."""

    def __init__(self, server: ForkServer, pid: int, args: Sequence[str]) -> None:
        self.server = server
        self.pid = pid
        self.args = list(args)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # (an ended child's pid may be another process's by now)
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """The test process's fork server: a :mod:`tests.forkserver` process and the thread that
    reads its answers."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "tests.forkserver"], cwd=ROOT,
                                        env=dict(env), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
        self._requests = threading.Lock()
        self._started: Queue[dict[str, Any]] = Queue()
        self._ended = threading.Condition()
        self._exits: dict[int, int] = {}
        self._gone = False
        threading.Thread(target=self._read, name="forkserver", daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if "exited" in message:
                with self._ended:
                    self._exits[message["exited"]] = message["code"]
                    self._ended.notify_all()
            else:
                self._started.put(message)
        with self._ended:
            self._gone = True
            self._ended.notify_all()
        self._started.put({})

    @property
    def alive(self) -> bool:
        return not self._gone and self.process.poll() is None

    def spawn(self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, log: Path,
              new_session: bool = False) -> ForkedProcess:
        """``python -m starfever.cli ARGS`` as a child with ``env``, in ``cwd``, its output
        appended to ``log`` (in a session of its own if ``new_session``)."""
        request = {"args": list(args), "env": dict(env), "cwd": str(cwd), "log": str(log),
                   "new_session": new_session}
        assert self.process.stdin is not None
        with self._requests:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
            try:
                answer = self._started.get(timeout=120)
            except Empty:  # a late answer would be taken for the next request's: done with it
                self.process.kill()
                answer = {}
        if "started" not in answer:
            raise RuntimeError("the fork server did not start the command (it ended?)")
        return ForkedProcess(self, int(answer["started"]), ["starfever", *args])

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit status once it has ended (``None`` if it runs ``timeout`` s on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._ended:
            while pid not in self._exits:
                if self._gone:
                    raise RuntimeError("the fork server ended before its child")
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._ended.wait(left)
            return self._exits[pid]

    def close(self) -> None:
        """End the fork server (and any child it still has)."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


_SERVER: ForkServer | None = None
_SERVER_LOCK = threading.Lock()


def spawn(args: Sequence[str], *, env: Mapping[str, str], cwd: Path, log: Path,
          new_session: bool = False) -> ForkedProcess:
    """:meth:`ForkServer.spawn` on this test process's fork server (started on first use,
    again if it has ended); the fork server's own environment is ``env`` without the
    ``STARFEVER_*`` settings."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER.alive:
            _SERVER = ForkServer({k: v for k, v in env.items() if not k.startswith("STARFEVER_")})
        server = _SERVER
    return server.spawn(args, env=env, cwd=cwd, log=log, new_session=new_session)


def close() -> None:
    """End this test process's fork server, if it started one."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is not None:
            _SERVER.close()
            _SERVER = None


if __name__ == "__main__":
    serve_forks()
