"""Byte code is part of what runs (ADR 0050): in a package folder, every ``.pyc`` must be the
faithful compile of the source beside it, whatever its header claims; the software check names
any other and hashes it into the build hash. And the environment seal's comparison names each
kind of difference. Fast, on throw-away folders (the attacks on a real install are in
``test_software.py``)."""

from __future__ import annotations

import importlib.util
import marshal
import py_compile
import sys
from pathlib import Path

from starfever.certify import environment, software
from starfever.certify.manifest import (
    faithful_bytecode,
    sha256_of,
    unfaithful_bytecode,
    write_software_manifest,
)

TAG = sys.implementation.cache_tag


def _package(root: Path) -> Path:
    """A package folder with two modules, compiled every way Python writes byte code."""
    (root / "sub").mkdir(parents=True)
    (root / "game.py").write_text("def rtp() -> float:\n    assert True\n    return 0.955\n")
    (root / "sub" / "__init__.py").write_text("LIMIT = 10\n")
    for source in (root / "game.py", root / "sub" / "__init__.py"):
        py_compile.compile(str(source), doraise=True)  # timestamp
        py_compile.compile(str(source), doraise=True, optimize=1)
        py_compile.compile(str(source), doraise=True, optimize=2,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    write_software_manifest(root, "0.1.0")
    return root


def _forge(source: Path, edited: str) -> Path:
    """Byte code of ``edited`` where Python looks for ``source``'s, stamped with the real
    source's mtime and size (so Python would run it)."""
    stat = source.stat()
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.write_bytes(importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
                    + (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                    + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little")
                    + marshal.dumps(compile(edited, str(source), "exec")))
    return pyc


def test_faithful_byte_code_of_every_kind_passes(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    compiled = sorted(root.rglob("*.pyc"))
    assert len(compiled) == 6 and all(faithful_bytecode(p) for p in compiled)
    assert unfaithful_bytecode(root) == {}
    checked = software.check(root)
    assert checked.ok, checked.differences()
    assert checked.build_sha256 == sha256_of((root / "software-manifest.json").read_bytes())


def test_forged_byte_code_fails_the_software_check_and_changes_the_build_hash(
        tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    certified = sha256_of((root / "software-manifest.json").read_bytes())
    pyc = _forge(root / "game.py", "def rtp() -> float:\n    return 0.940\n")
    rel = f"__pycache__/game.{TAG}.pyc"
    assert pyc == root / rel
    assert list(unfaithful_bytecode(root)) == [rel]
    checked = software.check(root)
    assert not checked.ok
    assert checked.differences() == [f"byte code that is not the compile of its source: {rel}"]
    assert checked.build_sha256 != certified  # a round would not bear the certified hash


def test_stray_byte_code_is_named_wherever_it_lies(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    code = marshal.dumps(compile("PAYS = 10**6\n", "x", "exec"))
    good = (root / "__pycache__" / f"game.{TAG}.pyc").read_bytes()[:16]
    strays = {f"__pycache__/gone.{TAG}.pyc",  # no source: never loaded, still refused
              "sub/evil.pyc",  # sourceless, beside the sources: importable as sub.evil
              "__pycache__/game.cpython-30.pyc",  # another interpreter's
              "__pycache__/game.pyo"}
    for rel in strays:
        (root / rel).write_bytes(good + code)
    (root / "sub" / "__pycache__" / f"__init__.{TAG}.pyc").write_bytes(b"junk")  # unreadable
    assert set(unfaithful_bytecode(root)) == strays | {f"sub/__pycache__/__init__.{TAG}.pyc"}


def test_the_seal_comparison_names_every_kind_of_difference() -> None:
    now = environment.found()
    sealed = {**now, "interpreter": {**now["interpreter"], "version": "3.0.0"},
              "variables": {**now["variables"], "PYTHONSTARTUP": "/tmp/start.py"},
              "paths": [*now["paths"], "/elsewhere"],
              "hooks": {k: v for k, v in list(now["hooks"].items())[1:]},
              "distributions": {k: {**v, "version": "0"} for k, v in now["distributions"].items()}}
    lines = environment.compare(sealed, now)
    assert f"interpreter version: {sys.version} (sealed: 3.0.0)" in lines
    assert any(line.startswith("variable PYTHONSTARTUP: ") for line in lines)
    assert any(line.startswith("sys.path: ") for line in lines)
    if now["hooks"]:
        assert f"start-up hook not in the seal: {next(iter(now['hooks']))}" in lines
    assert sum(line.startswith("distribution changed: ") for line in lines) == len(
        now["distributions"])
    assert environment.compare(now, now) == []
