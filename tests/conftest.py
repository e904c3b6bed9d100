"""Shared helpers: run the real ``starfever`` command line in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import pytest


def run_cli(args: Sequence[str], stdin: str = "",
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``python -m starfever.cli ARGS`` and capture its output."""
    return subprocess.run([sys.executable, "-m", "starfever.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture
def cli() -> object:
    return run_cli
