"""SQLite writers queue on one lock across threads and processes (db.WriteLock) instead of
polling SQLite's busy handler; a writer that holds it keeps every other one out."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from sqlalchemy import text

from starfever.server.db import Database, WriteLock

HOLDER = """
import sys, time
from starfever.server.db import WriteLock
lock = WriteLock(sys.argv[1])
with lock.held():
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_a_second_process_waits_for_the_holder_and_then_gets_in(tmp_path: Path) -> None:
    path = str(tmp_path / "game.db")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, path, "0.6"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with WriteLock(path).held():
            waited = time.monotonic() - started
            assert holder.poll() is not None or holder.wait(timeout=5) == 0  # it let go first
    finally:
        holder.kill()
        holder.wait()
    assert waited >= 0.3


def test_threads_take_turns_and_one_thread_may_nest(tmp_path: Path) -> None:
    lock = WriteLock(str(tmp_path / "game.db"))
    inside = 0
    most = 0
    guard = threading.Lock()

    def writer() -> None:
        nonlocal inside, most
        for _ in range(20):
            with lock.held(), lock.held():  # nested in one thread: no deadlock
                with guard:
                    inside += 1
                    most = max(most, inside)
                time.sleep(0.001)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert most == 1
    lock.close()


def test_database_writes_queue_on_the_lock_and_reads_do_not(tmp_path: Path) -> None:
    file = tmp_path / "game.db"
    db = Database(f"sqlite:///{file}")
    try:
        with db.write() as session:
            session.execute(text("CREATE TABLE t (n INTEGER)"))
        taken, release = threading.Event(), threading.Event()

        def other_writer() -> None:  # e.g. another worker process between its transactions
            with WriteLock(str(file)).held():
                taken.set()
                release.wait(5)

        thread = threading.Thread(target=other_writer)
        thread.start()
        taken.wait(5)
        with db.read() as session:  # readers never wait
            assert session.execute(text("SELECT count(*) FROM t")).scalar_one() == 0
        threading.Timer(0.3, release.set).start()
        started = time.monotonic()
        with db.write() as session:  # SQLite itself is not locked: only the WriteLock waits
            waited = time.monotonic() - started
            session.execute(text("INSERT INTO t VALUES (1)"))
        thread.join()
        assert waited >= 0.25
        with db.read() as session:
            assert session.execute(text("SELECT n FROM t")).scalars().all() == [1]
    finally:
        db.dispose()
