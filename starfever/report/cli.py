"""``starfever par-sheet``: write the PAR sheet (Markdown, HTML and PNG plots) to a folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from starfever.engine.errors import InputError
from starfever.engine.model import load_model


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add par-sheet."""
    p = sub.add_parser("par-sheet", help="write a PAR sheet with plots")
    p.add_argument("--out", required=True, type=Path, metavar="DIR")
    p.add_argument("--model", default="default", metavar="NAME|PATH")
    p.add_argument("--spins", type=int, default=20_000_000,
                   help="simulated spins for the confirmation and plots (default 20,000,000)")
    p.add_argument("--seed", type=int, default=20261130)
    p.add_argument("--workers", type=int, default=None)
    p.set_defaults(handler=cmd_par_sheet)


def cmd_par_sheet(args: argparse.Namespace) -> int:
    from starfever.math.exact import compute
    from starfever.report.parsheet import build
    from starfever.sim.runner import simulate

    if args.spins < 10_000:
        raise InputError(f"--spins must be at least 10000, got {args.spins}")
    model = load_model(args.model)
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} exists and is not a folder")
    report = compute(model, with_std_dev=False)
    result = simulate(model, args.spins, args.seed, workers=args.workers,
                      progress=sys.stderr.isatty())
    out.mkdir(parents=True, exist_ok=True)
    doc = build(model, report, result, out, progress=sys.stderr.isatty())
    (out / "par-sheet.md").write_text(doc.markdown(), encoding="utf-8")
    (out / "par-sheet.html").write_text(doc.html(), encoding="utf-8")
    print(f"wrote {out / 'par-sheet.md'}, {out / 'par-sheet.html'} and 4 plots")
    return 0
