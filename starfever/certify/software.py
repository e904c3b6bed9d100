"""Software identity: the installed package against the software manifest shipped with it
(written at build time by ``setup.py``, ADR 0020).

:func:`check` recomputes the SHA-256 of every file of the installed package and compares them
with a manifest (the shipped one, or one given, e.g. the copy in a certification bundle).
The *build hash* is the SHA-256 of the manifest made from the files as they are: it equals
the shipped manifest's own SHA-256 exactly when nothing differs. Byte code is part of what
Python may execute: every ``.pyc`` in the package must be the faithful compile of the source
beside it (ADR 0050); one that is not is a difference, and is hashed into the build hash, so a
build whose byte code was forged never bears the certified hash. The server records the
build hash with the environment's (``starfever.certify.environment``) in every round.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from starfever.certify.manifest import (
    SOFTWARE_FORMAT,
    SOFTWARE_MANIFEST,
    Comparison,
    canonical,
    compare,
    file_sha256,
    package_files,
    sha256_of,
    unfaithful_bytecode,
)
from starfever.engine.errors import InputError

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
"""The folder of the running ``starfever`` package."""


@dataclass
class SoftwareCheck:
    """The installed files against a manifest."""

    root: Path
    manifest_path: Path
    manifest_sha256: str | None
    """SHA-256 of the manifest file's bytes; ``None`` if there is none."""
    build_sha256: str
    """SHA-256 of the manifest of the files as they are (equal to the above when ok)."""
    version: str
    comparison: Comparison = field(default_factory=Comparison)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every file as the manifest lists it, nothing else, and the manifest readable."""
        return not self.problems and self.comparison.ok

    def differences(self) -> list[str]:
        """One line per problem, each differing file named."""
        return self.problems + self.comparison.lines()

    def summary(self) -> str:
        """One line for people."""
        if self.ok:
            return (f"software OK: {self.comparison.checked} files of starfever {self.version} "
                    f"match the manifest {self.manifest_path} (build sha256 "
                    f"{self.build_sha256})")
        return (f"software MISMATCH: {len(self.differences())} differences against "
                f"{self.manifest_path} (running build sha256 {self.build_sha256})")

    def to_dict(self) -> dict[str, Any]:
        """What the operator route and the bundle show."""
        return {"ok": self.ok, "manifest": str(self.manifest_path),
                "manifest_sha256": self.manifest_sha256, "build_sha256": self.build_sha256,
                "version": self.version, "files_checked": self.comparison.checked,
                "differences": self.differences()}


def installed_version() -> str:
    """The installed distribution's version ("unknown" when run from an uninstalled tree)."""
    try:
        return metadata.version("starfever")
    except metadata.PackageNotFoundError:
        return "unknown"


def read_manifest(path: Path) -> tuple[bytes, dict[str, Any]]:
    """A software manifest's bytes and content; :class:`InputError` if it is not one."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the software manifest {path}: {error.strerror}"
                         ) from None
    try:
        content = json.loads(data)
    except ValueError:
        raise InputError(f"{path} is not JSON") from None
    if not isinstance(content, dict) or content.get("format") != SOFTWARE_FORMAT \
            or not isinstance(content.get("files"), dict):
        raise InputError(f"{path} is not a {SOFTWARE_FORMAT} manifest")
    return data, content


def check(root: Path = PACKAGE_ROOT, manifest: Path | None = None) -> SoftwareCheck:
    """The files under ``root`` against ``manifest`` (default: the one shipped in ``root``)."""
    path = manifest or root / SOFTWARE_MANIFEST
    found = {rel: file_sha256(p) for rel, p in package_files(root)}
    bytecode = unfaithful_bytecode(root)
    version = installed_version()
    result = SoftwareCheck(root=root, manifest_path=path, manifest_sha256=None,
                           build_sha256="", version=version)
    listed: dict[str, str] = {}
    if manifest is None and not path.exists():
        result.problems.append(f"no software manifest at {path}: this package was not built "
                               "by its setup.py (install it with ./scripts/install)")
    else:
        data, content = read_manifest(path)
        result.manifest_sha256 = sha256_of(data)
        listed = {str(k): str(v) for k, v in content["files"].items()}
        if content.get("version") != version and version != "unknown":
            result.problems.append(f"version: the manifest is of {content.get('version')}, "
                                   f"the installed package is {version}")
        if version == "unknown":
            version = result.version = str(content.get("version"))
        result.comparison = compare(listed, found)
        if result.comparison.ok and not result.problems and data != canonical(content):
            result.problems.append(f"{path} is not in canonical form")
    result.problems += [f"byte code that is not the compile of its source: {rel}"
                        for rel in bytecode]
    result.build_sha256 = sha256_of(canonical({"format": SOFTWARE_FORMAT,
                                               "package": "starfever", "version": version,
                                               "files": {**found, **bytecode}}))
    return result


@lru_cache(maxsize=1)
def running() -> SoftwareCheck:
    """The check of the running package, made once per process (at the server's start-up,
    after its modules are imported: the build a round records is the one loaded then)."""
    return check()
