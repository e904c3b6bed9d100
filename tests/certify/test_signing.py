"""Ed25519 keys and signatures (``starfever keygen``, ``starfever sign``), a passphrase-protected
key, the rules renderer's refusal of a client text it cannot fill, and a failed bundle leaving
nothing behind. The commands' answers and refusals run in process (``run_cli_in_process``, ADR
0042): a process of their own would prove nothing more and cost a second of imports each."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from starfever.certify import bundle, rng_evidence, rules, signing
from starfever.engine.model import load_model
from tests.harness import run_cli_in_process


def test_sign_and_verify_round_trip_and_a_changed_file_is_refused(tmp_path: Path) -> None:
    private, public, print_ = signing.generate(tmp_path / "lab")
    target = tmp_path / "manifest.json"
    target.write_bytes(b'{"files":{}}\n')
    signing.sign_file(signing.load_private(private), target)
    verified = signing.verify_file(signing.load_public(public), target)
    assert verified.public_key_sha256 == print_
    target.write_bytes(b'{"files":{"x":"y"}}\n')
    with pytest.raises(signing.SigningError, match="does not hold"):
        signing.verify_file(signing.load_public(public), target)
    with pytest.raises(signing.SigningError, match="is not a PEM public key"):
        signing.load_public(private)


def test_a_key_under_a_passphrase_needs_it(tmp_path: Path) -> None:
    phrase = {"STARFEVER_SIGNING_PASSPHRASE": "correct horse battery staple"}
    assert run_cli_in_process("keygen", "--out", str(tmp_path / "lab"), env=phrase).returncode == 0
    assert b"ENCRYPTED" in (tmp_path / "lab.key").read_bytes()
    target = tmp_path / "file.txt"
    target.write_text("to sign\n")
    without = run_cli_in_process("sign", str(target), "--key", str(tmp_path / "lab.key"),
                      env={"STARFEVER_SIGNING_PASSPHRASE": ""})
    assert without.returncode == 2 and "is encrypted" in without.stderr
    wrong = run_cli_in_process("sign", str(target), "--key", str(tmp_path / "lab.key"),
                    env={"STARFEVER_SIGNING_PASSPHRASE": "wrong"})
    assert wrong.returncode == 2 and "passphrase" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1
    signed = run_cli_in_process("sign", str(target), "--key", str(tmp_path / "lab.key"), env=phrase)
    assert signed.returncode == 0, signed.stderr
    public = signing.load_public(tmp_path / "lab.pub")
    assert signing.verify_file(public, target).sha256


def test_the_rules_renderer_refuses_what_it_cannot_fill(tmp_path: Path) -> None:
    rendered = rules.render(load_model("default"))
    assert set(rendered) == {"de", "en"}
    with pytest.raises(rules.RulesError, match="cannot fill: max_win"):
        rules.fill("<p>Max {max_win} x</p>", {"lines": 20})
    changed = tmp_path / "i18n.js"
    changed.write_text(rules.I18N_JS.read_text(encoding="utf-8").replace("rulesHtml:",
                                                                         "rulesText:"),
                       encoding="utf-8")
    with pytest.raises(rules.RulesError, match="lack rulesHtml"):
        rules.client_strings(changed)
    assert rules.format_cents(123456, "de") == "1.234,56\u00a0€"
    assert rules.format_cents(123456, "en") == "€1,234.56"


def test_a_bundle_that_fails_half_way_leaves_nothing(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(model: object, market: object = None) -> dict[str, dict[str, str]]:
        raise rules.RulesError("the client's text has placeholders the bundle cannot fill: x")

    monkeypatch.setattr(rules, "render", broken)  # the second part fails, the first is written
    new, empty = tmp_path / "new", tmp_path / "empty"
    empty.mkdir()
    for out in (new, empty):
        with pytest.raises(rules.RulesError):
            bundle.make(bundle.Options(out=out, spins=10**6))
    assert not new.exists()
    assert empty.is_dir() and list(empty.iterdir()) == []  # the folder given stays, empty


def test_without_dieharder_the_bundle_says_so(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH on which no dieharder is found
    result = rng_evidence.dieharder()
    assert result["installed"] is False and result["ran"] is False
    assert "dieharder is not installed" in result["note"]
    assert rng_evidence.failures({"scaling_proofs": {}, "live_reels": {}, "dieharder": result,
                                  "live_rounds": {"first_stop_chi_square_p": 0.5,
                                                  "win_runs_p": 0.5, "feature_p": 0.5}}) == []


@pytest.mark.parametrize(("args", "says"), [
    (["--signature", "x.sig"], "--signature goes with --public-key"),
    (["--bundle", ".", "--manifest", "m.json"], "either --bundle or --manifest"),
    (["--public-key", "/nonexistent/lab.pub"], "cannot read the public key"),
    (["--manifest", "/nonexistent/m.json"], "cannot read the software manifest"),
])
def test_verify_refuses_bad_input_in_one_line(args: list[str], says: str) -> None:
    refused = run_cli_in_process("verify", *args)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert says in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_an_unsigned_bundle_says_so_and_a_signed_one_names_its_key(tmp_path: Path) -> None:
    from starfever.certify.cli import certify_summary

    made = bundle.Bundle(out=tmp_path / "b", seconds={"model": 1.0}, manifest_sha256="ab" * 32)
    unsigned = certify_summary(made)
    assert unsigned[0].endswith(", NOT signed)")
    assert unsigned[-1].startswith("  WARNING not signed:") and "STARFEVER_SIGNING_KEY" in \
        unsigned[-1]
    made.signed_by = "cd" * 32
    signed = certify_summary(made)
    assert signed == [f"wrote the certification bundle {tmp_path / 'b'} in 1 s (MANIFEST.json "
                      f"sha256 {'ab' * 32}, signed by key {'cd' * 8}...)"]


@pytest.mark.skipif(shutil.which("dieharder") is None, reason="dieharder is not installed")
def test_the_dieharder_subset_says_each_test_as_it_runs() -> None:
    said: list[str] = []
    # the real dieharder on the live stream, each test cut off after a second: the slow ones
    # give no verdict (a fast one may finish in time on an idle machine)
    result = rng_evidence.dieharder(timeout=1, say=said.append)
    names = list(rng_evidence.DIEHARDER_TESTS.values())
    assert said[0] == f"dieharder {names[0]} (1 of 3, up to 1 s) ..."
    assert [line.split()[1] for line in said] == [n for n in names for _ in (0, 1)]
    verdicts = [line.split(": ", 1)[1] for line in said[1::2]]
    assert all(" done in " in line for line in said[1::2])
    assert all(v == "no result" or set(v.split(", ")) <= {"PASSED", "WEAK", "FAILED"}
               for v in verdicts)
    assert "no result" in verdicts  # the slowest runs for tens of seconds
    # a test cut off without a verdict is not a pass, whatever the others said
    assert result["ran"] is True and result["passed"] is False
    assert rng_evidence.failures({"scaling_proofs": {}, "live_reels": {}, "dieharder": result,
                                  "live_rounds": {"first_stop_chi_square_p": 1.0,
                                                  "win_runs_p": 1.0, "feature_p": 1.0}}) \
        == ["dieharder subset: a test FAILED or gave no result"]
    assert all(test["seconds"] < 30 for test in result["tests"].values())
