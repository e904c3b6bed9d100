"""The environment the package runs in, sealed at deployment and checked at every start
(ADR 0050): the interpreter, every start-up hook (``*.pth`` in every site folder,
``sitecustomize``, ``usercustomize``, ``PYTHONSTARTUP``), the variables that change what Python
loads or runs, ``sys.path``, and every installed distribution (name, version, SHA-256 of its
``RECORD``). And what this process actually loaded: every module file outside the package and
the interpreter's own library must be a file some installed distribution's ``RECORD`` lists,
with that hash, and its byte code the compile of its source.

``starfever seal`` writes the environment as found into the package folder
(``environment-manifest.json``); :func:`check` compares what is found now with it. The
*environment hash* is the SHA-256 of the environment as found; with the build hash it makes
the *running build hash* every round records (:func:`running_sha256`).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import site
import sys
import sysconfig
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from starfever.certify.manifest import (
    ENVIRONMENT_MANIFEST,
    canonical,
    faithful_bytecode,
    file_sha256,
    sha256_of,
)
from starfever.engine.errors import InputError

ENVIRONMENT_FORMAT = "starfever-environment-manifest-v1"
RUNNING_FORMAT = "starfever-running-build-v1"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent

VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONPLATLIBDIR",
             "PYTHONPYCACHEPREFIX", "PYTHONEXECUTABLE", "PYTHONINSPECT", "PYTHONBREAKPOINT",
             "PYTHONWARNINGS", "PYTHONOPTIMIZE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH",
             "PYTHONDEVMODE", "PYTHONCASEOK", "PYTHONVERBOSE")
"""Variables that change which files Python loads or what it runs (a start file, a path, an
import on ``breakpoint()`` or in a warning filter, asserts stripped): their values are sealed."""


def _sha(path: str | Path) -> str:
    try:
        return file_sha256(Path(path))
    except OSError:
        return "unreadable"


def site_dirs() -> list[str]:
    """The site folders whose ``.pth`` files Python processes at start-up."""
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return sorted({os.path.abspath(d) for d in dirs if os.path.isdir(d)})


def interpreter_dirs() -> list[str]:
    """The interpreter's own library folder (the standard library and its ``lib-dynload``).
    A site folder inside it (a system Python's ``site-packages``) is not the interpreter's:
    see :func:`_interpreters`."""
    return [os.path.dirname(os.path.abspath(os.__file__))]


def _interpreters(path: str) -> bool:
    """Whether ``path`` is a file of the interpreter's own library (not of a site folder)."""
    sites = site_dirs() + [os.path.abspath(p) for p in getattr(site, "getsitepackages",
                                                               list)()]
    return _inside(path, interpreter_dirs()) and not _inside(path, sites) \
        and "site-packages" not in path.split(os.sep) \
        and "dist-packages" not in path.split(os.sep)


def startup_hooks() -> dict[str, str]:
    """Every start-up hook there is, path -> SHA-256: each ``*.pth`` of each site folder, the
    ``sitecustomize`` and ``usercustomize`` modules Python would import, ``PYTHONSTARTUP``."""
    hooks = {str(p): _sha(p) for d in site_dirs() for p in sorted(Path(d).glob("*.pth"))}
    for name in ("sitecustomize", "usercustomize"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin and os.path.isfile(spec.origin):
            hooks[os.path.abspath(spec.origin)] = _sha(spec.origin)
    start = os.environ.get("PYTHONSTARTUP")
    if start and os.path.isfile(start):
        hooks[os.path.abspath(start)] = _sha(start)
    return dict(sorted(hooks.items()))


def _site_of(dist: metadata.Distribution) -> str:
    return os.path.abspath(str(dist.locate_file("")))


def distributions() -> dict[str, dict[str, str | None]]:
    """Every installed distribution on ``sys.path``: "name @ folder" -> name, version, SHA-256
    of its ``RECORD`` (which lists every file of it with its hash)."""
    found: dict[str, dict[str, str | None]] = {}
    for dist in metadata.distributions():
        name = str(dist.metadata["Name"] or "?")
        record = dist.read_text("RECORD")
        found[f"{name.lower()} @ {_site_of(dist)}"] = {
            "name": name, "version": dist.version,
            "record_sha256": None if record is None else sha256_of(record.encode())}
    return dict(sorted(found.items()))


def interpreter() -> dict[str, Any]:
    """The interpreter: implementation, version and build, its executable's and shared
    library's SHA-256, and the flags that change what it runs."""
    library = Path(str(sysconfig.get_config_var("LIBDIR") or ""),
                   str(sysconfig.get_config_var("LDLIBRARY") or ""))
    flags = sys.flags
    return {"implementation": sys.implementation.name, "version": sys.version,
            "cache_tag": sys.implementation.cache_tag,
            "executable_sha256": _sha(os.path.realpath(sys.executable)),
            "library_sha256": _sha(library) if library.is_file() else None,
            "flags": {"optimize": flags.optimize, "no_site": flags.no_site,
                      "no_user_site": flags.no_user_site, "isolated": flags.isolated,
                      "ignore_environment": flags.ignore_environment,
                      "safe_path": getattr(flags, "safe_path", False),
                      "dev_mode": flags.dev_mode}}


def found() -> dict[str, Any]:
    """The environment manifest of the environment as it is."""
    return {"format": ENVIRONMENT_FORMAT, "interpreter": interpreter(),
            "variables": {name: os.environ[name] for name in VARIABLES if name in os.environ},
            "paths": [str(p) for p in sys.path[1:]],
            "hooks": startup_hooks(), "distributions": distributions()}


_FOUND: dict[tuple[str, ...], dict[str, Any]] = {}


def _found_once() -> dict[str, Any]:
    """:func:`found`, once per ``sys.path`` and variables in this process: a development
    server's quick check, made again for every application a test process creates."""
    key = (*sys.path, "\0", *(os.environ.get(name, "\0") for name in VARIABLES))
    known = _FOUND.get(key)
    if known is None:
        if len(_FOUND) > 16:
            _FOUND.clear()
        known = _FOUND[key] = found()
    return known


def _record_index() -> dict[str, str]:
    """Every file an installed distribution's RECORD lists with a hash: path -> SHA-256."""
    index: dict[str, str] = {}
    for dist in metadata.distributions():
        where = _site_of(dist)
        for entry in dist.files or ():
            if entry.hash is None or entry.hash.mode != "sha256":
                continue
            digest = base64.urlsafe_b64decode(entry.hash.value + "=" * (-len(entry.hash.value) % 4))
            index.setdefault(os.path.normpath(os.path.join(where, str(entry))), digest.hex())
    return index


def _inside(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f + os.sep) for f in folders)


def unrecorded_hooks() -> list[str]:
    """Each start-up hook that is not a file its distribution's RECORD lists with that hash
    (the interpreter's own excepted). One line each."""
    index = _record_index()
    return [f"start-up hook that no installed distribution records: {hook}"
            for hook, digest in startup_hooks().items()
            if not _interpreters(hook) and index.get(os.path.normpath(hook)) != digest]


def unrecorded_modules(package_root: Path = PACKAGE_ROOT) -> list[str]:
    """Each module this process loaded from outside the package and the interpreter's library
    whose file no installed distribution's RECORD lists with that hash, or whose byte code is
    not its source's compile. One line each (about a second for a server's 800 modules:
    production and ``verify`` only)."""
    index = _record_index()
    lines = []
    package = str(package_root)
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) if spec is not None else None
        if not origin or not getattr(spec, "has_location", False):
            continue
        path = os.path.normpath(os.path.abspath(origin))
        if _inside(path, [package]) or _interpreters(path):
            continue
        expected = index.get(path)
        if expected is None:
            lines.append(f"loaded from a file no installed distribution records: {path}")
        elif _sha(path) != expected:
            lines.append(f"loaded file differs from its distribution's RECORD: {path}")
        cached = getattr(spec, "cached", None)
        if path.endswith(".py") and cached and os.path.isfile(cached) \
                and not faithful_bytecode(Path(cached)):
            lines.append(f"byte code that is not the compile of its source: {cached}")
    return sorted(set(lines))


