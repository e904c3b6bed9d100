"""The settlers' turn on one host (ADR 0028): one group commit of spins at a time across the
processes that settle into one database, so that a settler waits for its turn *before* it
takes the spins queued in its process, and takes all that arrived meanwhile.

A fair turnstile of two ``flock`` files: a waiter holds the gate while it waits for the turn,
so the process that just had the turn cannot take it again before the waiter has (a plain
lock let one process win it again and again: the other's spins waited several turns). The
kernel releases both if a process dies, and a watchdog thread lets the turn go if a batch
holds it longer than :data:`HOLD_LIMIT_S` (a connection stalled in the network, say), so a
stuck process holds up the others' settling for a bounded time only.

The files live in a directory of the user's own (``<tmp>/starfever-<uid>``, mode 0700,
checked): a file another user could open would let them hold the turn. Where the turn cannot
be had (no such directory, no ``flock``, a failed lock), it covers this process's threads
only: the database's row locks keep the settlement right either way; the turn only makes the
batches larger.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

try:
    import fcntl
except ImportError:  # not on Windows
    fcntl = None  # type: ignore[assignment]

HOLD_LIMIT_S = 1.0
"""A batch that holds the turn longer than this loses it (the watchdog checks twice as
often); batches take milliseconds."""

_log = logging.getLogger("starfever.db")


class SettleTurn:
    """The turn of the settlers of the database ``key`` names (``None``: this process's
    threads only)."""

    def __init__(self, key: str | None) -> None:
        self._threads = threading.Lock()
        """One settling thread at a time in this process (held while waiting for the turn)."""
        self._meta = threading.Lock()
        """Guards the holding state between the holder and the watchdog."""
        self._key = key if fcntl is not None else None
        self._paths: tuple[str, str] | None = None
        self._fds: tuple[int, int] | None = None
        self._pid = 0
        self._held_since: float | None = None
        self._watchdog_pid = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the turn for the block (or, where it cannot be had, this process's share)."""
        with self._threads:
            turn = self._take()
            try:
                yield
            finally:
                if turn is not None:
                    with self._meta:
                        if self._held_since is not None:  # not taken back by the watchdog
                            self._held_since = None
                            fcntl.flock(turn, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the lock files. Waits a moment at most for a settler still holding or
        waiting for the turn (shutting down must not hang on it: the files then close with
        the process)."""
        if not self._threads.acquire(timeout=1.0):
            return
        try:
            with self._meta:
                if self._fds is not None and self._pid == os.getpid():
                    for fd in self._fds:
                        os.close(fd)
                self._fds = None
        finally:
            self._threads.release()

    def _take(self) -> int | None:
        """Wait for the turn; the turn file's descriptor, or ``None`` without one."""
        try:
            files = self._files()
            if files is None:
                return None
            gate, turn = files
            fcntl.flock(gate, fcntl.LOCK_EX)
            try:
                fcntl.flock(turn, fcntl.LOCK_EX)
            finally:
                fcntl.flock(gate, fcntl.LOCK_UN)
        except Exception as error:  # never a reason to leave spins unsettled
            _log.warning("settlers take turns within this process only: %s", error)
            self._key, self._paths = None, None  # and do not try again
            return None
        with self._meta:
            self._held_since = time.monotonic()
            if self._watchdog_pid != os.getpid():
                self._watchdog_pid = os.getpid()
                threading.Thread(target=self._watch, name="starfever-settle-turn",
                                 daemon=True).start()
        return turn

    def _watch(self) -> None:
        """Let the turn go when a batch has held it past :data:`HOLD_LIMIT_S` (another
        thread may unlock it: a ``flock`` belongs to the open file, not to a thread)."""
        while True:
            time.sleep(HOLD_LIMIT_S / 2)
            with self._meta:
                if self._fds is None:
                    return
                since = self._held_since
                if since is not None and time.monotonic() - since > HOLD_LIMIT_S:
                    self._held_since = None
                    fcntl.flock(self._fds[1], fcntl.LOCK_UN)
                    _log.warning("a batch held the settlers' turn over %.1f s: let go, the "
                                 "other processes settle meanwhile", HOLD_LIMIT_S)

    def _files(self) -> tuple[int, int] | None:
        if self._key is not None and self._paths is None:  # first use: a process that never
            folder = _private_folder()                       # settles makes no folder
            if folder is not None:
                name = hashlib.sha256(self._key.encode()).hexdigest()[:24]
                base = os.path.join(folder, f"settle-{name}")
                self._paths = (f"{base}.gate", f"{base}.turn")
            self._key = None
        if self._paths is None:
            return None
        if self._fds is None or self._pid != os.getpid():  # not a forked parent's
            opened: list[int] = []
            try:
                for path in self._paths:
                    opened.append(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
                                          | os.O_CLOEXEC, 0o600))
            except OSError:
                for fd in opened:
                    os.close(fd)
                raise
            with self._meta:
                self._fds, self._pid = (opened[0], opened[1]), os.getpid()
        return self._fds


def _private_folder() -> str | None:
    """``<tmp>/starfever-<uid>``, made if missing; ``None`` unless it is a directory (not a
    link) of this user's that no one else may enter."""
    try:
        folder = os.path.join(tempfile.gettempdir(), f"starfever-{os.getuid()}")
        with suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        found = os.lstat(folder)
    except OSError as error:  # (no usable temporary directory at all, too)
        _log.warning("settlers take turns within this process only: %s", error)
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() \
            or found.st_mode & 0o077:
        _log.warning("settlers take turns within this process only: %s is not a private "
                     "directory of this user's", folder)
        return None
    return folder


__all__ = ["HOLD_LIMIT_S", "SettleTurn"]
