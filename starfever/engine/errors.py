"""The one base of every error a user's input can cause.

The command line shows such an error as one line and exits 2; anything else that escapes a
command is a bug in Star Fever and is reported as one (traceback, exit 70).
"""

from __future__ import annotations


class InputError(ValueError):
    """Input the project refuses (a grid, a bet, a model file, a setting, a command option);
    the message says what was wrong and quotes it."""


__all__ = ["InputError"]
