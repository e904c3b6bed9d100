"""How long the disk takes to make a write durable: what every committed batch of spins waits
for (PostgreSQL flushes its WAL at each commit; ``synchronous_commit`` stays on, ADR 0009).
Not a test: prints one line.

An 8 KiB write and ``fdatasync`` every 2 ms for ``--seconds``, in a file of its own in the
directory given, by default PostgreSQL's data directory (asked of ``STARFEVER_TEST_PG``,
default 127.0.0.1:5432) where this user may write there, else the temporary directory; then
the latencies' median, 99th and 99.9th percentiles, the largest, and how many took over
50 ms. On the virtual machines of the README's figures a flush took 0.3 ms at the median but
now and then 100-400 ms, and each such stall holds every worker's commit (and the €€€ pool's
lock) that long: it sets the load test's p99, not the server's CPU.

    python benchmarks/fsync.py [--dir DIR] [--seconds S]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from starfever.server.db import sqlalchemy_url

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


def _postgres_data_directory() -> str | None:
    """PostgreSQL's data directory, if the server answers and says (a superuser's setting)."""
    url = os.environ.get("STARFEVER_TEST_PG") or DEFAULT_POSTGRES
    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            return str(conn.execute(text("SHOW data_directory")).scalar_one())
    except SQLAlchemyError:  # no server, or not allowed to see it: the default
        return None
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="where to write (default: PostgreSQL's data directory)")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    folder = args.dir or _postgres_data_directory()
    if folder is None or not os.access(folder, os.W_OK):
        folder = tempfile.gettempdir()
    path = os.path.join(folder, f"starfever-fsync-probe-{os.getpid()}")
    block = os.urandom(8192)
    latencies: list[float] = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            os.pwrite(fd, block, (len(latencies) % 64) * len(block))
            started = time.perf_counter()
            os.fdatasync(fd)
            latencies.append(time.perf_counter() - started)
            time.sleep(0.002)
    finally:
        os.close(fd)
        os.unlink(path)
    latencies.sort()
    n = len(latencies)

    def ms(seconds: float) -> str:
        return f"{seconds * 1e3:.2f} ms"

    print(f"fdatasync of 8 KiB in {folder}: {n} flushes in {args.seconds:.0f} s, median "
          f"{ms(statistics.median(latencies))}, p99 {ms(latencies[int(n * 0.99)])}, p99.9 "
          f"{ms(latencies[int(n * 0.999)])}, max {ms(latencies[-1])}, over 50 ms: "
          f"{sum(1 for t in latencies if t > 0.05)} (load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
