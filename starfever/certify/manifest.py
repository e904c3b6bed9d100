"""Manifests of files with their SHA-256: the software manifest of the package (made at build
time by ``setup.py`` and shipped inside it) and the manifest of a certification bundle.

Standard library only, and importable on its own (``setup.py`` loads this file by path while
the package is being built, before any dependency is installed).

Run as a script, it checks a package folder on its own, importing nothing of the installed
package (ADR 0050): ``python -I -S -B manifest.py SITE/starfever [MANIFEST]`` from a trusted
copy (the certified source, not the install it checks) compares every file with the manifest
(default: the folder's own) and every ``.pyc`` with its source; exit 0, or 1 naming each
difference.

A manifest is canonical JSON (sorted keys, no spaces, ASCII, one trailing newline), so the
same files give the same bytes on every machine and its SHA-256 names them: the software
manifest's SHA-256 is the *build hash* that every round records (ADR 0020).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SOFTWARE_FORMAT = "starfever-software-manifest-v1"
BUNDLE_FORMAT = "starfever-bundle-manifest-v1"
SOFTWARE_MANIFEST = "software-manifest.json"
"""The software manifest's file name inside the package folder (``starfever/``)."""
ENVIRONMENT_MANIFEST = "environment-manifest.json"
"""The environment seal's file name inside the package folder (written at deployment by
``starfever seal``, ADR 0050; not a file of the build)."""
SKIPPED_DIRS = frozenset({"__pycache__"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")
CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def package_files(root: Path) -> Iterator[tuple[str, Path]]:
    """Every file of the package folder ``root`` as (POSIX path relative to it, path), sorted:
    all of it (engine, math, models, server, migrations, web client, ...) except byte-code
    caches (checked against their sources instead: :func:`unfaithful_bytecode`), the software
    manifest itself and the environment seal."""
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part in SKIPPED_DIRS for part in rel.parts[:-1]) or path.is_dir():
            continue
        if path.suffix in SKIPPED_SUFFIXES or rel.as_posix() in (SOFTWARE_MANIFEST,
                                                                  ENVIRONMENT_MANIFEST):
            continue
        found.append((rel.as_posix(), path))
    yield from sorted(found)


def faithful_bytecode(pyc: Path) -> bool:
    """Whether ``pyc`` is byte code Python would load for its source *and* holds exactly the
    code that compiling that source gives (ADR 0050): it lies in a ``__pycache__`` folder, is
    named ``NAME.TAG[.opt-N].pyc`` for this interpreter's cache tag, its ``NAME.py`` is beside
    the folder, and its code object equals ``compile(source, optimize=N)`` (code objects compare
    their instructions, constants, names and line tables, not the file name). Whatever its
    header claims (timestamp and size, or a source hash), byte code that fails this is not the
    source's: a ``.pyc`` compiled from an edited file, one without a source, one outside
    ``__pycache__``, one of another interpreter."""
    if pyc.parent.name != "__pycache__" or pyc.suffix != ".pyc":
        return False
    parts = pyc.name[:-len(".pyc")].split(".")
    optimize = 0
    if len(parts) == 3 and parts[2] in ("opt-1", "opt-2"):
        optimize = int(parts[2][-1])
        parts = parts[:2]
    if len(parts) != 2 or parts[1] != sys.implementation.cache_tag:
        return False
    source = pyc.parent.parent / f"{parts[0]}.py"
    try:
        data = pyc.read_bytes()
        if data[:4] != importlib.util.MAGIC_NUMBER or not source.is_file():
            return False
        code = marshal.loads(data[16:])
        return bool(code == compile(source.read_bytes(), str(source), "exec",
                                    dont_inherit=True, optimize=optimize))
    except (OSError, ValueError, EOFError, TypeError, SyntaxError):
        return False


def unfaithful_bytecode(root: Path) -> dict[str, str]:
    """Every byte-code file under ``root`` (``.pyc``/``.pyo``, in or out of ``__pycache__``)
    that is not the faithful compile of its source (:func:`faithful_bytecode`), as (POSIX path
    relative to ``root``) -> SHA-256: byte code Python could run instead of the source the
    manifest lists."""
    found = {}
    for path in root.rglob("*"):
        if path.suffix in SKIPPED_SUFFIXES and not path.is_dir() \
                and not faithful_bytecode(path):
            found[path.relative_to(root).as_posix()] = file_sha256(path)
    return dict(sorted(found.items()))


def canonical(data: Mapping[str, Any]) -> bytes:
    """The one byte form of a manifest."""
    return (json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
            + "\n").encode("ascii")


def software_manifest(root: Path, version: str) -> dict[str, Any]:
    """The software manifest of the package folder ``root`` at ``version``."""
    return {"format": SOFTWARE_FORMAT, "package": "starfever", "version": version,
            "files": {rel: file_sha256(path) for rel, path in package_files(root)}}


def write_software_manifest(root: Path, version: str) -> Path:
    """Write the software manifest into ``root`` (the build hook's job)."""
    out = root / SOFTWARE_MANIFEST
    out.write_bytes(canonical(software_manifest(root, version)))
    return out


def sha256_of(data: bytes) -> str:
    """SHA-256 (hex) of bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class Comparison:
    """Files found against files listed."""

    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    checked: int = 0

    @property
    def ok(self) -> bool:
        """Whether every listed file is there with its hash, and nothing else."""
        return not (self.changed or self.missing or self.added)

    def lines(self) -> list[str]:
        """One line per difference, naming the file."""
        return ([f"changed: {p}" for p in self.changed] + [f"missing: {p}" for p in self.missing]
                + [f"not in the manifest: {p}" for p in self.added])


def compare(listed: Mapping[str, str], found: Mapping[str, str]) -> Comparison:
    """Compare ``listed`` (path -> SHA-256 of a manifest) with ``found`` (the same of the
    files on disk)."""
    result = Comparison(checked=len(listed))
    for path, digest in sorted(listed.items()):
        if path not in found:
            result.missing.append(path)
        elif found[path] != digest:
            result.changed.append(path)
    result.added = sorted(set(found) - set(listed))
    return result


def main(argv: list[str]) -> int:
    """The script: check the package folder ``argv[0]`` against ``argv[1]`` (default: its own
    manifest); the differences, one a line; 0 when there are none, 1 otherwise, 2 on bad input."""
    if len(argv) not in (1, 2):
        print("usage: python -I -S -B manifest.py PACKAGE_FOLDER [SOFTWARE_MANIFEST]",
              file=sys.stderr)
        return 2
    root = Path(argv[0])
    path = Path(argv[1]) if len(argv) == 2 else root / SOFTWARE_MANIFEST
    try:
        content = json.loads(path.read_bytes())
        listed = {str(k): str(v) for k, v in content["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        print(f"cannot read the software manifest {path}: {error}", file=sys.stderr)
        return 2
    found = {rel: file_sha256(p) for rel, p in package_files(root)}
    lines = compare(listed, found).lines() + [
        f"byte code that is not the compile of its source: {rel}"
        for rel in unfaithful_bytecode(root)]
    print(f"{root}: {'OK' if not lines else 'MISMATCH'} against {path} "
          f"({len(listed)} files listed, manifest sha256 {sha256_of(path.read_bytes())})")
    for line in lines:
        print(f"  {line}")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
