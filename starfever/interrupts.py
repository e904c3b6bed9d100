"""Ctrl-C that cannot be lost. Python turns SIGINT into a KeyboardInterrupt wherever the main
thread happens to be; when that is inside a callback the interpreter runs for itself (a weakref
callback of the import system, a ``__del__``), the exception is printed as "Exception ignored"
and the command goes on as if nothing happened, to write its output and exit 0. The handler
installed here records the signal as well as raising, and a command checks the record with
:func:`check` before it commits what it made, so a swallowed interruption still stops it."""

from __future__ import annotations

import signal
from types import FrameType

_received = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = True
    raise KeyboardInterrupt


def install() -> None:
    """Record every SIGINT from now on (and raise KeyboardInterrupt, as Python's own handler)."""
    global _received
    _received = False
    signal.signal(signal.SIGINT, _on_sigint)


def check() -> None:
    """Raise KeyboardInterrupt if a SIGINT came since :func:`install`, even one whose
    exception was swallowed on the way."""
    if _received:
        raise KeyboardInterrupt