def compare(sealed: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """One line per difference between a sealed environment and the one found."""
    lines = []
    for key in sorted(set(sealed.get("interpreter", {})) | set(now["interpreter"])):
        was, new = sealed.get("interpreter", {}).get(key), now["interpreter"].get(key)
        if was != new:
            lines.append(f"interpreter {key}: {new} (sealed: {was})")
    for name in sorted(set(sealed.get("variables", {})) | set(now["variables"])):
        was, new = sealed.get("variables", {}).get(name), now["variables"].get(name)
        if was != new:
            lines.append(f"variable {name}: {new if new is not None else 'unset'} "
                         f"(sealed: {was if was is not None else 'unset'})")
    if sealed.get("paths") != now["paths"]:
        lines.append(f"sys.path: {now['paths']} (sealed: {sealed.get('paths')})")
    for kind, label in (("hooks", "start-up hook"), ("distributions", "distribution")):
        was, new = sealed.get(kind, {}), now[kind]
        lines += [f"{label} not in the seal: {k}" for k in sorted(set(new) - set(was))]
        lines += [f"{label} missing: {k}" for k in sorted(set(was) - set(new))]
        lines += [f"{label} changed: {k}" for k in sorted(set(was) & set(new))
                  if was[k] != new[k]]
    return lines


@dataclass
class EnvironmentCheck:
    """The environment against its seal."""

    manifest_path: Path
    manifest_sha256: str | None
    """SHA-256 of the seal's bytes; ``None`` if there is none."""
    environment_sha256: str
    """SHA-256 of the environment manifest as found (equal to the above when ok)."""
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Sealed, as sealed, and everything that runs accounted for."""
        return not self.differences

    def summary(self) -> str:
        """One line for people."""
        if self.ok:
            return (f"environment OK: interpreter, start-up hooks, distributions and loaded "
                    f"modules match the seal {self.manifest_path} (environment sha256 "
                    f"{self.environment_sha256})")
        return (f"environment MISMATCH: {len(self.differences)} differences against "
                f"{self.manifest_path} (environment sha256 {self.environment_sha256})")

    def to_dict(self) -> dict[str, Any]:
        """What the operator route and ``verify --json`` show."""
        return {"ok": self.ok, "manifest": str(self.manifest_path),
                "manifest_sha256": self.manifest_sha256,
                "environment_sha256": self.environment_sha256,
                "differences": self.differences}


def check(root: Path = PACKAGE_ROOT, *, loaded: bool = True) -> EnvironmentCheck:
    """The environment as found against the seal in ``root``; with ``loaded`` (production,
    ``verify``, a sealed development install) also its start-up hooks against the
    distributions' RECORDs and every module this process loaded (about a second), without it
    (an unsealed development server) only the environment's hash and the missing seal."""
    path = root / ENVIRONMENT_MANIFEST
    now = found() if loaded else _found_once()
    data = canonical(now)
    result = EnvironmentCheck(manifest_path=path, manifest_sha256=None,
                              environment_sha256=sha256_of(data))
    if not path.is_file():
        result.differences.append(f"no environment seal at {path}: seal the deployed "
                                  "environment with starfever seal")
    else:
        sealed_bytes = path.read_bytes()
        result.manifest_sha256 = sha256_of(sealed_bytes)
        try:
            sealed = json.loads(sealed_bytes)
        except ValueError:
            sealed = None
        if not isinstance(sealed, dict) or sealed.get("format") != ENVIRONMENT_FORMAT:
            result.differences.append(f"{path} is not a {ENVIRONMENT_FORMAT} manifest")
        else:
            result.differences += compare(sealed, now)
    if loaded:
        result.differences += unrecorded_hooks() + unrecorded_modules(root)
    return result


def seal(root: Path = PACKAGE_ROOT) -> tuple[Path, str]:
    """Write the environment as found into ``root``; its path and SHA-256. Refused
    (:class:`InputError`, one line) when something that runs is accounted for by no
    distribution: a seal records a clean environment, it does not bless a hook."""
    problems = unrecorded_hooks() + unrecorded_modules(root)
    if problems:
        raise InputError(f"cannot seal this environment: {len(problems)} problem(s), the "
                         f"first {problems[0]}")
    data = canonical(found())
    out = root / ENVIRONMENT_MANIFEST
    try:
        out.write_bytes(data)
    except OSError as error:
        raise InputError(f"cannot write {out}: {error.strerror}") from None
    return out, sha256_of(data)


def running_sha256(build_sha256: str, environment_sha256: str) -> str:
    """The running build hash a round records: the build hash of the package and the hash of
    its environment, both as found, as one SHA-256 (of canonical JSON, recomputable by
    anyone from the two)."""
    return sha256_of(canonical({"format": RUNNING_FORMAT, "software": build_sha256,
                                "environment": environment_sha256}))
