"""``starfever par-sheet``: write the PAR sheet (Markdown, HTML and PNG plots) to a folder.

The sheet is written into a new folder beside ``--out`` (inside it when it exists) and moved
into place only when it is whole: a run that fails or is interrupted leaves no folder and no
half sheet behind."""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
from pathlib import Path

from starfever import interrupts
from starfever.engine.errors import InputError
from starfever.engine.model import load_model

MIN_SPINS = 10_000
"""The fewest simulated spins a sheet is made from."""
DEFAULT_SPINS = 20_000_000
DEFAULT_SEED = 20261130


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add par-sheet."""
    p = sub.add_parser("par-sheet", help="write a PAR sheet with plots")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="the folder to write (created if missing; its parent must exist)")
    p.add_argument("--model", default="default", metavar="NAME|PATH")
    p.add_argument("--spins", default=str(DEFAULT_SPINS), metavar="N",
                   help=f"simulated spins for the confirmation and plots, at least {MIN_SPINS:,}"
                        f" (default {DEFAULT_SPINS:,}; 1e8 or 100_000_000 work too)")
    p.add_argument("--seed", default=str(DEFAULT_SEED), metavar="S",
                   help=f"the simulation's non-negative integer seed (default {DEFAULT_SEED})")
    p.add_argument("--workers", default=None, metavar="K", help="processes (default: all cores)")
    p.set_defaults(handler=cmd_par_sheet)


def check_out_folder(out: Path) -> None:
    """Refuse an ``--out`` folder that cannot be made: one that exists as something else, or
    whose parent folder does not exist (never created on the way)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} exists and is not a folder")
    parent = out.absolute().parent
    if not out.exists() and not parent.is_dir():
        raise InputError(f"--out {str(out)!r}: no folder {str(out.parent)!r} (the parent "
                         "folder must exist)")


def cmd_par_sheet(args: argparse.Namespace) -> int:
    from starfever.commands import MAX_SEED, parse_count
    from starfever.math.exact import compute
    from starfever.report.parsheet import build
    from starfever.sim.runner import simulate

    spins = parse_count(args.spins, "--spins", minimum=MIN_SPINS)
    seed = parse_count(args.seed, "--seed", minimum=0, maximum=MAX_SEED)
    workers = None if args.workers is None else parse_count(args.workers, "--workers",
                                                            minimum=1)
    model = load_model(args.model)
    out: Path = args.out
    check_out_folder(out)
    report = compute(model)
    progress = sys.stderr.isatty()
    result = simulate(model, spins, seed, workers=workers, progress=progress)
    check_out_folder(out)  # the simulation took a while: ask again before writing
    # inside a folder that exists (files renamed over the earlier sheet's), else beside it
    home = out if out.is_dir() else out.absolute().parent
    staging = home / f".par-sheet.{secrets.token_hex(4)}.part"
    staging.mkdir()
    try:
        doc = build(model, report, result, staging, progress=progress)
        (staging / "par-sheet.md").write_text(doc.markdown(), encoding="utf-8")
        (staging / "par-sheet.html").write_text(doc.html(), encoding="utf-8")
        interrupts.check()  # a Ctrl-C swallowed on the way still leaves no sheet
        _move_into_place(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"wrote {out / 'par-sheet.md'}, {out / 'par-sheet.html'} and 4 plots")
    return 0


def _move_into_place(staging: Path, out: Path) -> None:
    """The whole sheet in ``staging`` becomes ``out``: renamed, or, into an ``out`` folder that
    exists already (a sheet made again), each file renamed over its earlier version."""
    if not out.exists():
        staging.rename(out)
        return
    for part in sorted(staging.iterdir()):
        os.replace(part, out / part.name)
