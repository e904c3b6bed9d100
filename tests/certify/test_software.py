"""Software identity on a real, throw-away install: the package is built from a copy of this
tree by its ``setup.py`` (the build hook writes the software manifest) and installed into a
target folder with pip, as ``scripts/install`` does (``--no-build-isolation``). Then:
``starfever verify`` passes; one changed byte of a model file makes it fail naming that file;
a production server refuses that install, and an unapproved model, with one line; an intact
production install serves, shows its identity to the operator, and records its running build
(package and sealed environment, ADR 0051) and model in every round. And the attacks of issue 34
(ADR 0050): forged byte code, a ``.pth`` or ``sitecustomize`` hook, each proven to run in Python,
fail ``verify`` and are refused in production; a hook smuggled into a RECORD and resealed
changes the running build hash. Nothing in this worktree is changed."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import marshal
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from starfever.certify.environment import running_sha256
from starfever.certify.manifest import ENVIRONMENT_MANIFEST, SOFTWARE_MANIFEST, sha256_of
from starfever.engine.model import load_model
from starfever.server.api.security import CONTENT_SECURITY_POLICY
from tests.harness import (
    SECRET,
    Databases,
    Server,
    audit_key_file,
    create_operator,
    run_cli,
)

pytestmark = pytest.mark.slow  # a build and an install (seconds), servers

ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", SOFTWARE_MANIFEST,
                                 ENVIRONMENT_MANIFEST, "*.egg-info", "build")


def _build_and_install(into: Path, work: Path) -> Path:
    """Copy the sources, build and install them into ``into``; the package folder."""
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "starfever", source / "starfever", ignore=IGNORED)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--no-build-isolation", "--disable-pip-version-check",
                           "--target", str(into), str(source)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    package = into / "starfever"
    assert (package / SOFTWARE_MANIFEST).is_file()
    return package


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The install's target folder (put it first on PYTHONPATH to run it)."""
    work = tmp_path_factory.mktemp("install")
    target = work / "site"
    _build_and_install(target, work)
    _seal(target, work)
    return target


def _seal(target: Path, cwd: Path) -> None:
    """``starfever seal`` of the install, as a deployment does (ADR 0050)."""
    done = _run(target, cwd, "seal")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (target / "starfever" / ENVIRONMENT_MANIFEST).is_file()


def _env(target: Path, **settings: str) -> dict[str, str]:
    return {"PYTHONPATH": str(target), **settings}


