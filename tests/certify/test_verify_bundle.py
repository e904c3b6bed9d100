"""``starfever verify --bundle`` says what it checked and what it could not: without the lab's
public key it checks every file against the manifest and that the signature file names THIS
manifest's hash, and never says "bundle OK"; a signature file that records another manifest
fails; ``--require-signature`` fails without a verified signature. The folders here are small
bundles written by the bundle's own manifest writer and signed by ``starfever sign``; the
commands run in this process (ADR 0042: an answer, not a process's start-up, is under test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from starfever.certify.bundle import write_manifest
from tests.harness import run_cli_in_process


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("keys") / "lab"
    assert run_cli_in_process("keygen", "--out", str(prefix)).returncode == 0
    return prefix


def _bundle(folder: Path, text: str = "the figures\n") -> Path:
    folder.mkdir()
    (folder / "figures").mkdir()
    (folder / "figures" / "exact.json").write_text(text)
    (folder / "README.md").write_text("a bundle\n")
    write_manifest(folder)
    return folder


def _sign(folder: Path, keys: Path) -> None:
    signed = run_cli_in_process("sign", str(folder / "MANIFEST.json"), "--key", f"{keys}.key")
    assert signed.returncode == 0, signed.stderr


def _verify(folder: Path, *args: str, as_json: bool = False) -> tuple[int, str, dict[str, Any]]:
    """Exit code, text and (``as_json``: the ``--json`` answer, whose exit code must agree)."""
    text = run_cli_in_process("verify", "--bundle", str(folder), *args)
    data: dict[str, Any] = {}
    if as_json:
        answer = run_cli_in_process("verify", "--bundle", str(folder), "--json", *args)
        assert answer.returncode == text.returncode
        data = json.loads(answer.stdout)
    return text.returncode, text.stdout, data


def test_an_unsigned_bundle_verifies_its_files_and_says_it_is_not_signed(tmp_path: Path) -> None:
    folder = _bundle(tmp_path / "b")
    code, out, data = _verify(folder, as_json=True)
    assert code == 0
    assert out.startswith("bundle files OK, signature NOT verified")
    assert "bundle OK" not in out
    assert "the bundle has no MANIFEST.json.sig (not signed)" in out
    assert data["ok"] is True and data["signature"] == {
        "status": "absent", "claimed_key_sha256": None, "public_key_sha256": None}
    code, out, _ = _verify(folder, "--require-signature")
    assert code == 1
    assert "signature required (--require-signature) and not verified" in out


def test_a_signed_bundle_without_the_key_is_not_called_ok(tmp_path: Path, keys: Path) -> None:
    folder = _bundle(tmp_path / "b")
    _sign(folder, keys)
    code, out, data = _verify(folder, as_json=True)
    assert code == 0 and "bundle OK" not in out
    assert out.startswith("bundle files OK, signature NOT verified")
    assert "names this manifest" in out and "anyone can write such a file" in out
    assert data["signature"]["status"] == "names_this_manifest"
    code, out, _ = _verify(folder, "--require-signature")
    assert code == 1 and "give the lab's key with --public-key LAB.pub" in out
    code, out, data = _verify(folder, "--public-key", f"{keys}.pub", "--require-signature",
                              as_json=True)
    assert code == 0 and out.startswith("bundle OK") and "signature OK" in out
    assert data["signature"]["status"] == "verified"


def test_a_signature_of_another_manifest_fails_even_without_the_key(tmp_path: Path,
                                                                    keys: Path) -> None:
    folder = _bundle(tmp_path / "b")
    _sign(folder, keys)
    signature = (folder / "MANIFEST.json.sig").read_bytes()
    # a changed file and a manifest rewritten to match it, the old signature kept
    (folder / "figures" / "exact.json").write_text("other figures\n")
    write_manifest(folder)
    assert (folder / "MANIFEST.json.sig").read_bytes() == signature
    code, out, data = _verify(folder, as_json=True)
    assert code == 1 and out.startswith("bundle MISMATCH") and "bundle OK" not in out
    assert "records another manifest" in out
    assert data["signature"]["status"] == "other_manifest"
    code, out, _ = _verify(folder, "--public-key", f"{keys}.pub")
    assert code == 1 and "does not hold" in out


def test_a_signature_under_another_key_fails_with_the_labs_key(tmp_path: Path,
                                                               keys: Path) -> None:
    folder = _bundle(tmp_path / "b")
    other = tmp_path / "other"
    assert run_cli_in_process("keygen", "--out", str(other)).returncode == 0
    _sign(folder, other)
    code, out, _ = _verify(folder)  # it names this manifest: the files hold, nothing more
    assert code == 0 and out.startswith("bundle files OK, signature NOT verified")
    code, out, data = _verify(folder, "--public-key", f"{keys}.pub", as_json=True)
    assert code == 1 and "does not hold" in out
    assert data["signature"]["status"] == "invalid"


def test_a_signature_file_that_is_not_one_fails(tmp_path: Path) -> None:
    folder = _bundle(tmp_path / "b")
    (folder / "MANIFEST.json.sig").write_text("not a signature")
    code, out, _ = _verify(folder)
    assert code == 1 and "is not a signature file" in out


def test_require_signature_needs_a_bundle(tmp_path: Path) -> None:
    refused = run_cli_in_process("verify", "--require-signature")
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "--require-signature goes with --bundle" in refused.stderr
