"""The developer's profiling switch (``STARFEVER_PROFILE``): off unless set, and when set every
thread's CPU time lands in one file per process (run in a subprocess: it hooks every thread)."""

from __future__ import annotations

import os
import pstats
import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import threading
from starfever.server import profiling

where = profiling.start()
print(where)

def busy_in_a_thread():
    return sum(i * i for i in range(300_000))

thread = threading.Thread(target=busy_in_a_thread)
thread.start()
thread.join()
if where is not None:
    print(profiling.write(where))
"""


def _run(env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60, check=True)
    return done.stdout.split()


def test_the_profile_holds_every_threads_cpu_time_in_one_file(tmp_path: Path) -> None:
    lines = _run({"STARFEVER_PROFILE": str(tmp_path / "prof")})
    written = Path(lines[-1])
    assert written.parent == tmp_path / "prof" and written.name.startswith("server-")
    stats = pstats.Stats(str(written)).stats  # type: ignore[attr-defined]
    busy = [value for key, value in stats.items() if key[2] == "busy_in_a_thread"]
    assert len(busy) == 1 and busy[0][3] > 0  # the thread's own work, with its CPU time


def test_the_profile_is_off_unless_asked_for() -> None:
    env = {k: v for k, v in os.environ.items() if k != "STARFEVER_PROFILE"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    assert done.stdout.split() == ["None"]
