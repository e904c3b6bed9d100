"""The ``starfever`` command. Each group of subcommands lives beside the code it drives and
registers itself here. Errors a user can cause (:class:`InputError`, or a file that cannot be
read or written) end as one line on stderr and exit code 2; any other exception is a bug and
is reported as one, with its traceback, and exit code 70."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from starfever.engine.errors import InputError

COMMAND_MODULES = (
    "starfever.commands",  # eval, model, rtp
    "starfever.math.tune_cli",  # tune
    "starfever.sim.cli",  # simulate
    "starfever.report.cli",  # par-sheet
    "starfever.server.cli",  # serve, audit, operator
    "starfever.server.reports",  # report
    "starfever.seamless.cli",  # operator-wallet-demo
    "starfever.certify.cli",  # certify, verify, keygen, sign
)

INTERNAL_ERROR = 70
"""Exit code of a bug (BSD's EX_SOFTWARE), apart from 2 for bad input."""
BROKEN_PIPE = 141
"""Exit code when the output's reader closed it early, as a shell reports SIGPIPE (128 + 13)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand registered, or, given the ``command`` asked for, with
    the groups up to the one that registers it (so ``starfever rtp`` does not import the
    simulator's compiler and the server's database layer: a tenth of a second or more)."""
    parser = argparse.ArgumentParser(
        prog="starfever", description="Star Fever slot game: math, simulation and server.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
        if command is not None and command in sub.choices:
            break
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args_given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_given[0] if args_given and not args_given[0].startswith("-")
                          else None)
    args = parser.parse_args(args_given)
    try:
        code = args.handler(args)
    except BrokenPipeError:  # the reader went away (``| head``): nothing to say to anyone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return BROKEN_PIPE
    except (InputError, OSError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"starfever {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"starfever {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug: say so, and keep what is needed to fix it
        traceback.print_exc()
        print(f"starfever {args.command}: internal error (a bug in Star Fever, not in your "
              f"input): {type(error).__name__}: {error}", file=sys.stderr)
        return INTERNAL_ERROR
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
