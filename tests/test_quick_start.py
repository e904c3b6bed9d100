"""The newcomer's path, as the README's Quick start writes it, in one fresh copy of the checkout
and one fresh virtual environment: ``./scripts/install``, ``scripts/starfever rtp``,
``scripts/starfever simulate``, ``./scripts/install --test`` (editable over the regular
install), then every command's ``--help`` (ADR 0044).

The scripts run as a newcomer's shell would: no virtual environment active, ``python3`` the
machine's own (Debian's refuses ``pip install``: PEP 668), so they make ./.venv and say so.
Packages come from the checked-in lock through pip, as ``./scripts/install`` takes them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FRESH_VENV_LINE = "no virtual environment is active: using ./.venv (made now)"

pytestmark = pytest.mark.slow

LIST_COMMANDS = """
import argparse, json
from starfever.cli import build_parser

def walk(parser, path):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path + [name]
                yield from walk(sub, path + [name])

print(json.dumps(list(walk(build_parser(), []))))
"""

HELP_EVERY_COMMAND = """
import contextlib, io, json, sys
from starfever.cli import main

shown = {}
for command in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([*command, "--help"])
        except SystemExit as exit_:
            assert exit_.code in (0, None), (command, exit_.code)
    shown[" ".join(command)] = out.getvalue()
print(json.dumps(shown))
"""


def _machine_python() -> str:
    """The interpreter a newcomer's ``python3`` is: the system's (3.11+) where there is one,
    else the base interpreter of the one running the tests (never a virtual environment)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(candidate).exists():
            probe = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info >= (3, 11) "
                 "and sys.prefix == sys.base_prefix)"], capture_output=True, text=True)
            if probe.stdout.strip() == "True":
                return candidate
    return getattr(sys, "_base_executable", sys.executable)


def _copy_checkout(target: Path) -> None:
    """The checkout's files as git sees them (tracked, and new ones not ignored): no .venv,
    caches or build folders of the developer's."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to copy")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _run(args: list[str], cwd: Path, env: dict[str, str],
         timeout: int = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done


def test_the_quick_start_in_one_fresh_environment(tmp_path: Path) -> None:
    clone, cache, elsewhere, bin_dir = (tmp_path / name for name in
                                        ("star-fever", "cache", "elsewhere", "bin"))
    for folder in (clone, elsewhere, bin_dir):
        folder.mkdir()
    _copy_checkout(clone)
    (bin_dir / "python3").symlink_to(_machine_python())
    env = {k: v for k, v in os.environ.items()
           if k not in {"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME",
                        "NUMBA_CACHE_DIR", "STARFEVER_CACHE_DIR"}}
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    env["STARFEVER_CACHE_DIR"] = str(cache)  # the user's cache folder, numba's kernels too
    starfever = [str(clone / "scripts" / "starfever")]

    # 1. ./scripts/install: a virtual environment of the project's, made and announced
    done = _run(["./scripts/install"], clone, env)
    assert FRESH_VENV_LINE in done.stderr, done.stderr
    venv_python = str(clone / ".venv" / "bin" / "python3")
    package = Path(_run([venv_python, "-c", "import starfever; print(starfever.__file__)"],
                        elsewhere, env).stdout.strip()).parent
    assert ".venv" in package.parts and package.parent.name == "site-packages", package

    # 2. the maths, as the README invites, from a folder of the user's
    rtp = _run([*starfever, "rtp"], elsewhere, env)
    assert "theoretical RTP" in rtp.stdout
    sim = _run([*starfever, "simulate", "--spins", "20000", "--seed", "1", "--workers", "1",
                "--json"], elsewhere, env)
    assert json.loads(sim.stdout)["spins"] == 20000
    # numba compiled into the user's cache folder, and wrote nothing into the package
    assert list((cache / "numba").rglob("*.nbi")), "numba cached nothing in the user's cache"
    assert not [p for p in package.rglob("*") if p.suffix in {".nbi", ".nbc"}]
    verified = _run([*starfever, "verify"], elsewhere, env)
    assert verified.stdout.startswith("software OK"), verified.stdout

    # 3. the test install: the package editable, over the regular install
    done = _run(["./scripts/install", "--test"], clone, env)
    assert "made now" not in done.stderr
    assert not package.exists(), f"{package} left behind: it would shadow the package"
    editable = _run([venv_python, "-c", "import starfever; print(starfever.__file__)"],
                    elsewhere, env).stdout.strip()
    assert Path(editable) == clone / "starfever" / "__init__.py"

    # 4. every command answers --help (the list comes from the command line itself)
    commands = json.loads(_run([venv_python, "-c", LIST_COMMANDS], elsewhere, env).stdout)
    assert {"rtp", "simulate", "serve", "verify", "tune"} <= {c[0] for c in commands}
    assert _run([*starfever, "--help"], elsewhere, env).stdout.startswith("usage: starfever")
    # each command's help in one process of the venv (20 processes took a minute of the
    # suite; the start-up they share is the one just run, ADR 0045)
    shown = json.loads(_run([venv_python, "-c", HELP_EVERY_COMMAND, json.dumps(commands)],
                            elsewhere, env, timeout=300).stdout)
    for command in commands:
        name = " ".join(command)
        assert shown[name].startswith(f"usage: starfever {name}"), (name, shown[name][:200])
