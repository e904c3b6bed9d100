"""``starfever certify``: one submission folder for a test lab (ADR 0021).

Every part is made by the code that owns it: the rules by the client's own texts and game data
(:mod:`starfever.certify.rules`), the exact figures by ``starfever.math.figures`` (what
``starfever rtp --json --exact`` prints), the simulation by ``starfever.sim`` (never calling
the exact calculator), the PAR sheet by ``starfever.report.parsheet`` (fed that simulation),
the RNG evidence by :mod:`starfever.certify.rng_evidence`, the software identity by
:mod:`starfever.certify.software`. ``MANIFEST.json`` lists every other file with its SHA-256
and, with a signing key, ``MANIFEST.json.sig`` signs it.
"""

from __future__ import annotations

import json
import math
import platform
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from tqdm import tqdm

from starfever.certify import rng_evidence, rules, signing, software
from starfever.certify.defaults import (
    DEFAULT_CLASS_SPINS,
    DEFAULT_RNG_ROUNDS,
    DEFAULT_RNG_STOPS,
    DEFAULT_RNG_VOLUME,
    DEFAULT_SPINS,
    MIN_CLASS_SPINS,
    MIN_SPINS,
    RNG_MODES,
)
from starfever.certify.manifest import BUNDLE_FORMAT, SOFTWARE_MANIFEST, canonical, file_sha256
from starfever.engine.errors import InputError
from starfever.engine.model import MathModel, check_offered, load_model, shipped_models
from starfever.markets import check_model, load_market
from starfever.math.figures_format import Figures
from starfever.math.stats import Z99

MANIFEST = "MANIFEST.json"


@dataclass
class Options:
    """What ``starfever certify`` was asked for."""

    out: Path
    model: str = "default"
    spins: int = DEFAULT_SPINS
    seed: int | None = None
    workers: int | None = None
    rng_stops: int = DEFAULT_RNG_STOPS
    rng_rounds: int = DEFAULT_RNG_ROUNDS
    sign_key: Path | None = None
    progress: bool = False
    dieharder: bool = True
    """Run dieharder when it is installed (the subset: minutes; the full battery: hours)."""
    class_spins: int = DEFAULT_CLASS_SPINS
    """Simulated spins at each bet class."""
    rng: str = "quick"
    """``quick`` or ``full`` (:data:`~starfever.certify.defaults.RNG_MODES`)."""
    rng_volume: int = DEFAULT_RNG_VOLUME
    """With ``rng="full"``: live stops of the volume tests, all strips together."""
    dieharder_runs: int | None = None
    """With ``rng="full"``: only the first this many runs of the battery (None: all)."""
    market: str | None = None
    """The market profile the bundle is for (certification is per jurisdiction): its rules
    in the rules pages, its section in the game conditions (ADR 0077); ``None``: the model's
    rules only, the presentation of the default market."""


@dataclass
class Bundle:
    """A written bundle."""

    out: Path
    seconds: dict[str, float] = field(default_factory=dict)
    manifest_sha256: str = ""
    signed_by: str | None = None
    warnings: list[str] = field(default_factory=list)


def check_options(options: Options) -> None:
    """Refuse what cannot make a bundle, before anything is written."""
    out = options.out
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} exists and is not a folder")
    if not out.exists() and not out.absolute().parent.is_dir():
        raise InputError(f"--out {str(out)!r}: no folder {str(out.parent)!r} (the parent "
                         "folder must exist)")
    if out.is_dir() and any(out.iterdir()):
        raise InputError(f"--out {str(out)!r} is not empty: a bundle is written into a new or "
                         "empty folder")
    if options.spins < MIN_SPINS:
        raise InputError(f"--spins must be at least {MIN_SPINS:,}, got {options.spins:,}")
    if options.seed is not None and options.seed < 0:
        raise InputError(f"--seed must not be negative, got {options.seed}")
    if options.workers is not None and options.workers < 1:
        raise InputError(f"--workers must be at least 1, got {options.workers}")
    if options.rng_stops < 1000 or options.rng_rounds < 1000:
        raise InputError("--rng-stops and --rng-rounds must be at least 1000")
    if options.class_spins < MIN_CLASS_SPINS:
        raise InputError(f"--class-spins must be at least {MIN_CLASS_SPINS:,}, got "
                         f"{options.class_spins:,}")
    if options.rng not in RNG_MODES:
        raise InputError(f"--rng must be {' or '.join(RNG_MODES)}, got {options.rng!r}")
    if options.rng_volume < 1000:
        raise InputError(f"--rng-volume must be at least 1,000, got {options.rng_volume:,}")
    if options.dieharder_runs is not None and options.dieharder_runs < 1:
        raise InputError(f"--dieharder-runs must be at least 1, got {options.dieharder_runs}")


