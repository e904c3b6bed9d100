"""The ``starfever`` command. Each group of subcommands lives beside the code it drives and
registers itself here; errors a user can cause end as one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMAND_MODULES = (
    "starfever.commands",  # eval, model, rtp, tune
    "starfever.sim.cli",  # simulate
    "starfever.report.cli",  # par-sheet
    "starfever.server.cli",  # serve, audit, operator
)


class CommandError(ValueError):
    """A command that cannot do what was asked; its message is shown to the user."""


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="starfever", description="Star Fever slot game: math, simulation and server.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.handler(args)
    except (ValueError, OSError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"starfever {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"starfever {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
