"""``starfever tune``: a new model from an old one, aimed at several targets (ADR 0016)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from starfever import interrupts
from starfever.engine.model import load_model

if TYPE_CHECKING:
    from starfever.math.tune import Target

OPTIONS = (
    ("rtp", "total RTP incl. the EUR contribution, e.g. 95.5%% (band +/- 0.01 pp; default: "
            "the source's, kept)"),
    ("hit_frequency", "P(total win > 0), e.g. 0.33 or 33%% (band +/- 0.2 pp)"),
    ("star_wild_frequency", "P(Star Wild) per spin, e.g. 1/60 (band +/- 2 %%)"),
    ("hold_and_cash_frequency", "P(Hold & Cash) per spin, e.g. 1/170 (band +/- 2 %%)"),
    ("base_share", "share of the game RTP from line wins, e.g. 0.6 (band +/- 0.5 pp)"),
    ("std_dev", "standard deviation per round, x total bet, e.g. 6:8 (point: +/- 2 %%)"),
    ("mega_frequency", "P(Mega) per spin, e.g. 1/20000 (band +/- 5 %%)"),
)
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add tune."""
    p = sub.add_parser(
        "tune", help="a new model aimed at targets (RTP, hit frequency, features, volatility)",
        description="Change the base reel strips and the Hold & Cash weights of a model until "
                    "every target is met, fit the total RTP, check it exactly and write the new "
                    "model under a new name and version. A target is a number (its band is "
                    "shown below) or a range LO:HI.")
    p.add_argument("--model", default="default", metavar="NAME|PATH", help="the source model")
    p.add_argument("--out", required=True, type=Path, help="where to write the model JSON")
    p.add_argument("--force", action="store_true",
                   help="replace the file --out names if it exists (refused otherwise; never "
                        "anything but a regular file)")
    p.add_argument("--name", help="name of the new model (default: <source>-tuned)")
    for option, text in OPTIONS:
        flags = [f"--{option.replace('_', '-')}"]
        if option == "rtp":
            flags.append("--target")  # the earlier, one-target form
        p.add_argument(*flags, dest=option, metavar="X|LO:HI", help=text)
    p.add_argument("--levers", default="strips,weights",
                   help="what may change: strips, weights or both (default strips,weights)")
    p.add_argument("--max-steps", default="300", metavar="N",
                   help="most search steps (one stop or one weight each; default 300)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_tune)


def cmd_tune(args: argparse.Namespace) -> int:
    from starfever.commands import parse_count
    from starfever.math.tune import TuneError, log_stderr, parse_target, tune

    source = load_model(args.model)
    targets = [parse_target(option, getattr(args, option)) for option, _ in OPTIONS
               if getattr(args, option) is not None]
    levers = frozenset(x.strip() for x in args.levers.split(",") if x.strip())
    if not levers or not levers <= {"strips", "weights"}:
        raise TuneError(f"--levers {args.levers!r}: give strips, weights or strips,weights")
    max_steps = parse_count(args.max_steps, "--max-steps", minimum=0)
    name = f"{source.name}-tuned" if args.name is None else args.name
    if not NAME.fullmatch(name):
        raise TuneError(f"--name {name!r}: use 1-64 lower-case letters, digits, '-' or '_'")
    if name == source.name:
        raise TuneError(f"--name {name!r} is the source's name: a tuned model needs its own "
                        "(rounds record the model by name and version)")
    _check_out(args.out, force=args.force)  # asked before the search, not after it
    outcome = tune(source, targets, max_steps=max_steps, levers=levers,
                   progress=sys.stderr.isatty(), log=log_stderr)
    targets = outcome.targets  # with the source's total RTP, kept, when none was given
    got = outcome.achieved
    rows = [{"target": t.label, "key": t.key, "given": t.text, "low": t.low, "high": t.high,
             "achieved": got[t.key], "met": t.low <= got[t.key] <= t.high} for t in targets]
    model = outcome.model
    if outcome.met:
        # a new identity for a new model: rounds record name and version, so the tuned model
        # never shares them with its source (the version carries its content)
        content = replace(model, name="", version="", description="").sha256[:12]
        model = replace(model, name=name, version=f"1.0+{content}", description=(
            f"Tuned by 'starfever tune' from {source.name} {source.version} "
            f"(sha256 {source.sha256[:12]}) to: "
            + "; ".join(f"{t.label} {t.text}" for t in targets)
            + f". Exact total RTP {outcome.achieved['total']:.4%}."))
        _check_out(args.out, force=args.force)  # the search took minutes: ask again
        _write_atomically(args.out, json.dumps(model.to_dict(), indent=1) + "\n")
    if args.json:
        print(json.dumps({"model": model.name, "version": model.version,
                          "model_sha256": model.sha256, "source": source.name,
                          "source_sha256": source.sha256, "steps": outcome.steps,
                          "met": outcome.met, "targets": rows,
                          "out": str(args.out) if outcome.met else None}, indent=2))
    else:
        print(f"{'target':<28} {'wanted':>24} {'achieved (exact)':>18}")
        for t in targets:
            print(f"{t.label:<28} {_band(t):>24} {_fmt(t.key, got[t.key]):>18} "
                  f"{'ok' if t.low <= got[t.key] <= t.high else 'MISSED'}")
        if outcome.met:
            print(f"wrote {args.out}: {model.name} {model.version} (sha256 "
                  f"{model.sha256[:12]}..., source {source.name} {source.version}), "
                  f"{outcome.steps} steps")
    if not outcome.met:
        missed = ", ".join(f"{t.label} {_fmt(t.key, got[t.key])} (wanted {_band(t)})"
                           for t in targets if not t.low <= got[t.key] <= t.high)
        raise TuneError(f"targets not met after {outcome.steps} steps: {missed}; no model "
                        "written")
    return 0


def _fmt(key: str, value: float) -> str:
    if key == "std_dev":
        return f"{value:.4f}"
    if key in ("total", "hit_frequency", "base_share"):
        return f"{value:.4%}"
    return f"1 in {1 / value:,.1f}" if value else "never"


def _check_out(out: Path, *, force: bool) -> None:
    """Refuse an ``--out`` that is a folder, anything else but a regular file (a device, a
    FIFO, a socket: the rename would replace it), a file without ``--force``, or one in a
    folder that does not exist."""
    from starfever.math.tune import TuneError

    if out.is_dir():
        raise TuneError(f"--out {str(out)!r} is a folder, not a file")
    if out.exists() and not out.is_file():
        raise TuneError(f"--out {str(out)!r} exists and is not a regular file; a model is "
                        "written only to a new file or over a regular one")
    if out.exists() and not force:
        raise TuneError(f"--out {str(out)!r} exists; give --force to replace it")
    if not out.parent.is_dir():
        raise TuneError(f"--out {str(out)!r}: no folder {str(out.parent)!r}")


def _write_atomically(path: Path, text: str) -> None:
    """``text`` at ``path`` whole or not at all: written beside it, then renamed over it."""
    part = path.with_name(f".{path.name}.part")
    try:
        part.write_text(text, encoding="utf-8")
        interrupts.check()  # a Ctrl-C the interpreter swallowed on the way writes nothing
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)


def _band(target: Target) -> str:
    key, low, high = target.key, target.low, target.high
    if key in ("star_wild_frequency", "hold_and_cash_frequency", "mega_frequency"):
        return f"1 in {1 / high:,.1f}..{1 / low:,.1f}" if low > 0 else f"<= {high:.3g}"
    return f"{_fmt(key, low)}..{_fmt(key, high)}"