class _Steps:
    """Times each part and says so on stderr."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        print(f"certify: {name} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        yield
        seconds = time.perf_counter() - started
        self.bundle.seconds[name] = round(seconds, 3)
        print(f"certify: {name} done in {seconds:.1f} s", file=sys.stderr, flush=True)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                    encoding="utf-8")


def model_file(name_or_path: str) -> tuple[str, bytes]:
    """The model file's name and exact bytes (a shipped model's packaged file, or the path)."""
    path = Path(name_or_path)
    if path.suffix != ".json" and not path.exists() and name_or_path in shipped_models():
        data = (resources.files("starfever") / "models" / f"{name_or_path}.json").read_bytes()
        return f"{name_or_path}.json", data
    return path.name, path.read_bytes()


def make(options: Options) -> Bundle:
    """Write the bundle of ``options`` (checked first). A run that fails or is interrupted
    removes what it wrote: no half bundle is left to be taken for a whole one."""
    check_options(options)
    model = load_model(options.model)
    check_offered(model)  # a certified model is one to offer: refused before any work
    if options.market is not None:  # and one the market allows
        check_model(load_market(options.market), model)
    key = signing.load_private(options.sign_key) if options.sign_key else None
    out = options.out
    existed = out.exists()
    out.mkdir(exist_ok=True)
    try:
        return _make(options, model, key)
    except BaseException:
        if existed:
            for child in list(out.iterdir()):
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        else:
            shutil.rmtree(out, ignore_errors=True)
        raise


def _make(options: Options, model: MathModel, key: Any) -> Bundle:
    seed = options.seed if options.seed is not None else _fresh_seed()
    out = options.out
    bundle = Bundle(out=out)
    steps = _Steps(bundle)
    with steps.step("model"):
        name, data = model_file(options.model)
        (out / "model").mkdir()
        (out / "model" / name).write_bytes(data)
        _write_json(out / "model" / "model.json", {
            "name": model.name, "version": model.version, "file": name,
            "file_sha256": file_sha256(out / "model" / name), "model_sha256": model.sha256,
            "model_sha256_is": "SHA-256 of the model's canonical JSON (sorted keys, no "
                               "spaces): what rounds record, `starfever rtp` prints and "
                               "STARFEVER_APPROVED_MODELS lists; the file's layout does not "
                               "change it"})
    market = None if options.market is None else load_market(options.market)
    with steps.step("rules (de, en)"):
        rendered = rules.render(model, market=market)
        for lang, pages in rendered.items():
            (out / "rules").mkdir(exist_ok=True)
            (out / "rules" / f"rules.{lang}.html").write_text(pages["html"], encoding="utf-8")
            (out / "rules" / f"rules.{lang}.txt").write_text(pages["text"], encoding="utf-8")
        from starfever.web.routes import game_data

        _write_json(out / "rules" / "game.json", game_data(model, market))
    with steps.step("game conditions (de, en)"):
        from starfever.conditions import render as render_conditions

        for lang, text in render_conditions(model, market=market).items():
            (out / "conditions").mkdir(exist_ok=True)
            (out / "conditions" / f"conditions.{lang}.md").write_text(text.markdown,
                                                                      encoding="utf-8")
            (out / "conditions" / f"conditions.{lang}.html").write_text(text.html,
                                                                        encoding="utf-8")
    with steps.step("exact figures"):
        from starfever.math.figures import figures

        figs = figures(model)
        _write_json(out / "figures" / "exact.json", figs.to_json())
    report_box: dict[str, Any] = {}
    with steps.step(f"simulation ({options.spins:,} spins, seed {seed})"):
        sim = _simulate(model, options, seed, report_box)
        claim = simulation_claim(sim.spins, figs.std_dev_game)
        from starfever.sim.cli import exact_figures, result_json

        sim_doc = result_json(sim, exact_figures(report_box["report"]), 1, model)
        sim_doc["claim"] = claim
        _write_json(out / "simulation" / "simulation.json", sim_doc)
        if not sim_doc["inside"]:
            bundle.warnings.append("the simulated total RTP's 99 % interval does not contain "
                                   "the exact value")
    with steps.step(f"simulation per bet class ({options.class_spins:,} spins each)"):
        by_class = _simulate_classes(model, options, seed, exact_figures(report_box["report"]))
        _write_json(out / "simulation" / "by-bet-class.json", by_class)
        bad = [str(doc["line_bet"]) for doc in by_class["bet_classes"] if not doc["inside"]]
        if bad:
            bundle.warnings.append("the simulated total RTP's 99 % interval does not contain "
                                   f"the exact value at line bet(s) {', '.join(bad)} cents")
    pool = model.has_progressive  # without the €€€ no document names a pool (ADR 0077)
    with steps.step("progressive document, maximum exposure" if pool else "maximum exposure"):
        from starfever.certify.documents import exposure_document, progressive_document

        if pool:
            (out / "progressive").mkdir()
            progressive = progressive_document(model, figs)
            (out / "progressive" / "progressive.md").write_text(progressive.markdown(),
                                                                encoding="utf-8")
            (out / "progressive" / "progressive.html").write_text(progressive.html(),
                                                                  encoding="utf-8")
        seen = [(f"main (line bet 1 cent, seed {seed})", sim.spins, sim.max_win)] + [
            (f"line bet {doc['line_bet']} cents (seed {doc['seed']})", doc["spins"],
             doc["max_win"]) for doc in by_class["bet_classes"]]
        exposure = exposure_document(model, figs, seen)
        (out / "exposure").mkdir()
        (out / "exposure" / "exposure.md").write_text(exposure.markdown(), encoding="utf-8")
        (out / "exposure" / "exposure.html").write_text(exposure.html(), encoding="utf-8")
    with steps.step("PAR sheet"):
        from starfever.report.parsheet import build

        sheet = out / "par-sheet"
        sheet.mkdir()
        doc = build(model, report_box["report"], sim, sheet, figs, progress=options.progress)
        (sheet / "par-sheet.md").write_text(doc.markdown(), encoding="utf-8")
        (sheet / "par-sheet.html").write_text(doc.html(), encoding="utf-8")
    with steps.step(f"RNG evidence ({options.rng})"):
        evidence = _rng(model, figs, options)
        _write_json(out / "rng" / "rng-evidence.json", evidence)
        (out / "rng" / "dieharder.txt").write_text(_dieharder_text(evidence["dieharder"]),
                                                   encoding="utf-8")
        bundle.warnings += [f"RNG: {line}" for line in rng_evidence.failures(evidence)]
    with steps.step("software identity"):
        checked = software.check()
        (out / "software").mkdir()
        shipped = checked.root / SOFTWARE_MANIFEST
        if shipped.exists():
            shutil.copyfile(shipped, out / "software" / SOFTWARE_MANIFEST)
        _write_json(out / "software" / "software-check.json", checked.to_dict())
        if not checked.ok:
            bundle.warnings.append("software: " + checked.summary())
    signer = signing.fingerprint(key.public_key()) if key is not None else None
    if key is not None and (out / "software" / SOFTWARE_MANIFEST).exists():
        signing.sign_file(key, out / "software" / SOFTWARE_MANIFEST)
    _write_json(out / "certification.json", {
        "model": {"name": model.name, "version": model.version, "sha256": model.sha256},
        "build_sha256": checked.build_sha256, "software_ok": checked.ok,
        "software_manifest_sha256": checked.manifest_sha256,
        "simulation": {"spins": sim.spins, "seed": seed, **claim},
        "simulation_per_bet_class": {"spins": options.class_spins,
                                     "seeds": "seed + 1 + class index"},
        "rng": {"mode": options.rng, "volume_stops": options.rng_volume
                if options.rng == "full" else None},
        "seconds": bundle.seconds, "warnings": bundle.warnings,
        "made_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "made_by": f"starfever {checked.version} certify", "signed_by": signer,
        "python": platform.python_version(), "platform": platform.platform()})
    (out / "README.md").write_text(_readme(model, figs, claim, seed, bundle, checked, signer),
                                   encoding="utf-8")
    bundle.manifest_sha256 = write_manifest(out)
    if key is not None:
        signing.sign_file(key, out / MANIFEST)
        bundle.signed_by = signer
    return bundle


def _fresh_seed() -> int:
    import secrets

    return secrets.randbelow(2**63)


def _simulate(model: MathModel, options: Options, seed: int, box: dict[str, Any]) -> Any:
    from starfever.math.exact import compute
    from starfever.sim.runner import simulate

    def exact_meanwhile() -> None:
        box["report"] = compute(model)

    try:
        return simulate(model, options.spins, seed, workers=options.workers,
                        progress=options.progress, meanwhile=exact_meanwhile)
    except ValueError as error:
        raise InputError(str(error)) from None


def _simulate_classes(model: MathModel, options: Options, seed: int,
                      exact: dict[str, float]) -> dict[str, Any]:
    """The simulation at every bet class (``starfever simulate --line-bet all``'s document):
    class ``i`` plays ``class_spins`` from seed + 1 + i (the main simulation has the seed)."""
    from starfever.engine.symbols import BET_CLASSES
    from starfever.sim.cli import result_json
    from starfever.sim.runner import simulate

    docs = []
    for i, bet in enumerate(BET_CLASSES):
        try:
            result = simulate(model, options.class_spins, seed + 1 + i,
                              workers=options.workers, progress=options.progress)
        except ValueError as error:
            raise InputError(str(error)) from None
        docs.append(result_json(result, exact, int(bet), model))
    return {"model": model.name, "model_version": model.version,
            "model_sha256": model.sha256, "spins_per_class": options.class_spins,
            "note": "bet class i plays from seed + 1 + i; the game pays in multiples of the "
                    "line bet, so its RTP is the same law at every class and only the EUR pool "
                    "(progressive_pool, replayed in play order) depends on the class",
            "bet_classes": docs}


def simulation_claim(spins: int, std_dev: float) -> dict[str, Any]:
    """What a simulation of ``spins`` can confirm: the 99 % half-width around the RTP."""
    half = Z99 * std_dev / math.sqrt(spins)
    return {"confirms_rtp_to_pp": round(half * 100, 4),
            "statement": f"{spins:,} independent simulated spins confirm the exact total RTP "
                         f"to +/- {half * 100:.3f} percentage points at 99 % confidence (the "
                         f"game's exact standard deviation {std_dev:.3f} x total bet), no "
                         "finer; the exact figures do not rest on the simulation"}


def _rng(model: MathModel, figs: Figures, options: Options) -> dict[str, Any]:
    bounds = rng_evidence.ranges(model)
    proofs = {}
    for name, n in tqdm(bounds.items(), desc="scaling proofs", unit="range",
                        disable=not options.progress, leave=False):
        proofs[name] = rng_evidence.prove_uniform(n)
    reels = len(model.base_reels) + len(model.star_wild_reels)
    with tqdm(total=reels * options.rng_stops, desc="live stops", unit="stop",
              unit_scale=True, disable=not options.progress, leave=False) as bar:
        live = rng_evidence.reel_tests(model, options.rng_stops, bar.update)
    feature_p = figs.star_wild_frequency + figs.hold_and_cash_frequency
    with tqdm(total=options.rng_rounds, desc="live rounds", unit="round",
              disable=not options.progress, leave=False) as bar:
        live_rounds = rng_evidence.round_tests(model, options.rng_rounds, feature_p, bar.update)
    evidence: dict[str, Any] = {
        "mode": options.rng,
        "source": "starfever.engine.rng.SystemRandomSource (os.urandom, rejection sampling), "
                  "the only live-play source",
        "alpha": rng_evidence.ALPHA, "scaling_proofs": proofs, "live_reels": live,
        "live_rounds": live_rounds}
    if options.rng == "full":
        from starfever.certify.rng_volume import full_battery, volume_tests

        with tqdm(total=options.rng_volume, desc="live stops (volume)", unit="stop",
                  unit_scale=True, disable=not options.progress, leave=False) as bar:
            evidence["volume"] = volume_tests(model, options.rng_volume, bar.update)
        evidence["dieharder"] = (
            full_battery(_say, options.progress, limit=options.dieharder_runs)
            if options.dieharder else
            {"installed": shutil.which("dieharder") is not None, "ran": False,
             "battery": "full", "note": "dieharder was left out (starfever certify "
                                        "--no-dieharder)"})
        return evidence
    evidence["dieharder"] = (
        rng_evidence.dieharder(say=_say) if options.dieharder else
        {"installed": shutil.which("dieharder") is not None, "ran": False,
         "note": "the dieharder subset was left out (starfever certify --no-dieharder); "
                 "starfever certify --rng full runs the whole battery"})
    return evidence


def _say(line: str) -> None:
    """A line of progress on stderr (the dieharder subset has no bar: minutes per test)."""
    print(f"certify: {line}", file=sys.stderr, flush=True)


def _dieharder_text(result: dict[str, Any]) -> str:
    if not result.get("ran"):
        return str(result["note"]) + "\n"
    battery = (f"the full battery ({result['runs']} runs)" if result.get("battery") == "full"
               else "a subset")
    lines = [f"dieharder ({result['path']}), {battery}, on `starfever rng-stream`, generator "
             "200 (stdin):"]
    for name, test in result["tests"].items():
        lines += [f"{name}:"] + [f"  {row}" for row in test["rows"] or ["(no result)"]]
    lines.append("verdict: " + ("every result PASSED or WEAK" if result["passed"]
                                else "a test FAILED or gave no result"))
    return "\n".join(lines) + "\n"


def write_manifest(out: Path) -> str:
    """Write ``MANIFEST.json`` over every other file of ``out``; its SHA-256."""
    files = {p.relative_to(out).as_posix(): file_sha256(p) for p in sorted(out.rglob("*"))
             if p.is_file() and p.relative_to(out).as_posix() not in (MANIFEST,
                                                                       MANIFEST + ".sig")}
    data = canonical({"format": BUNDLE_FORMAT, "files": files})
    (out / MANIFEST).write_bytes(data)
    from starfever.certify.manifest import sha256_of

    return sha256_of(data)


def _readme(model: MathModel, figs: Figures, claim: dict[str, Any], seed: int,
            bundle: Bundle, checked: software.SoftwareCheck, signer: str | None) -> str:
    timing = "\n".join(f"| {name} | {seconds:.1f} s |" for name, seconds in
                       bundle.seconds.items())
    warnings = "\n".join(f"- {w}" for w in bundle.warnings) or "- none"
    pool = model.has_progressive
    files = [
        ("`MANIFEST.json`", "every other file of this folder with its SHA-256 (canonical JSON)"),
        ("`model/`", f"the model file as played; `model.json`: its file SHA-256 and its model "
                     f"SHA-256 `{model.sha256}`"),
        ("`rules/rules.de.html`, `rules.en.html` (and `.txt`)",
         "the rules and paytable as the browser client shows them to players, rendered from "
         "the client's own texts (`web/static/js/i18n.js`) and the game data `GET /api/v1/game`"
         " serves for this model; `game.json` is that data"),
        ("`conditions/conditions.de.md`, `conditions.en.md` (and `.html`)",
         "the game conditions generated from this model (German binds): paytable, lines, "
         "features, the UPGRADE unit, the booster order, "
         f"{'the €€€ and its share table' if pool else 'that no prize is progressive'}, the "
         "maximum win, the RTP at every bet class, every reading RULES.md fixes; the server "
         "serves the same at `GET /api/v1/game/conditions/{de,en}`"),
        *([("`progressive/progressive.md` (and `.html`)", "the €€€ progressive pool: seed, "
            "contribution, display, refills and who pays them, withdrawal, its accounting")]
          if pool else []),
        ("`exposure/exposure.md` (and `.html`)", "the maximum-exposure statement: the largest "
         "wins, the Hold & Cash tails, the win bands, the largest win each simulation saw"),
        ("`figures/exact.json`", "every exact figure (`starfever rtp --json --exact`): "
         "components, every bet class, SD, win bands, Hold & Cash tails, max wins, the "
         "rationals, the method of each"),
        ("`simulation/simulation.json`", f"the independent simulation (seed {seed}): each "
         "component's 99 % interval against the exact value, and its claim; "
         "`by-bet-class.json`: a simulation at each of the 10 bet classes"
         f"{' with its €€€ pool' if pool else ''}"),
        ("`par-sheet/`", "the PAR sheet (`starfever par-sheet`), its simulated column from the "
         "same simulation"),
        ("`rng/rng-evidence.json`, `rng/dieharder.txt`", "the scaling proofs, statistical "
         "tests of live outcomes, with `--rng full` the volume tests and the whole dieharder "
         "battery, else the dieharder subset (or why none ran)"),
        ("`software/`", "the installed package's software manifest (build SHA-256 "
         f"`{checked.build_sha256}`) and its check"),
        ("`certification.json`", "identity, durations, warnings"),
    ]
    table = "\n".join(f"| {name} | {what} |" for name, what in files)
    signature = (f"Signed by the Ed25519 key with fingerprint `{signer}`." if signer else
                 "**Not signed**: no signing key was given, so nothing here proves who made it.")
    return f"""# Star Fever certification bundle: model {model.name} {model.version}

Made by `starfever certify`. Check it with `starfever verify --bundle .` (and
`--public-key LAB.pub` when it is signed: `MANIFEST.json.sig`). {signature}

| file | what |
|---|---|
{table}

Exact total RTP {figs.total:.5%}. {claim['statement']}.

Durations:

| part | time |
|---|---|
{timing}

Warnings:
{warnings}
"""


@dataclass
class BundleCheck:
    """A bundle folder against its manifest, and its signature as far as it could be checked."""

    ok: bool
    """Everything checked held (and, with ``require_signature``, the signature was verified)."""
    lines: list[str]
    """Each problem found, one line each."""
    manifest_sha256: str
    signature: signing.Verified | None = None
    """The verified signature (with a public key)."""
    signature_status: str = "absent"
    """``verified``, ``names_this_manifest`` (the signature file records this manifest's hash;
    without the lab's key, not who signed it), ``absent``, ``other_manifest``, ``unreadable`` or
    ``invalid``."""
    signed_by: str | None = None
    """The key fingerprint the signature file claims (not proved without the key)."""
    not_checked: list[str] = field(default_factory=list)
    """What could not be checked, said plainly."""


def _signature_claim(sig_path: Path, data: bytes) -> tuple[str, str | None, str | None]:
    """What a signature file claims, read without a key: (status, claimed key, problem)."""
    import hashlib

    try:
        body = json.loads(sig_path.read_text(encoding="ascii"))
    except OSError as error:
        return "unreadable", None, f"signature: cannot read {sig_path.name}: {error.strerror}"
    except (ValueError, UnicodeDecodeError):
        return "unreadable", None, f"signature: {sig_path.name} is not a signature file"
    if not isinstance(body, dict) or body.get("format") != signing.SIGNATURE_FORMAT \
            or not isinstance(body.get("sha256"), str):
        return "unreadable", None, (f"signature: {sig_path.name} is not a "
                                    f"{signing.SIGNATURE_FORMAT} signature")
    claimed = body.get("public_key_sha256")
    claimed = claimed if isinstance(claimed, str) else None
    here = hashlib.sha256(data).hexdigest()
    if body["sha256"] != here:
        return "other_manifest", claimed, (
            f"signature: {sig_path.name} records another manifest (sha256 {body['sha256']}), "
            f"not this one (sha256 {here}): it signs something else")
    return "names_this_manifest", claimed, None


def verify_bundle(folder: Path, public_key: Path | None = None, *,
                  require_signature: bool = False) -> BundleCheck:
    """Every file of ``folder`` against its ``MANIFEST.json``; the signature file must name
    this manifest's hash; with ``public_key`` the signature is verified, without it what was
    not checked is said. ``require_signature``: not ok unless the signature was verified."""
    from starfever.certify.manifest import compare, sha256_of

    manifest = folder / MANIFEST
    try:
        data = manifest.read_bytes()
        content = json.loads(data)
    except OSError as error:
        raise InputError(f"cannot read {manifest}: {error.strerror}") from None
    except ValueError:
        raise InputError(f"{manifest} is not JSON") from None
    if not isinstance(content, dict) or content.get("format") != BUNDLE_FORMAT \
            or not isinstance(content.get("files"), dict):
        raise InputError(f"{manifest} is not a {BUNDLE_FORMAT} manifest")
    found = {p.relative_to(folder).as_posix(): file_sha256(p) for p in folder.rglob("*")
             if p.is_file() and p.relative_to(folder).as_posix() not in (MANIFEST,
                                                                          MANIFEST + ".sig")}
    lines = compare(content["files"], found).lines()
    check = BundleCheck(ok=False, lines=lines, manifest_sha256=sha256_of(data))
    sig_path = folder / f"{MANIFEST}.sig"
    if sig_path.exists():
        status, claimed, problem = _signature_claim(sig_path, data)
        check.signature_status, check.signed_by = status, claimed
        if problem:
            lines.append(problem)
    if public_key is not None and sig_path.exists() and check.signature_status not in (
            "unreadable",):
        try:
            check.signature = signing.verify_file(signing.load_public(public_key), manifest)
            check.signature_status = "verified"
        except signing.SigningError as error:
            check.signature_status = "invalid"
            lines.append(f"signature: {error}")
    if check.signature_status == "names_this_manifest":
        check.not_checked.append(
            "who signed it: the signature file names this manifest and the key "
            f"{(check.signed_by or '?')[:16]}..., but without --public-key LAB.pub the "
            "signature itself is not verified (anyone can write such a file)")
    elif check.signature_status == "absent":
        check.not_checked.append(f"who made it: the bundle has no {MANIFEST}.sig (not signed)")
    software_sig = folder / "software" / f"{SOFTWARE_MANIFEST}.sig"
    if software_sig.exists():
        _, _, problem = _signature_claim(software_sig, (folder / "software" /
                                                             SOFTWARE_MANIFEST).read_bytes())
        if problem:
            lines.append(problem.replace("signature:", "software signature:", 1))
    if require_signature and check.signature_status != "verified":
        lines.append("signature required (--require-signature) and not verified: "
                     + {"absent": f"the bundle has no {MANIFEST}.sig",
                        "names_this_manifest": "give the lab's key with --public-key LAB.pub"}
                     .get(check.signature_status, "see above"))
    check.ok = not lines
    return check
