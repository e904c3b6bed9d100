"""``starfever certify``, ``starfever verify``, ``starfever seal``, ``starfever keygen`` and
``starfever sign``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from starfever.engine.errors import InputError

SIGNING_KEY_ENV = "STARFEVER_SIGNING_KEY"
"""The lab's private key file, signing every bundle ``certify`` writes without ``--sign-key``."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add certify, verify, seal, keygen and sign."""
    from starfever.certify.defaults import (
        DEFAULT_CLASS_SPINS,
        DEFAULT_RNG_ROUNDS,
        DEFAULT_RNG_STOPS,
        DEFAULT_RNG_VOLUME,
        DEFAULT_SPINS,
    )

    p = sub.add_parser("certify", help="write a certification bundle for a test lab")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="a new or empty folder (its parent folder must exist)")
    p.add_argument("--model", default="default", metavar="NAME|PATH")
    p.add_argument("--market", default=None, metavar="NAME",
                   help="the market profile the bundle is for (at, de, uk, ...): its rules in "
                        "the rules pages and the game conditions; refused for a model the "
                        "market does not allow")
    p.add_argument("--spins", default=str(DEFAULT_SPINS), metavar="N",
                   help=f"simulated spins (default {DEFAULT_SPINS:,}: the total RTP to about "
                        "+/- 0.08 pp at 99 %%)")
    p.add_argument("--seed", default=None, metavar="S",
                   help="the simulation's non-negative integer seed (default: a fresh one, "
                        "recorded in the bundle)")
    p.add_argument("--workers", default=None, metavar="K",
                   help="simulation processes (default: all cores)")
    p.add_argument("--rng-stops", default=str(DEFAULT_RNG_STOPS), metavar="N",
                   help=f"live stops per reel for the RNG tests (default {DEFAULT_RNG_STOPS:,})")
    p.add_argument("--rng-rounds", default=str(DEFAULT_RNG_ROUNDS), metavar="N",
                   help=f"live rounds for the RNG tests (default {DEFAULT_RNG_ROUNDS:,})")
    p.add_argument("--class-spins", default=str(DEFAULT_CLASS_SPINS), metavar="N",
                   help=f"simulated spins at each of the 10 bet classes (default "
                        f"{DEFAULT_CLASS_SPINS:,})")
    p.add_argument("--rng", default="quick", metavar="quick|full",
                   help="quick (default): live tests at --rng-stops/--rng-rounds and a "
                        "dieharder subset; full: also the chi-square, runs and serial tests on "
                        "--rng-volume live stops and the whole dieharder battery (hours)")
    p.add_argument("--rng-volume", default=None, metavar="N",
                   help=f"with --rng full: live stops of the volume tests, all strips together "
                        f"(default {DEFAULT_RNG_VOLUME:,})")
    p.add_argument("--dieharder-runs", default=None, metavar="N",
                   help="with --rng full: run only the first N runs of the battery (to try "
                        "the path; a submission runs all)")
    p.add_argument("--no-dieharder", action="store_true",
                   help="leave out dieharder even when it is installed")
    p.add_argument("--sign-key", type=Path, default=None, metavar="KEY",
                   help="sign MANIFEST.json (and the software manifest) with this Ed25519 "
                        f"private key (starfever keygen; default ${SIGNING_KEY_ENV} when set)")
    p.set_defaults(handler=cmd_certify)

    p = sub.add_parser("verify", help="check the installed package against its software "
                                      "manifest, or a certification bundle")
    p.add_argument("--manifest", type=Path, default=None, metavar="FILE",
                   help="a software manifest to check against (e.g. a bundle's "
                        "software/software-manifest.json; default: the one shipped)")
    p.add_argument("--bundle", type=Path, default=None, metavar="DIR",
                   help="check a certification bundle instead")
    p.add_argument("--public-key", type=Path, default=None, metavar="PUB",
                   help="also check the manifest's Ed25519 signature (FILE.sig) under this key")
    p.add_argument("--require-signature", action="store_true",
                   help="with --bundle: fail unless MANIFEST.json.sig is verified under "
                        "--public-key")
    p.add_argument("--signature", type=Path, default=None, metavar="SIG",
                   help="the signature file (default: the manifest's path + .sig)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_verify)

    p = sub.add_parser("seal", help="seal the deployed environment: write the interpreter, "
                                    "start-up hooks and installed distributions into the "
                                    "package's environment-manifest.json (ADR 0050)")
    p.set_defaults(handler=cmd_seal)

    p = sub.add_parser("keygen", help="make an Ed25519 key pair (PREFIX.key, PREFIX.pub)")
    p.add_argument("--out", required=True, metavar="PREFIX",
                   help="writes PREFIX.key and PREFIX.pub (PREFIX names a file, not a folder)")
    p.set_defaults(handler=cmd_keygen)

    p = sub.add_parser("sign", help="sign a file (e.g. a software manifest) with an Ed25519 "
                                    "key: writes FILE.sig")
    p.add_argument("file", type=Path)
    p.add_argument("--key", required=True, type=Path, metavar="KEY")
    p.add_argument("--out", type=Path, default=None, metavar="SIG")
    p.set_defaults(handler=cmd_sign)


def cmd_certify(args: argparse.Namespace) -> int:
    from starfever.certify.bundle import Options, make
    from starfever.certify.defaults import DEFAULT_RNG_VOLUME
    from starfever.commands import MAX_SEED, parse_count

    for given, name in ((args.rng_volume, "--rng-volume"),
                        (args.dieharder_runs, "--dieharder-runs")):
        if given is not None and args.rng != "full":
            raise InputError(f"{name} goes with --rng full")
    options = Options(out=args.out, model=args.model, market=args.market,
                      spins=parse_count(args.spins, "--spins", minimum=1),
                      seed=None if args.seed is None else parse_count(
                          args.seed, "--seed", minimum=0, maximum=MAX_SEED),
                      workers=None if args.workers is None else parse_count(
                          args.workers, "--workers", minimum=1),
                      rng_stops=parse_count(args.rng_stops, "--rng-stops", minimum=1),
                      rng_rounds=parse_count(args.rng_rounds, "--rng-rounds", minimum=1),
                      sign_key=args.sign_key or (Path(os.environ[SIGNING_KEY_ENV])
                                                 if os.environ.get(SIGNING_KEY_ENV) else None),
                      progress=sys.stderr.isatty(), dieharder=not args.no_dieharder,
                      class_spins=parse_count(args.class_spins, "--class-spins", minimum=1),
                      rng=args.rng,
                      rng_volume=DEFAULT_RNG_VOLUME if args.rng_volume is None else parse_count(
                          args.rng_volume, "--rng-volume", minimum=1),
                      dieharder_runs=None if args.dieharder_runs is None else parse_count(
                          args.dieharder_runs, "--dieharder-runs", minimum=1))
    if options.sign_key is not None:
        from starfever.certify import signing

        signing.load_private(options.sign_key)  # a bad key is refused before the long parts
    from starfever.certify.bundle import check_options

    check_options(options)
    bundle = make(options)
    for line in certify_summary(bundle):
        print(line)
    return 0


def certify_summary(bundle: Any) -> list[str]:
    """What ``certify`` prints of a written :class:`~starfever.certify.bundle.Bundle`: an
    unsigned bundle says so, with how to sign the next one."""
    total = sum(bundle.seconds.values())
    signed = (f", signed by key {bundle.signed_by[:16]}..." if bundle.signed_by
              else ", NOT signed")
    lines = [f"wrote the certification bundle {bundle.out} in {total:.0f} s (MANIFEST.json "
             f"sha256 {bundle.manifest_sha256}{signed})"]
    lines += [f"  WARNING {warning}" for warning in bundle.warnings]
    if not bundle.signed_by:
        lines.append(f"  WARNING not signed: a lab's submission is signed with --sign-key KEY "
                     f"or ${SIGNING_KEY_ENV} (starfever keygen --out lab makes lab.key)")
    return lines


def _public_key(path: Path | None) -> Any:
    if path is None:
        return None
    from starfever.certify import signing

    return signing.load_public(path)


def cmd_verify(args: argparse.Namespace) -> int:
    from starfever.certify import signing

    if args.signature is not None and (args.public_key is None or args.bundle is not None):
        raise InputError("--signature goes with --public-key, for a software manifest")
    if args.bundle is not None and args.manifest is not None:
        raise InputError("give either --bundle or --manifest")
    if args.require_signature and args.bundle is None:
        raise InputError("--require-signature goes with --bundle")
    public = _public_key(args.public_key)  # a missing or bad key file: exit 2
    if args.bundle is not None:
        return _verify_bundle(args, public is not None)
    from starfever.certify import environment, software

    result = software.check(manifest=args.manifest)
    runtime = environment.check(result.root)
    lines = result.differences()
    verified = None
    if public is not None:
        try:
            verified = signing.verify_file(public, result.manifest_path, args.signature)
        except signing.SigningError as error:
            lines.append(f"signature: {error}")
    ok = not lines and runtime.ok
    running = environment.running_sha256(result.build_sha256, runtime.environment_sha256)
    if args.json:
        print(json.dumps({**result.to_dict(), "ok": ok, "differences": lines,
                          "environment": runtime.to_dict(), "running_sha256": running,
                          "signature": None if verified is None else {
                              "public_key_sha256": verified.public_key_sha256}}, indent=2))
        return 0 if ok else 1
    print(result.summary())
    print(runtime.summary())
    for line in runtime.differences:
        print(f"  environment: {line}")
    print(f"running build sha256 {running} (what every round records)")
    if verified is not None:
        print(f"signature OK: {result.manifest_path} signed by key "
              f"{verified.public_key_sha256}")
    for line in lines:
        print(f"  {line}")
    return 0 if ok else 1


def cmd_seal(args: argparse.Namespace) -> int:
    from starfever.certify import environment

    path, digest = environment.seal()
    print(f"sealed the environment into {path} (environment sha256 {digest})")
    return 0


def _verify_bundle(args: argparse.Namespace, with_key: bool) -> int:
    from starfever.certify.bundle import verify_bundle

    check = verify_bundle(args.bundle, args.public_key if with_key else None,
                          require_signature=args.require_signature)
    if args.json:
        print(json.dumps({"ok": check.ok, "manifest_sha256": check.manifest_sha256,
                          "differences": check.lines,
                          "signature": {
                              "status": check.signature_status,
                              "claimed_key_sha256": check.signed_by,
                              "public_key_sha256": None if check.signature is None
                              else check.signature.public_key_sha256},
                          "not_checked": check.not_checked}, indent=2))
        return 0 if check.ok else 1
    required = [line for line in check.lines if line.startswith("signature required")]
    if not check.ok and len(required) == len(check.lines):
        verdict = "bundle files OK, but the signature required is NOT verified"
    elif not check.ok:
        verdict = "bundle MISMATCH"
    elif check.signature_status == "verified":
        verdict = "bundle OK"
    else:
        verdict = "bundle files OK, signature NOT verified"
    print(f"{verdict}: {args.bundle} (MANIFEST.json sha256 {check.manifest_sha256})")
    if check.signature is not None:
        print(f"signature OK: signed by key {check.signature.public_key_sha256}")
    for line in check.not_checked:
        print(f"not checked: {line}")
    for line in check.lines:
        print(f"  {line}")
    return 0 if check.ok else 1


def cmd_keygen(args: argparse.Namespace) -> int:
    from starfever.certify import signing

    private, public, print_ = signing.generate(args.out)
    print(f"wrote {private} (private: keep it offline, mode 0600) and {public} (public: give "
          f"it to whoever verifies); key fingerprint {print_}")
    return 0


def cmd_sign(args: argparse.Namespace) -> int:
    from starfever.certify import signing

    key = signing.load_private(args.key)
    if not args.file.is_file():
        raise InputError(f"{args.file} is not a file")
    written = signing.sign_file(key, args.file, args.out)
    print(f"wrote {written} (key {signing.fingerprint(key.public_key())})")
    return 0
