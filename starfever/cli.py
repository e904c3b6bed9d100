"""The ``starfever`` command. Each group of subcommands lives beside the code it drives and
registers itself here. Errors a user can cause (:class:`InputError`, or a file that cannot be
read or written) end as one line on stderr and exit code 2; any other exception is a bug and
is reported as one, with its traceback, and exit code 70."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import NoReturn

from starfever import interrupts
from starfever.engine.errors import InputError

COMMAND_MODULES = (
    "starfever.commands",  # eval, model, rtp
    "starfever.math.tune_cli",  # tune
    "starfever.sim.cli",  # simulate
    "starfever.report.cli",  # par-sheet
    "starfever.server.cli",  # serve, audit, operator
    "starfever.server.reports",  # report
    "starfever.seamless.cli",  # operator-wallet-demo
    "starfever.certify.cli",  # certify, verify, seal, keygen, sign
)

INTERNAL_ERROR = 70
"""Exit code of a bug (BSD's EX_SOFTWARE), apart from 2 for bad input."""
BROKEN_PIPE = 141
"""Exit code when the output's reader closed it early, as a shell reports SIGPIPE (128 + 13)."""


class OneLineParser(argparse.ArgumentParser):
    """A parser whose every error is one line, ``starfever CMD: error: MESSAGE``, and exit
    code 2, as every other refusal of bad input (``--help`` prints the usage as before). The
    subcommands' parsers are of this class too (``add_subparsers`` makes its parsers of its
    parser's class), and an argument none of them knows is refused by the subcommand's parser
    (not the top-level one, which would name the wrong command and show its usage)."""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None,
                         ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        lines = message.splitlines()
        self.exit(2, f"{self.prog}: error: {lines[0] if lines else 'bad arguments'}\n")


def check_can_listen(host: str, port: int) -> None:
    """Refuse, as an :class:`InputError`, an address a server cannot listen on (a port in use,
    a host that is not this machine's), by binding it as the server will and letting it go:
    called before a server writes anything, so that a start that would fail leaves its
    database as it was. (Another process may still take the port in between: then the server
    fails as before, late.)"""
    import socket

    if not 0 <= port <= 65535:
        raise InputError(f"--port must be 0..65535, got {port}")
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise InputError(f"--host {host!r} is no address of this machine ({reason})") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as error:
                raise InputError(f"cannot listen on {host}:{port}: "
                                 f"{error.strerror or error}") from None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand registered, or, given the ``command`` asked for, with
    the groups up to the one that registers it (so ``starfever rtp`` does not import the
    simulator's compiler and the server's database layer: a tenth of a second or more)."""
    parser = OneLineParser(
        prog="starfever", description="Star Fever slot game: math, simulation and server.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
        if command is not None and command in sub.choices:
            break
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    if threading.current_thread() is threading.main_thread():  # signals reach only that one
        interrupts.install()
    args_given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_given[0] if args_given and not args_given[0].startswith("-")
                          else None)
    args = parser.parse_args(args_given)
    try:
        code = args.handler(args)
        sys.stdout.flush()  # here, not at exit: a reader gone by now is a broken pipe too
    except BrokenPipeError:  # the reader went away (``| head``): nothing to say to anyone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return BROKEN_PIPE
    except (InputError, OSError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"starfever {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # a second Ctrl-C (or a late one) while exiting would kill the process by the signal
        # (exit -2 instead of 130) once the interpreter restores the default handler
        signal.signal(signal.SIGINT, signal.SIG_IGN)
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
