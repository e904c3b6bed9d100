"""The user's cache folder: exact figures of models seen before, and numba's compiled kernels.

numba caches a compiled function beside its source (``__pycache__/*.nbi``, ``*.nbc``) whenever
that folder is writable, so an installed package collected files that no installer recorded:
``pip`` left them behind on the next install, and the folder they kept shadowed an editable
install (``No module named 'starfever.sim.cli'``), while ``starfever verify`` saw a package that
was no longer the one built. The package therefore points numba at this folder before numba is
imported (``starfever/__init__.py``), and an installed package is never written to
(ADR 0044). Standard library only: the rules core imports this package.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

NUMBA_CACHE_ENV = "NUMBA_CACHE_DIR"
"""numba's own setting: a folder the user chose wins over ours."""


def user_cache_dir() -> Path:
    """``$STARFEVER_CACHE_DIR``, else ``$XDG_CACHE_HOME/starfever``, else
    ``~/.cache/starfever``."""
    if os.environ.get("STARFEVER_CACHE_DIR"):
        return Path(os.environ["STARFEVER_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "starfever"


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def numba_cache_dir() -> Path:
    """Where numba keeps Star Fever's compiled kernels: ``<user cache>/numba``, or, when that
    cannot be written (a read-only home, a service account without one), a folder of this
    user's in the temporary directory."""
    preferred = user_cache_dir() / "numba"
    if _writable_dir(preferred):
        return preferred
    user = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return Path(tempfile.gettempdir()) / f"starfever-{user}" / "numba"


def use_user_numba_cache() -> None:
    """Point numba's cache at :func:`numba_cache_dir` unless ``$NUMBA_CACHE_DIR`` is set.

    numba reads the variable when it is first imported; if it already was (a program that
    imported numba before Star Fever), its configuration is set as well."""
    if os.environ.get(NUMBA_CACHE_ENV):
        return
    folder = str(numba_cache_dir())
    os.environ[NUMBA_CACHE_ENV] = folder  # also for worker processes started from here
    config = sys.modules.get("numba.core.config")
    if config is not None and not getattr(config, "CACHE_DIR", ""):
        config.CACHE_DIR = folder  # type: ignore[attr-defined]
