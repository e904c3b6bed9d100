"""Manifests of files with their SHA-256: the software manifest of the package (made at build
time by ``setup.py`` and shipped inside it) and the manifest of a certification bundle.

Standard library only, and importable on its own (``setup.py`` loads this file by path while
the package is being built, before any dependency is installed).

A manifest is canonical JSON (sorted keys, no spaces, ASCII, one trailing newline), so the
same files give the same bytes on every machine and its SHA-256 names them: the software
manifest's SHA-256 is the *build hash* that every round records (ADR 0020).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SOFTWARE_FORMAT = "starfever-software-manifest-v1"
BUNDLE_FORMAT = "starfever-bundle-manifest-v1"
SOFTWARE_MANIFEST = "software-manifest.json"
"""The software manifest's file name inside the package folder (``starfever/``)."""
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
    caches and the software manifest itself."""
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part in SKIPPED_DIRS for part in rel.parts[:-1]) or path.is_dir():
            continue
        if path.suffix in SKIPPED_SUFFIXES or rel.as_posix() == SOFTWARE_MANIFEST:
            continue
        found.append((rel.as_posix(), path))
    yield from sorted(found)


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
