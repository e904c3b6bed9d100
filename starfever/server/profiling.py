"""A developer's switch: ``STARFEVER_PROFILE=DIR`` profiles a server process with cProfile.

Every thread of the process (the event loop, the settler, the acknowledger, the threads of
``asyncio.to_thread``) gets its own :class:`cProfile.Profile` timed by the thread's CPU clock
(``time.thread_time``), so waiting on a socket or a lock costs nothing in the figures and
what is left is where the process spends its CPU. At the app's shutdown the profiles are
merged and written to ``DIR/server-PID.prof`` (read it with ``python -m pstats``). For
``benchmarks/load.py --profile DIR``; never on in production (it slows a spin about twofold).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from types import FrameType
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()


def _new_profile() -> cProfile.Profile:
    profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(profile)
    return profile


def _start_in_thread(frame: FrameType, event: str, arg: Any) -> None:
    """The first profiler call of a new thread: replace itself by that thread's profile."""
    sys.setprofile(None)
    _new_profile().enable()


def start() -> Path | None:
    """Profile this process and every thread it starts from now on, if ``STARFEVER_PROFILE``
    names a directory; the directory, or None."""
    where = os.environ.get("STARFEVER_PROFILE")
    if not where:
        return None
    threading.setprofile(_start_in_thread)
    _new_profile().enable()
    return Path(where)


def write(directory: Path) -> Path:
    """Merge every thread's profile so far into ``directory/server-PID.prof``."""
    directory.mkdir(parents=True, exist_ok=True)
    with _lock:
        profiles = list(_profiles)
    stats: pstats.Stats | None = None
    for profile in profiles:
        profile.snapshot_stats()
        if not getattr(profile, "stats", None):
            continue
        if stats is None:
            stats = pstats.Stats(profile)
        else:
            stats.add(profile)
    path = directory / f"server-{os.getpid()}.prof"
    if stats is not None:
        stats.dump_stats(str(path))
    return path


def writing_at_shutdown(lifespan: Callable[[Any], AbstractAsyncContextManager[Any]],
                        directory: Path) -> Callable[[Any], AbstractAsyncContextManager[Any]]:
    """``lifespan`` that writes the profiles when the app shuts down."""
    @asynccontextmanager
    async def wrapped(app: Any) -> AsyncIterator[Any]:
        async with lifespan(app) as state:
            yield state
        write(directory)

    return wrapped


__all__ = ["start", "write", "writing_at_shutdown"]
