"""The server's one clock (ADR 0041): every time rule of the server reads :func:`now` (through
``services.errors.utcnow``) or :func:`now_ms` (pacing) — the reality check, the log-in
throttles and lock-outs, the round pacing, token and launch expiry, a raised limit's 72 hours,
the operator's TOTP steps.

In production it is the system clock. A test moves it instead of sleeping:

- in process, with :func:`advance` (the clock keeps running, shifted) or :func:`freeze` (it
  stands at one instant until moved), and :func:`reset` afterwards;
- in a real server process, through the file named by ``STARFEVER_TEST_CLOCK_FILE``: it holds
  the shift in milliseconds, and the server reads it at every reading of the clock. That
  setting is refused unless ``STARFEVER_TEST_MODE=1`` in development (``Settings.check``), so
  no production server can be told what time it is. Tests write the file with
  :func:`write_shift`.

Measured durations (timeouts, drains, batch lingers) read ``time.monotonic`` and are not
this clock: they count the real seconds a process waits, which no test may shorten.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

_shift = timedelta(0)
"""How far this process has moved the clock (tests, in process)."""
_frozen: datetime | None = None
"""The instant the clock stands at, when frozen (tests, in process)."""
_file: Path | None = None
"""The test clock file a test server follows (``STARFEVER_TEST_CLOCK_FILE``)."""


def now() -> datetime:
    """Now, in UTC: the system clock, moved by a test if one has moved it."""
    base = _frozen if _frozen is not None else datetime.now(UTC)
    if _file is not None:
        return base + _shift + _shift_in_file(_file)
    return base + _shift


def now_ms() -> int:
    """:func:`now` in milliseconds since the epoch."""
    return int(now().timestamp() * 1000)


def advance(seconds: float) -> None:
    """Move this process's clock ``seconds`` on (tests)."""
    global _shift
    _shift += timedelta(seconds=seconds)


def freeze(at: datetime | None = None) -> datetime:
    """Stop this process's clock at ``at`` (aware; default: now); :func:`advance` still moves
    it. Returns the instant it stands at (tests)."""
    global _frozen, _shift
    instant = now() if at is None else at
    if instant.tzinfo is None:
        raise ValueError("freeze() takes an aware datetime, e.g. datetime(..., tzinfo=UTC)")
    _frozen, _shift = instant, timedelta(0)
    return instant


def reset() -> None:
    """The system clock again, as in production (tests)."""
    global _shift, _frozen
    _shift, _frozen = timedelta(0), None


def follow_file(path: str | None) -> None:
    """Read the clock's shift from ``path`` from now on (``None``: stop). Only a test server
    calls this: ``create_app`` does when the checked settings name a test clock file."""
    global _file
    _file = Path(path) if path else None


def _shift_in_file(path: Path) -> timedelta:
    """The shift written in ``path`` (read at every reading of the clock: a few microseconds,
    and only on a test server); none while the file is missing."""
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return timedelta(0)
    return timedelta(milliseconds=int(text or 0))


def write_shift(path: str | Path, seconds: float) -> None:
    """Set the shift of the server that follows ``path`` to ``seconds`` (tests). The file is
    replaced in one step, so a reader never sees half of it."""
    target = Path(path)
    temporary = target.with_name(target.name + f".{os.getpid()}.tmp")
    temporary.write_text(str(round(seconds * 1000)))
    os.replace(temporary, target)


__all__ = ["advance", "follow_file", "freeze", "now", "now_ms", "reset", "write_shift"]