def _run(target: Path, cwd: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """``starfever ARGS`` of the install (run from ``cwd``, so this tree is not on the path)."""
    return run_cli(*args, env=_env(target, **settings), cwd=cwd, timeout=120)


def _production(**more: str) -> dict[str, str]:
    return {"STARFEVER_ENV": "production", "STARFEVER_SECRET_KEY": SECRET,
            "STARFEVER_AUDIT_KEY_FILE": audit_key_file(), "STARFEVER_TEST_MODE": "0",
            "STARFEVER_APPROVED_MODELS": load_model("default").sha256, **more}


@pytest.fixture(scope="module")
def changed_install(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the install (sealed where it lies) with one byte of the default model file
    changed (it stays valid JSON: a letter of its description). One for the module: no test
    leaves it changed further (a seal and a copy cost seconds)."""
    work = tmp_path_factory.mktemp("changed")
    copy = work / "site"
    shutil.copytree(installed, copy)
    _seal(copy, work)
    model_file = copy / "starfever" / "models" / "default.json"
    data = bytearray(model_file.read_bytes())
    at = data.index(b'"description": "') + len(b'"description": "')
    data[at] = ord("x") if data[at] != ord("x") else ord("y")
    model_file.write_bytes(bytes(data))
    return copy


def test_verify_passes_on_a_fresh_install(installed: Path, tmp_path: Path) -> None:
    done = _run(installed, tmp_path, "verify", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    manifest = installed / "starfever" / SOFTWARE_MANIFEST
    assert report["ok"] is True and report["differences"] == []
    assert report["manifest"] == str(manifest)  # the install's, not this tree's
    assert report["manifest_sha256"] == sha256_of(manifest.read_bytes()) == report[
        "build_sha256"]
    listed = json.loads(manifest.read_text())["files"]
    for critical in ("engine/round.py", "math/exact.py", "models/default.json",
                     "server/app.py", "web/static/js/app.js", "certify/manifest.py"):
        assert critical in listed, critical
    assert report["files_checked"] == len(listed)
    # pip compiled the package: its byte code is checked against the sources, not listed
    assert list((installed / "starfever" / "server" / "__pycache__").glob("identity.*.pyc"))
    assert not [name for name in listed if "__pycache__" in name or name.endswith(".pyc")]
    seal = installed / "starfever" / ENVIRONMENT_MANIFEST
    assert report["environment"]["ok"] is True, report["environment"]
    assert report["environment"]["manifest_sha256"] == sha256_of(seal.read_bytes()) == report[
        "environment"]["environment_sha256"]
    sealed = json.loads(seal.read_text())
    assert sealed["interpreter"]["version"] == sys.version
    assert any(key.startswith("starfever @ ") for key in sealed["distributions"])
    assert report["running_sha256"] == running_sha256(report["build_sha256"],
                                                      report["environment"][
                                                          "environment_sha256"])


def test_one_changed_byte_of_a_model_file_fails_verify(changed_install: Path,
                                                       tmp_path: Path) -> None:
    copy = changed_install
    done = _run(copy, tmp_path, "verify")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "software MISMATCH" in done.stdout
    assert "changed: models/default.json" in done.stdout
    assert done.stdout.count("changed:") == 1
    sneaky = copy / "starfever" / "engine" / "sneaky.py"
    sneaky.write_text("PAYS = 10**6\n")
    try:
        more = _run(copy, tmp_path, "verify")
    finally:
        sneaky.unlink()  # the module's changed install again
    assert more.returncode == 1 and "not in the manifest: engine/sneaky.py" in more.stdout


def test_a_signed_software_manifest_verifies_with_the_public_key(installed: Path,
                                                                tmp_path: Path) -> None:
    prefix = tmp_path / "lab"
    assert _run(installed, tmp_path, "keygen", "--out", str(prefix)).returncode == 0
    certified = tmp_path / "certified-manifest.json"
    shutil.copy(installed / "starfever" / SOFTWARE_MANIFEST, certified)
    assert _run(installed, tmp_path, "sign", str(certified), "--key",
                f"{prefix}.key").returncode == 0
    ok = _run(installed, tmp_path, "verify", "--manifest", str(certified), "--public-key",
              f"{prefix}.pub")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "software OK" in ok.stdout and "signature OK" in ok.stdout
    unsigned = _run(installed, tmp_path, "verify", "--public-key", f"{prefix}.pub")
    assert unsigned.returncode == 1 and "cannot read the signature" in unsigned.stdout
    forged = tmp_path / "forged.json"
    forged.write_bytes(certified.read_bytes().replace(b'"version":"0.1.0"',
                                                      b'"version":"0.1.1"'))
    shutil.copy(f"{certified}.sig", f"{forged}.sig")
    refused = _run(installed, tmp_path, "verify", "--manifest", str(forged), "--public-key",
                   f"{prefix}.pub")
    assert refused.returncode == 1 and "does not hold" in refused.stdout


@pytest.fixture
def database(tmp_path: Path) -> Iterator[str]:
    with Databases(tmp_path / "db") as made:
        url = made.new("sqlite")
        yield url


def test_production_refuses_a_changed_install_and_an_unapproved_model(
        installed: Path, changed_install: Path, tmp_path: Path, database: str) -> None:
    copy = changed_install
    changed = _run(copy, tmp_path, "serve", "--database-url", database, "--port", "0",
                   **_production(STARFEVER_APPROVED_MODELS=load_model("default").sha256))
    assert changed.returncode == 2, changed.stdout + changed.stderr
    assert "does not match its manifest" in changed.stderr
    assert "models/default.json" in changed.stderr
    assert len(changed.stderr.strip().splitlines()) == 1
    unapproved = _run(installed, tmp_path, "serve", "--database-url", database, "--port", "0",
                      **_production(STARFEVER_APPROVED_MODELS=load_model("rtp94").sha256))
    assert unapproved.returncode == 2, unapproved.stdout + unapproved.stderr
    assert "is not in STARFEVER_APPROVED_MODELS" in unapproved.stderr
    assert load_model("default").sha256 in unapproved.stderr
    assert len(unapproved.stderr.strip().splitlines()) == 1
    nothing = _run(installed, tmp_path, "serve", "--database-url", database, "--port", "0",
                   **{k: v for k, v in _production().items()
                      if k != "STARFEVER_APPROVED_MODELS"})
    assert nothing.returncode == 2 and "STARFEVER_APPROVED_MODELS must list" in nothing.stderr
    assert not Path(database.removeprefix("sqlite:///")).exists()  # refused before migrating


def test_a_changed_install_in_development_warns_and_says_so(changed_install: Path,
                                                           tmp_path: Path,
                                                           database: str) -> None:
    copy = changed_install
    totp = create_operator(database)
    server = Server(database, tmp_path / "dev" / "server.log", _env(copy), test_mode=False,
                    start_timeout=180)  # its start checks the whole environment
    server.operator_totp = totp
    with server.start():
        assert "does not match its manifest" in server.log_tail()
        shown = server.call("GET", "/operator/software", server.operator_token).json()
        assert shown["software"]["ok"] is False
        assert shown["software"]["differences"] == ["changed: models/default.json"]
        assert shown["software"]["build_sha256"] != shown["software"]["manifest_sha256"]


def _serves_no_docs_no_schema_and_sends_hsts(server: Server) -> None:
    """Production (a sealed install: nothing less starts, ADR 0050) serves no API docs or
    schema and sends HSTS and the CSP on every answer (the web surface, issue 13)."""
    root = server.base.removesuffix("/api/v1")
    for path in ("/docs", "/openapi.json", "/redoc", "/docs/oauth2-redirect"):
        response = server.http.get(root + path)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "not_found"
    health = server.call("GET", "/health")
    assert health.status_code == 200 and health.json()["test_mode"] is False
    for url in (root + "/", root + "/static/js/app.js", root + "/static/css/app.css",
                server.base + "/health", server.base + "/no-such-thing",
                server.base + "/wallet", server.base + "/game"):
        response = server.http.get(url)
        assert response.headers["strict-transport-security"].startswith("max-age="), url
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, url


def test_an_intact_production_install_serves_and_every_round_names_its_build(
        installed: Path, tmp_path: Path, database: str) -> None:
    totp = create_operator(database)
    manifest_sha = sha256_of((installed / "starfever" / SOFTWARE_MANIFEST).read_bytes())
    model = load_model("default")
    server = Server(database, tmp_path / "prod" / "server.log", _env(installed, **_production()),
                    test_mode=False, start_timeout=180)  # (the same check)
    server.operator_totp = totp
    with server.start():
        _serves_no_docs_no_schema_and_sends_hsts(server)
        assert server.call("GET", "/operator/software").status_code == 401
        _, token = server.player(deposit=1000)
        players_token = server.call("GET", "/operator/software", token)
        assert players_token.status_code == 403
        shown = server.call("GET", "/operator/software", server.operator_token).json()
        assert shown["software"]["ok"] is True and shown["software"]["differences"] == []
        assert shown["software"]["manifest_sha256"] == manifest_sha
        assert shown["software"]["build_sha256"] == manifest_sha
        seal_sha = sha256_of((installed / "starfever" / ENVIRONMENT_MANIFEST).read_bytes())
        assert shown["runtime"]["ok"] is True, shown["runtime"]
        assert shown["runtime"]["environment_sha256"] == seal_sha
        assert shown["running_sha256"] == running_sha256(manifest_sha, seal_sha)
        assert shown["model"] == {"name": "default", "version": model.version,
                                  "sha256": model.sha256, "approved": True}
        assert shown["environment"] == "production"
        played = server.spin(token, line_bet=5).json()["round"]
        recalled = server.call("GET", f"/rounds/{played['id']}", token).json()
        assert recalled["build_sha256"] == running_sha256(manifest_sha, seal_sha)
        assert recalled["model_sha256"] == model.sha256
    audit = _run(installed, tmp_path, "audit", "--database-url", database)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "audit OK: 1 rounds" in audit.stdout


# The attacks of issue 34 (an attacker with write access to the install, ADR 0050), each on a
# virtual environment of its own holding a copy of the built package (its site folder is where
# a start-up hook goes; the dependencies come from this interpreter's site folder on
# PYTHONPATH, not reinstalled), sealed as a deployment seals it.
DEPENDENCIES = site.getsitepackages()[0]


def _venv_env(site_dir: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARFEVER_")}
    return {**env, "PYTHONPATH": f"{site_dir}{os.pathsep}{DEPENDENCIES}",
            "STARFEVER_SECRET_KEY": SECRET, "STARFEVER_AUDIT_KEY_FILE": audit_key_file(),
            **settings}


def _venv_run(deployed: tuple[Path, Path], cwd: Path, *args: str,
              **settings: str) -> subprocess.CompletedProcess[str]:
    python, site_dir = deployed
    return subprocess.run([str(python), *args], capture_output=True, text=True, timeout=180,
                          cwd=cwd, env=_venv_env(site_dir, **settings), check=False)


def _deployed_venv(installed: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A fresh virtual environment with the built package copied into its site folder (as
    pip would have put it there) and its environment sealed, which verifies; (its python,
    its site folder)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120, capture_output=True)
    python = venv / "bin" / "python"
    site_dir = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    for item in installed.iterdir():
        if item.name == "starfever" or item.name.endswith(".dist-info"):
            shutil.copytree(item, site_dir / item.name,
                            ignore=shutil.ignore_patterns(ENVIRONMENT_MANIFEST))
    deployed = python, site_dir
    sealed = _venv_run(deployed, tmp_path, "-m", "starfever.cli", "seal")
    assert sealed.returncode == 0, sealed.stdout + sealed.stderr
    return deployed


@pytest.fixture(scope="module")
def clean_venv(installed: Path, tmp_path_factory: pytest.TempPathFactory
               ) -> tuple[tuple[Path, Path], dict[str, Any]]:
    """The module's deployed virtual environment and its ``verify --json`` report (it
    verifies). A seal and a verify of a whole environment take seconds each, so the attacks
    share it: :func:`deployed` puts it back as it was after each."""
    work = tmp_path_factory.mktemp("venv")
    deployed = _deployed_venv(installed, work)
    ok = _venv_run(deployed, work, "-m", "starfever.cli", "verify", "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    return deployed, json.loads(ok.stdout)


@pytest.fixture
def deployed(clean_venv: tuple[tuple[Path, Path], dict[str, Any]]
             ) -> Iterator[tuple[Path, Path]]:
    """The module's deployed virtual environment for one attack; afterwards every file of
    its site folder is as it was (written back byte for byte, new files and folders
    removed), so the next test finds the environment that verified."""
    site_dir = clean_venv[0][1]
    before = {path: (path.read_bytes() if path.is_file() else None)
              for path in site_dir.rglob("*")}
    yield clean_venv[0]
    for path in sorted(site_dir.rglob("*"), reverse=True):  # a folder's files first
        if path not in before:
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink()
    for path, content in before.items():
        if content is not None and (not path.is_file() or path.read_bytes() != content):
            path.write_bytes(content)


def _refused_in_production(deployed: tuple[Path, Path], tmp_path: Path,
                           database: str) -> str:
    """``serve --model rtp94`` in production with only the default model approved: its one
    line on stderr (it must be refused, exit 2, before the database is made)."""
    done = _venv_run(deployed, tmp_path, "-m", "starfever.cli", "serve", "--database-url",
                     database, "--port", "0", "--model", "rtp94", **_production())
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "refusing to start in production" in done.stderr
    assert not Path(database.removeprefix("sqlite:///")).exists()
    return done.stderr


def test_forged_byte_code_fails_verify_and_production_refuses_to_start(
        deployed: tuple[Path, Path], tmp_path: Path, database: str) -> None:
    source = deployed[1] / "starfever" / "server" / "identity.py"
    text = source.read_text()
    edited = text.replace("    if not result.model_approved:",
                          "    if False:  # the approval check, removed") + "\nFORGED = True\n"
    assert edited != text
    # compiled from the edited source, stamped with the real source's mtime and size
    stat = source.stat()
    header = (importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
              + (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
              + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.write_bytes(header + marshal.dumps(compile(edited, str(source), "exec")))
    loaded = _venv_run(deployed, tmp_path, "-c", "import starfever.server.identity as i; "
                       "print(getattr(i, 'FORGED', False))")
    assert loaded.stdout.strip() == "True", loaded.stdout + loaded.stderr  # Python runs it
    verify = _venv_run(deployed, tmp_path, "-m", "starfever.cli", "verify")
    assert verify.returncode == 1, verify.stdout + verify.stderr
    named = f"byte code that is not the compile of its source: server/__pycache__/{pyc.name}"
    assert named in verify.stdout and "software MISMATCH" in verify.stdout
    assert named in _refused_in_production(deployed, tmp_path, database)
    # the check from a trusted copy, importing nothing of the install, finds it too
    alone = subprocess.run([sys.executable, "-I", "-S", "-B",
                            str(ROOT / "starfever" / "certify" / "manifest.py"),
                            str(deployed[1] / "starfever")],
                           capture_output=True, text=True, timeout=120, check=False)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert alone.stdout.splitlines()[1:] == [f"  {named}"]
    pyc.unlink()
    clean = subprocess.run(alone.args, capture_output=True, text=True, timeout=120, check=False)
    assert clean.returncode == 0 and " OK against " in clean.stdout, clean.stdout + clean.stderr


@pytest.mark.parametrize("hook", ["zz-approve.pth", "sitecustomize.py"])
def test_a_start_up_hook_fails_verify_and_production_refuses_to_start(
        deployed: tuple[Path, Path], tmp_path: Path, database: str, hook: str) -> None:
    rtp94 = load_model("rtp94").sha256
    # a hook that approves the 94 % model behind the configuration's back
    hook_file = deployed[1] / hook
    hook_file.write_text(f"import os; os.environ['STARFEVER_APPROVED_MODELS'] = '{rtp94}'\n")
    probe = _venv_run(deployed, tmp_path, "-c", "import os; "
                      "print(os.environ['STARFEVER_APPROVED_MODELS'])", **_production())
    assert probe.stdout.strip() == rtp94, probe.stdout + probe.stderr  # Python runs it
    verify = _venv_run(deployed, tmp_path, "-m", "starfever.cli", "verify")
    assert verify.returncode == 1, verify.stdout + verify.stderr
    assert "environment MISMATCH" in verify.stdout
    assert f"start-up hook not in the seal: {hook_file}" in verify.stdout
    assert f"start-up hook that no installed distribution records: {hook_file}" \
        in verify.stdout
    refused = _refused_in_production(deployed, tmp_path, database)
    assert "the environment does not match its seal" in refused and hook in refused
    # sealing it over is refused too: a seal records a clean environment
    reseal = _venv_run(deployed, tmp_path, "-m", "starfever.cli", "seal")
    assert reseal.returncode == 2 and "cannot seal this environment" in reseal.stderr
    assert len(reseal.stderr.strip().splitlines()) == 1


def test_a_hook_smuggled_into_a_record_and_resealed_changes_the_running_build_hash(
        clean_venv: tuple[tuple[Path, Path], dict[str, Any]], deployed: tuple[Path, Path],
        tmp_path: Path) -> None:
    before = clean_venv[1]  # the report of the environment as deployed
    hook = deployed[1] / "zz-approve.pth"
    hook.write_text("import os; os.environ['STARFEVER_APPROVED_MODELS'] = 'x'\n")
    digest = base64.urlsafe_b64encode(hashlib.sha256(hook.read_bytes()).digest())
    record = next(deployed[1].glob("starfever-*.dist-info")) / "RECORD"
    with record.open("a") as out:
        out.write(f"{hook.name},sha256={digest.decode().rstrip('=')},{hook.stat().st_size}\n")
    resealed = _venv_run(deployed, tmp_path, "-m", "starfever.cli", "seal")
    assert resealed.returncode == 0, resealed.stdout + resealed.stderr
    after = json.loads(_venv_run(deployed, tmp_path, "-m", "starfever.cli", "verify",
                                 "--json").stdout)
    # it verifies against its own seal, and the package is the certified build, but the
    # hash every round records is no longer the one the deployment recorded
    assert after["ok"] is True and after["build_sha256"] == before["build_sha256"]
    assert after["running_sha256"] != before["running_sha256"]
    assert after["environment"]["environment_sha256"] \
        != before["environment"]["environment_sha256"]
