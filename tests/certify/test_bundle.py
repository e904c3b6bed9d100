"""``starfever certify`` through the real command line: a complete bundle whose manifest
verifies and stops verifying when one byte changes; signing with a key from ``starfever
keygen``, verified with its public key, and a forged signature refused; bad input refused with
one line and exit code 2, leaving nothing behind."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from starfever.certify.manifest import file_sha256
from starfever.engine.model import load_model
from starfever.math.figures import cached
from tests.harness import run_cli, run_cli_in_process

pytestmark = pytest.mark.slow  # a bundle takes about a minute (numba compiles, the PAR sheet)

EXPECTED = ("MANIFEST.json", "MANIFEST.json.sig", "README.md", "certification.json",
            "model/default.json", "model/model.json", "rules/rules.de.html",
            "rules/rules.en.html", "rules/rules.de.txt", "rules/rules.en.txt", "rules/game.json",
            "figures/exact.json", "simulation/simulation.json", "par-sheet/par-sheet.md",
            "par-sheet/par-sheet.html", "par-sheet/win-distribution.png",
            "rng/rng-evidence.json", "rng/dieharder.txt", "software/software-check.json",
            "conditions/conditions.de.md", "conditions/conditions.de.html",
            "conditions/conditions.en.md", "conditions/conditions.en.html",
            "progressive/progressive.md", "progressive/progressive.html",
            "exposure/exposure.md", "exposure/exposure.html",
            "simulation/by-bet-class.json")


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lab's key pair (``PREFIX.key``, ``PREFIX.pub``)."""
    prefix = tmp_path_factory.mktemp("keys") / "lab"
    made = run_cli_in_process("keygen", "--out", str(prefix))
    assert made.returncode == 0, made.stderr
    assert "fingerprint" in made.stdout
    assert (prefix.parent / "lab.key").stat().st_mode & 0o777 == 0o600
    return prefix


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory, keys: Path) -> Iterator[Path]:
    """One signed bundle on a small simulation (the tests work on copies of it)."""
    out = tmp_path_factory.mktemp("bundle") / "bundle"
    made = run_cli("certify", "--out", str(out), "--spins", "2e5", "--seed", "7",
                   "--rng-stops", "5000", "--rng-rounds", "2000", "--workers", "1",
                   "--class-spins", "10000",
                   "--no-dieharder",  # minutes where it is installed: tests/rng has its own
                   "--sign-key", f"{keys}.key", timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "wrote the certification bundle" in made.stdout
    for part in ("model", "rules (de, en)", "game conditions (de, en)", "exact figures",
                 "simulation", "simulation per bet class (10,000 spins each)",
                 "progressive document, maximum exposure", "PAR sheet", "RNG evidence (quick)",
                 "software identity"):
        assert f"certify: {part}" in made.stderr and " done in " in made.stderr
    yield out


def _fingerprint(bundle: Path) -> str:
    """The key fingerprint the bundle's signature names."""
    return str(json.loads((bundle / "MANIFEST.json.sig").read_text())["public_key_sha256"])


def _copy(bundle: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(bundle, target)
    return target


def test_the_bundle_is_complete_and_says_what_it_holds(bundle: Path) -> None:
    for name in EXPECTED:
        assert (bundle / name).is_file(), name
    model = load_model("default")
    identity = json.loads((bundle / "model" / "model.json").read_text())
    assert identity["model_sha256"] == model.sha256
    assert identity["file_sha256"] == file_sha256(bundle / "model" / "default.json")
    exact = json.loads((bundle / "figures" / "exact.json").read_text())
    assert exact["model_sha256"] == model.sha256
    for key in ("components", "by_line_bet", "std_dev", "win_bands", "hold_and_cash_tails",
                "max_win_x", "exact", "methods"):
        assert key in exact, key
    assert set(exact["by_line_bet"]) == {"1", "2", "3", "4", "5", "10", "25", "50", "75", "100"}
    sim = json.loads((bundle / "simulation" / "simulation.json").read_text())
    assert sim["spins"] == 200_000 and sim["seed"] == 7
    # the claim is the 99 % half-width of the game's exact SD at this many spins: 2.5758 x
    # 10.479 / sqrt(200,000) = 6.04 pp for the default 3.0, and the bundle says no finer
    half = 2.5758 * exact["std_dev_game"] / 200_000 ** 0.5
    assert sim["claim"]["confirms_rtp_to_pp"] == pytest.approx(half * 100, abs=0.001)
    assert "no finer" in sim["claim"]["statement"]
    rng = json.loads((bundle / "rng" / "rng-evidence.json").read_text())
    assert all(p["proved"] for p in rng["scaling_proofs"].values())
    assert rng["scaling_proofs"]["base reel 1 stop"]["range"] == 80
    assert rng["live_reels"]["base reel 1"]["stops"] == 5000
    assert rng["live_rounds"]["rounds"] == 2000
    assert rng["dieharder"]["ran"] is False
    assert "left out" in (bundle / "rng" / "dieharder.txt").read_text()
    readme = (bundle / "README.md").read_text()
    assert "| simulation (200,000 spins, seed 7) |" in readme
    certification = json.loads((bundle / "certification.json").read_text())
    assert certification["model"]["sha256"] == model.sha256
    assert certification["signed_by"] == _fingerprint(bundle)
    assert f"Signed by the Ed25519 key with fingerprint `{_fingerprint(bundle)}`" in readme
    assert set(certification["seconds"]) >= {"model", "PAR sheet", "RNG evidence (quick)"}
    assert certification["rng"] == {"mode": "quick", "volume_stops": None}


def test_the_submission_holds_the_conditions_progressive_exposure_and_every_class(
        bundle: Path) -> None:
    from starfever.conditions import render
    from starfever.engine.symbols import BET_CLASSES
    from starfever.math.figures import figures

    model = load_model("default")
    for lang, text in render(model).items():
        assert (bundle / "conditions" / f"conditions.{lang}.md").read_text() == text.markdown
        assert (bundle / "conditions" / f"conditions.{lang}.html").read_text() == text.html
    figs = figures(model)
    progressive = (bundle / "progressive" / "progressive.md").read_text()
    for heading in ("## Seed", "## Funding: the contribution", "## Refills and who pays them",
                    "## Display", "## Accounting in the reports", "## When the game is withdrawn"):
        assert heading in progressive, heading
    assert f"EUR {model.seed_cents / 100:,.2f}" in progressive
    for name, run in figs.jackpot_long_run.items():
        assert f"| {name} | {run.refills:.6%} |" in progressive
    exposure = (bundle / "exposure" / "exposure.md").read_text()
    for tail in figs.hold_and_cash_tails:
        assert f"| {tail.k:,} | EUR {tail.k * 20:,.2f} | {tail.given_trigger:.6g} |" \
            in exposure
    by_class = json.loads((bundle / "simulation" / "by-bet-class.json").read_text())
    assert [doc["line_bet"] for doc in by_class["bet_classes"]] == list(BET_CLASSES)
    assert [doc["seed"] for doc in by_class["bet_classes"]] == list(range(8, 18))
    assert {doc["spins"] for doc in by_class["bet_classes"]} == {10_000}
    largest = max(doc["max_win"] for doc in by_class["bet_classes"])
    assert f"| {largest:,.2f} |" in exposure
    readme = (bundle / "README.md").read_text()
    for name in ("conditions/conditions.de.md", "progressive/progressive.md",
                 "exposure/exposure.md", "by-bet-class.json"):
        assert name in readme, name


def test_the_rules_are_the_clients_in_both_languages(bundle: Path) -> None:
    de = (bundle / "rules" / "rules.de.txt").read_text()
    en = (bundle / "rules" / "rules.en.txt").read_text()
    assert "Spielablauf" in de and "20 feste Gewinnlinien" in de and "95,50 %" in de
    assert "How to play" in en and "20 fixed paylines" in en and "95.50 %" in en
    assert "0,01 €, 0,02 €" in de and "€0.01, €0.02" in en
    assert "Diamant 25× 0,25 € 200× 2,00 € 600× 6,00 €" in de
    for text in (de, en):
        assert "{" not in text  # every placeholder of the client's texts filled
    figures = cached(load_model("default"))
    assert figures is not None
    hit = float(figures.exact.hit_frequency)
    one_in = {"hit": f"{1 / hit:.2f}", "star": f"{1 / figures.star_wild_frequency:.1f}",
              "hold": f"{1 / figures.hold_and_cash_frequency:.1f}"}
    assert (f"Hit frequency (a round's total win is above zero): {hit * 100:.2f} %, on average "
            f"1 in {one_in['hit']} rounds") in en
    assert (f"Star Wild comes on average 1 in {one_in['star']} rounds, Hold & Cash 1 in "
            f"{one_in['hold']} rounds") in en
    assert f"Trefferhäufigkeit (der Gesamtgewinn einer Runde ist größer als null): " \
           f"{hit * 100:.2f} %".replace(".", ",") in de
    assert f"Hold & Cash in 1 von {one_in['hold']} Runden".replace(".", ",") in de
    assert "so the respin cannot win the €€€" in en  # no shipped respin reel holds one
    assert "der Respin kann den €€€ nicht gewinnen" in de
    game = json.loads((bundle / "rules" / "game.json").read_text())
    assert game["model"] == {"name": "default", "version": load_model("default").version,
                             "progressive": True}


def test_the_manifest_verifies_and_one_changed_byte_is_named(bundle: Path,
                                                             tmp_path: Path) -> None:
    ok = run_cli_in_process("verify", "--bundle", str(bundle))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # signed, no key given: the files hold, the signature is not called verified
    assert ok.stdout.startswith("bundle files OK, signature NOT verified")
    assert "without --public-key LAB.pub the signature itself is not verified" in ok.stdout
    listed = json.loads((bundle / "MANIFEST.json").read_text())["files"]
    assert set(listed) == {p.relative_to(bundle).as_posix() for p in bundle.rglob("*")
                           if p.is_file()} - {"MANIFEST.json", "MANIFEST.json.sig"}
    copy = _copy(bundle, tmp_path)
    target = copy / "figures" / "exact.json"
    data = bytearray(target.read_bytes())
    data[100] ^= 1
    target.write_bytes(bytes(data))
    (copy / "extra.txt").write_text("slipped in")
    (copy / "MANIFEST.json.sig").unlink()
    bad = run_cli_in_process("verify", "--bundle", str(copy))
    assert bad.returncode == 1
    assert "changed: figures/exact.json" in bad.stdout
    assert "not in the manifest: extra.txt" in bad.stdout
    assert "the bundle has no MANIFEST.json.sig (not signed)" in bad.stdout


def test_the_signature_verifies_under_the_labs_key_and_a_forgery_does_not(
        bundle: Path, keys: Path, tmp_path: Path) -> None:
    ok = run_cli_in_process("verify", "--bundle", str(bundle), "--public-key", f"{keys}.pub")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "signature OK" in ok.stdout
    # another key's public half: the signature does not hold
    other = tmp_path / "other"
    assert run_cli_in_process("keygen", "--out", str(other)).returncode == 0
    forged_key = run_cli_in_process("verify", "--bundle", str(bundle),
                                    "--public-key", f"{other}.pub")
    assert forged_key.returncode == 1 and "does not hold" in forged_key.stdout
    # a manifest rewritten to match a changed file, its signature kept: refused
    copy = _copy(bundle, tmp_path)
    (copy / "README.md").write_text("a different story\n")
    manifest = json.loads((copy / "MANIFEST.json").read_text())
    manifest["files"]["README.md"] = file_sha256(copy / "README.md")
    (copy / "MANIFEST.json").write_text(json.dumps(manifest, sort_keys=True,
                                                   separators=(",", ":")) + "\n")
    rewritten = run_cli_in_process("verify", "--bundle", str(copy),
                                   "--public-key", f"{keys}.pub")
    assert rewritten.returncode == 1 and "signature" in rewritten.stdout
    # a signature re-made with the other key, claiming to be the lab's: refused
    assert run_cli_in_process("sign", str(copy / "MANIFEST.json"), "--key", f"{other}.key",
                              "--out", str(copy / "MANIFEST.json.sig")).returncode == 0
    resigned = run_cli_in_process("verify", "--bundle", str(copy),
                                  "--public-key", f"{keys}.pub")
    assert resigned.returncode == 1 and "does not hold" in resigned.stdout
    # the software manifest the bundle carries is signed by the same key
    software = run_cli_in_process("verify", "--manifest", str(bundle / "software" /
                                                              "software-manifest.json"),
                                  "--public-key", f"{keys}.pub")
    assert "signature OK" in software.stdout, software.stdout


@pytest.mark.parametrize(("args", "says"), [
    (["--spins", "lots"], "must be a whole number"),
    (["--spins", "1.5"], "must be a whole number"),
    (["--spins", "10"], "--spins must be at least 100,000"),
    (["--spins", "1e6", "--seed", "-1"], "--seed must be a whole number from 0 to"),
    (["--spins", "1e6", "--seed", str(2**128)], "--seed must be a whole number from 0 to"),
    (["--spins", "1e6", "--workers", "0"], "--workers must be a whole number from 1 to"),
    (["--spins", "1e6", "--model", "nosuch"], "unknown model"),
    (["--spins", "1e6", "--sign-key", "/nonexistent/lab.key"], "cannot read the signing key"),
    (["--spins", "1e6", "--rng", "bogus"], "--rng must be quick or full, got 'bogus'"),
    (["--spins", "1e6", "--rng-volume", "1e6"], "--rng-volume goes with --rng full"),
    (["--spins", "1e6", "--dieharder-runs", "2"], "--dieharder-runs goes with --rng full"),
    (["--spins", "1e6", "--rng", "full", "--rng-volume", "10"],
     "--rng-volume must be at least 1,000"),
    (["--spins", "1e6", "--class-spins", "5"], "--class-spins must be at least 10,000"),
    (["--spins", "1e6", "--market", "xx"], "unknown market 'xx'"),
    (["--spins", "1e6", "--market", "de"], "the market allows no progressive"),
])
def test_bad_input_is_refused_in_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    out = tmp_path / "out"
    refused = run_cli_in_process("certify", "--out", str(out), *args)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert says in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_the_labs_key_from_the_environment_is_used(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refused = run_cli_in_process("certify", "--out", str(out), "--spins", "1e6",
                                 env={"STARFEVER_SIGNING_KEY": "/nonexistent/lab.key"})
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "cannot read the signing key" in refused.stderr
    assert "/nonexistent/lab.key" in refused.stderr and not out.exists()


def test_a_non_empty_folder_and_a_file_are_refused(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    (tmp_path / "file").write_text("x")
    for target, says in ((tmp_path / "full", "is not empty"),
                         (tmp_path / "file", "is not a folder")):
        refused = run_cli_in_process("certify", "--out", str(target), "--spins", "1e6")
        assert refused.returncode == 2 and says in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]


def test_keys_are_never_overwritten_and_bad_keys_are_refused(keys: Path, tmp_path: Path) -> None:
    again = run_cli_in_process("keygen", "--out", str(keys))
    assert again.returncode == 2 and "never overwritten" in again.stderr
    junk = tmp_path / "junk.pub"
    junk.write_text("not a key")
    refused = run_cli_in_process("verify", "--bundle", str(tmp_path),
                                 "--public-key", str(junk))
    assert refused.returncode == 2 and "is not a PEM public key" in refused.stderr
