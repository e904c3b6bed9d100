"""``starfever serve``, ``starfever audit``, ``starfever reconcile`` and ``starfever operator
create``."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from starfever.engine.errors import InputError
from starfever.server.settings import DEFAULT_DATABASE_URL, ENV_NAMES, get_settings

if TYPE_CHECKING:
    from starfever.server.operator_config import OperatorConfig


def _database_url(args: argparse.Namespace) -> str:
    url: str = args.database_url or os.environ.get(ENV_NAMES["database_url"]) or \
        DEFAULT_DATABASE_URL
    return url


def shown_url(url: str) -> str:
    """A database URL with any password masked."""
    return re.sub(r"(//[^:/@]+:)[^@]*@", r"\1***@", url)


def serve(args: argparse.Namespace) -> int:
    """Migrate the database, then serve the API with uvicorn."""
    import uvicorn

    from starfever.engine.model import load_model
    from starfever.server.app import TEST_MODE_WARNING
    from starfever.server.db import Database, migrate
    from starfever.server.services.jackpot import ensure_pool
    from starfever.server.transport import NoDelayHTTPProtocol

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port must be 0..65535, got {args.port}")
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    os.environ[ENV_NAMES["database_url"]] = _database_url(args)
    if args.model:
        os.environ[ENV_NAMES["model"]] = args.model
    operator = wallet_mode(args)
    get_settings.cache_clear()
    settings = get_settings()  # every worker reads the same environment
    model = load_model(settings.model)
    if settings.test_mode:
        print(f"WARNING: {TEST_MODE_WARNING}", file=sys.stderr)
    db = Database(settings.database_url)
    migrate(db)
    ensure_pool(db, model)
    db.dispose()
    wallet = f"operator wallet {operator.url}" if operator else "ledger wallet"
    print(f"Star Fever serving on http://{args.host}:{args.port} "
          f"(model {model.name} {model.version}, database {shown_url(settings.database_url)}, "
          f"{wallet})", flush=True)
    uvicorn.run("starfever.server.app:app_from_env", factory=True, host=args.host,
                port=args.port, workers=args.workers, log_level=args.log_level,
                access_log=args.log_level in ("debug", "info"), http=NoDelayHTTPProtocol)
    return 0


def wallet_mode(args: argparse.Namespace) -> OperatorConfig | None:
    """Put ``--wallet``/``--wallet-url`` into the environment every worker reads and check
    the operator mode's configuration (``operator_config``); refused as one line."""
    from starfever.server import operator_config as oc

    if args.wallet:
        os.environ[oc.ENV_WALLET] = args.wallet
    if args.wallet_url:
        os.environ[oc.ENV_WALLET_URL] = args.wallet_url
    oc.get_operator_config.cache_clear()
    return oc.get_operator_config()


def audit(args: argparse.Namespace) -> int:
    """Replay and verify every stored round, the chain and every wallet."""
    from starfever.server.audit import run_audit
    from starfever.server.db import open_existing

    db = open_existing(_database_url(args))
    try:
        report = run_audit(db)
    finally:
        db.dispose()
    print(report.summary())
    for problem in report.problems[: args.show]:
        print(f"  MISMATCH {problem}")
    if len(report.problems) > args.show:
        print(f"  ... and {len(report.problems) - args.show} more")
    return 0 if report.ok else 1


def reconcile(args: argparse.Namespace) -> int:
    """Operator mode: every spin's debit, credit or rollback with both sides' transaction ids,
    and the spins still in doubt (exit 1 if any)."""
    from starfever.server.db import open_existing
    from starfever.server.reconcile import parse_since
    from starfever.server.reconcile import reconcile as run

    since = parse_since(args.since) if args.since else None
    db = open_existing(_database_url(args))
    try:
        report = run(db, since)
    finally:
        db.dispose()
    print("\n".join(report.lines()))
    return 1 if report.in_doubt else 0


def create_operator(args: argparse.Namespace) -> int:
    """Create an operator account; the password is the first line of stdin."""
    from starfever.server.db import Database, migrate
    from starfever.server.models import OPERATOR
    from starfever.server.schemas import USERNAME_PATTERN
    from starfever.server.services import auth
    from starfever.server.services.errors import ServiceError
    from starfever.server.services.wallet import LedgerWallet

    if not re.match(USERNAME_PATTERN, args.name):
        raise InputError(f"operator name {args.name!r} must be 3-32 characters of a-z 0-9 _ . -")
    if sys.stdin.isatty():
        import getpass

        password = getpass.getpass("operator password: ")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not 8 <= len(password) <= 128:
        raise InputError("the password must be 8-128 characters (read from stdin)")
    db = Database(_database_url(args))
    try:
        migrate(db)
        auth.register(db, LedgerWallet(), args.name, password, role=OPERATOR)
    except ServiceError as error:
        raise InputError(error.message) from None
    finally:
        db.dispose()
    print(f"operator {args.name!r} created")
    return 0


def register(sub: Any) -> None:
    """Add ``serve``, ``audit`` and ``operator`` to the ``starfever`` command."""
    url_help = (f"database URL (default: ${ENV_NAMES['database_url']} or {DEFAULT_DATABASE_URL}"
                "); postgresql://user@host/db for PostgreSQL")
    p = sub.add_parser("serve", help="run the game server (HTTP API)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--database-url", help=url_help)
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    p.add_argument("--model", default=None, help="math model name or path (default: default)")
    p.add_argument("--log-level", default="info",
                   choices=("critical", "error", "warning", "info", "debug"))
    p.add_argument("--wallet", choices=("ledger", "operator"), default=None,
                   help="ledger (embedded, the default) or operator (the operator's wallet at "
                        "--wallet-url; secret in $STARFEVER_OPERATOR_SECRET)")
    p.add_argument("--wallet-url", default=None, help="the operator wallet's root URL")
    p.set_defaults(handler=serve)

    p = sub.add_parser("audit", help="replay every stored round and verify chain and wallets")
    p.add_argument("--database-url", help=url_help)
    p.add_argument("--show", type=int, default=20, help="mismatches to list (default 20)")
    p.set_defaults(handler=audit)

    p = sub.add_parser("reconcile", help="operator mode: each spin's debit, credit or rollback "
                                         "with both sides' ids, and what is in doubt")
    p.add_argument("--since", help="only spins debited from this date (YYYY-MM-DD) or time on")
    p.add_argument("--database-url", help=url_help)
    p.set_defaults(handler=reconcile)

    p = sub.add_parser("operator", help="manage operator accounts")
    op_sub = p.add_subparsers(dest="operator_command", required=True, metavar="ACTION")
    create = op_sub.add_parser("create", help="create an operator (password on stdin)")
    create.add_argument("name")
    create.add_argument("--database-url", help=url_help)
    create.set_defaults(handler=create_operator)
