"""The user's cache folder, and numba's compiled kernels kept there instead of in the installed
package (ADR 0044). The whole path, install to every command, is tests/test_quick_start.py."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from starfever import user_cache


def test_the_cache_folder_is_ours_then_xdg_then_home(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path / "own"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache.user_cache_dir() == tmp_path / "own"
    monkeypatch.delenv("STARFEVER_CACHE_DIR")
    assert user_cache.user_cache_dir() == tmp_path / "xdg" / "starfever"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache.user_cache_dir() == tmp_path / "home" / ".cache" / "starfever"


def test_numba_goes_to_the_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path))
    assert user_cache.numba_cache_dir() == tmp_path / "numba"
    assert (tmp_path / "numba").is_dir()


def test_an_unwritable_cache_folder_falls_back_to_the_temporary_folder(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(blocker / "cache"))  # cannot be made
    folder = user_cache.numba_cache_dir()
    assert folder.parent.parent == Path(tempfile.gettempdir())
    assert folder.name == "numba" and folder.parent.name.startswith("starfever-")


def test_a_numba_cache_the_user_chose_is_kept(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path / "ours"))
    user_cache.use_user_numba_cache()
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "mine")


def test_numba_imported_first_is_pointed_at_the_user_cache(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    from numba.core import config

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("STARFEVER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(config, "CACHE_DIR", "")
    user_cache.use_user_numba_cache()
    assert config.CACHE_DIR == os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "numba")  # type: ignore[attr-defined]


@pytest.mark.parametrize("numba_first", [False, True])
def test_a_new_process_sets_numba_before_compiling(tmp_path: Path, numba_first: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["STARFEVER_CACHE_DIR"] = str(tmp_path)
    order = "import numba, starfever" if numba_first else "import starfever, numba"
    out = subprocess.run([sys.executable, "-c", f"{order}; print(numba.config.CACHE_DIR)"],
                         env=env, capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == str(tmp_path / "numba")
