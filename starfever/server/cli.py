"""``starfever serve``, ``starfever audit``, ``starfever reconcile`` and ``starfever operator
create``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

from starfever.engine.errors import InputError
from starfever.server.settings import (
    DEFAULT_DATABASE_URL,
    ENV_NAMES,
    get_settings,
    shown_url,
)

if TYPE_CHECKING:
    from starfever.server.seamless_config import OperatorConfig


def _database_url(args: argparse.Namespace) -> str:
    url: str = args.database_url or os.environ.get(ENV_NAMES["database_url"]) or \
        DEFAULT_DATABASE_URL
    return url


def serve(args: argparse.Namespace) -> int:
    """Migrate the database, then serve the API with uvicorn; on SIGTERM, end as SIGTERM ends
    a process, once the metrics directory is removed (:func:`unwinding_on_sigterm`)."""
    # the metrics directory before prometheus_client is imported: its mode is chosen then
    with unwinding_on_sigterm(), metrics_directory():
        return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from starfever.cli import check_can_listen
    from starfever.engine.model import load_model
    from starfever.server.app import TEST_MODE_WARNING
    from starfever.server.db import checked_url, database_problem, open_migrated
    from starfever.server.identity import (
        check_startup,
        record_approved_models,
        record_running_build,
    )
    from starfever.server.logs import log_config
    from starfever.server.services.anchor import ensure_boundary
    from starfever.server.services.events import record_start
    from starfever.server.services.jackpot import ensure_pool
    from starfever.server.services.readiness import prove_write
    from starfever.server.spin import transaction
    from starfever.server.transport import NoDelayHTTPProtocol

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port must be 0..65535, got {args.port}")
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    os.environ[ENV_NAMES["database_url"]] = _database_url(args)
    if args.model is not None:
        os.environ[ENV_NAMES["model"]] = args.model
    if args.market is not None:
        from starfever.markets import load_market

        load_market(args.market)  # an unknown name: one line naming the markets, exit 2
        os.environ[ENV_NAMES["market"]] = args.market
    if args.currency is not None:
        from starfever.currencies import parse_currencies

        parse_currencies(args.currency)  # an unknown code: one line naming the currencies, exit 2
        os.environ[ENV_NAMES["currencies"]] = args.currency
    if args.drain_grace is not None:
        os.environ[ENV_NAMES["drain_grace_seconds"]] = str(args.drain_grace)
    operator = wallet_mode(args)
    get_settings.cache_clear()
    settings = get_settings()  # every worker reads the same environment
    checked_url(settings.database_url)  # an in-memory database would not outlive the start
    model = load_model(settings.model)
    identity = check_startup(settings, model)  # production: the certified build, an approved model
    # the address before the database: a server that cannot listen writes nothing
    check_can_listen(args.host, args.port)
    for warning in identity.warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    if settings.test_mode:
        print(f"WARNING: {TEST_MODE_WARNING}", file=sys.stderr)
    db = open_migrated(settings.database_url)
    try:
        ensure_pool(db, model, settings.served_currencies)
        ensure_boundary(db, settings.chain_key())
        prove_write(db)  # a server that cannot book a bet must not start
        transaction.check(db)
        record_start(db, model={"name": model.name, "version": model.version,
                                "sha256": model.sha256},
                     settings=recorded_settings(settings, operator))
        record_approved_models(db, settings)
        record_running_build(db, identity)
    except SQLAlchemyError as error:
        raise database_problem(settings.database_url, error) from None
    finally:
        db.dispose()
    wallet = f"operator wallet {operator.url}" if operator else "ledger wallet"
    print(f"Star Fever serving on http://{args.host}:{args.port} "
          f"(model {model.name} {model.version}, market {settings.market}, currencies "
          f"{','.join(settings.served_currencies)}, database "
          f"{shown_url(settings.database_url)}, {wallet}; running build sha256 "
          f"{identity.running_sha256[:16]}..., software "
          f"{'verified' if identity.software.ok else 'NOT verified'}, environment "
          f"{'sealed' if identity.runtime.ok else 'NOT sealed'})", flush=True)
    uvicorn.run("starfever.server.app:app_from_env", factory=True, host=args.host,
                port=args.port, workers=args.workers, log_level=args.log_level,
                log_config=log_config(args.log_format, args.log_level),
                access_log=False,  # the server's own access log (logs.access): no query string
                http=NoDelayHTTPProtocol, timeout_keep_alive=settings.keep_alive_seconds,
                # forwarded headers only from the configured proxies (uvicorn's default
                # trusts any 127.0.0.1 peer, or $FORWARDED_ALLOW_IPS)
                proxy_headers=bool(settings.forwarded_allow_ips),
                forwarded_allow_ips=settings.forwarded_allow_ips or None)
    return 0


MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"


class Terminated(BaseException):
    """SIGTERM, raised where the process stands, so that every ``finally`` on the way out runs
    (a ``BaseException``: no ``except Exception`` may swallow it)."""


def _raise_terminated(sig: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the clean-up short
    raise Terminated(sig)


@contextmanager
def unwinding_on_sigterm() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` inside the block; once the block has unwound, the
    process ends by SIGTERM, as it would have without this (its exit status says so).

    uvicorn takes SIGTERM over while it serves, shuts down gracefully, puts the handler it
    found back and raises the signal again "to trigger the expected behaviour". The handler it
    found was the default one, which ended the process on the spot: no ``finally`` ran, and
    every stop of a one-process server left its metrics directory behind in /tmp. The handler
    it finds now is this one."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        raise  # not reached: the default handler ends the process
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def metrics_directory() -> Iterator[None]:
    """A fresh directory for ``prometheus_client``'s multiprocess mode, for every worker of
    this server (set before any worker starts, removed when the server ends); one given in
    ``$PROMETHEUS_MULTIPROC_DIR`` is used as it is (the operator clears it between runs)."""
    import shutil
    import tempfile

    if os.environ.get(MULTIPROCESS_ENV):
        yield
        return
    directory = tempfile.mkdtemp(prefix="starfever-metrics-")
    os.environ[MULTIPROCESS_ENV] = directory
    try:
        yield
    finally:
        del os.environ[MULTIPROCESS_ENV]
        shutil.rmtree(directory, ignore_errors=True)


NOT_RECORDED = frozenset(("secret_key", "database_url", "metrics_token"))
"""Settings the significant-events log leaves out: a secret, and a URL that may hold one."""


def recorded_settings(settings: Any, operator: OperatorConfig | None) -> dict[str, object]:
    """What ``settings_changed`` records of the settings: every one but :data:`NOT_RECORDED`,
    and the wallet (its URL with any password masked)."""
    import dataclasses

    values: dict[str, object] = {f.name: getattr(settings, f.name)
                                 for f in dataclasses.fields(settings)
                                 if f.name not in NOT_RECORDED}
    values["wallet"] = "operator" if operator else "ledger"
    values["wallet_url"] = shown_url(operator.url) if operator else None
    return values


def _audit_settings() -> Any:
    """Settings for the audit and the statement: the key file and the deposit limits from the
    environment (the database URL comes from the command line)."""
    from starfever.server.settings import settings_from_env

    return settings_from_env({k: v for k, v in os.environ.items()
                              if k != ENV_NAMES["database_url"]})


def _read_statement(path: str) -> dict[str, Any]:
    import json

    try:
        with open(path, encoding="utf-8") as file:
            loaded = json.load(file)
    except json.JSONDecodeError as error:
        raise InputError(f"statement {path}: not JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise InputError(f"statement {path}: not UTF-8 text, so not a chain statement") \
            from None
    if not isinstance(loaded, dict):
        raise InputError(f"statement {path}: not a chain statement")
    return loaded


def wallet_mode(args: argparse.Namespace) -> OperatorConfig | None:
    """Put ``--wallet``, ``--wallet-url``, the wallet's TLS files and ``--public-url`` into the
    environment every worker reads and check the operator mode's configuration
    (``seamless_config``); refused as one line. Outside production a missing public URL is the
    address the server listens on (said in a warning); production refuses to start without
    one."""
    from starfever.server import seamless_config as oc

    for value, name in ((args.wallet, oc.ENV_WALLET), (args.wallet_url, oc.ENV_WALLET_URL),
                        (getattr(args, "public_url", None), oc.ENV_PUBLIC_URL),
                        (getattr(args, "wallet_ca_file", None), oc.ENV_CA_FILE),
                        (getattr(args, "wallet_client_cert", None), oc.ENV_CLIENT_CERT),
                        (getattr(args, "wallet_client_key", None), oc.ENV_CLIENT_KEY)):
        if value:
            os.environ[name] = value
    oc.get_operator_config.cache_clear()
    config = oc.get_operator_config()
    if config is not None and config.public_url is None:
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::", "") else args.host
        os.environ[oc.ENV_PUBLIC_URL] = f"http://{host}:{args.port}"
        print(f"WARNING: no --public-url ({oc.ENV_PUBLIC_URL}): launch addresses use "
              f"{os.environ[oc.ENV_PUBLIC_URL]} (production refuses to start without one)",
              file=sys.stderr)
        oc.get_operator_config.cache_clear()
        config = oc.get_operator_config()
    return config


def audit(args: argparse.Namespace) -> int:
    """Replay and verify every stored round, the chains and every wallet."""
    from starfever.server.audit import run_audit
    from starfever.server.db import open_existing

    settings = _audit_settings()
    statements = [(path, _read_statement(path)) for path in args.statement]
    from starfever.engine.model import load_model

    from_files = [load_model(path) for path in args.model]
    db = open_existing(_database_url(args))
    try:
        report = run_audit(db, settings, statements, from_files)
        _record_audit(db, report)
    finally:
        db.dispose()
    print(report.summary())
    for problem in report.problems[: args.show]:
        print(f"  MISMATCH {problem}")
    if len(report.problems) > args.show:
        print(f"  ... and {len(report.problems) - args.show} more")
    return 0 if report.ok else 1


def _record_audit(db: Any, report: Any) -> None:
    """Log the audit's result as a significant event (the back office shows the last one); a
    database that takes no write (a read-only copy) gets a warning, and the audit stands."""
    from sqlalchemy.exc import SQLAlchemyError

    from starfever.server.services.events import record_audit

    try:
        record_audit(db, ok=report.ok, problems=report.problems, checked={
            "rounds": report.rounds_checked, "wallets": report.wallets_checked,
            "entries": report.entries_checked, "statements": report.statements_checked,
            "operator_rounds": report.operator_rounds_checked})
    except SQLAlchemyError as error:
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()
        print(f"warning: the audit's result was not logged: {reason[0] if reason else error}",
              file=sys.stderr)


def reconcile(args: argparse.Namespace) -> int:
    """Operator mode: a summary of the spins per state and each spin still in doubt (exit 1 if
    any); ``--full`` lists every spin's debit, credit or rollback with both sides' transaction
    ids; ``--json`` as one JSON object; ``--player`` / ``--round`` narrow it."""
    from starfever.server.db import open_existing
    from starfever.server.reconcile import parse_since
    from starfever.server.reconcile import reconcile as run

    since = parse_since(args.since) if args.since else None
    db = open_existing(_database_url(args))
    try:
        report = run(db, since, player_id=args.player, round_=args.round)
    finally:
        db.dispose()
    if args.json:
        import json

        print(json.dumps(report.as_dict(full=args.full), indent=2))
    else:
        print("\n".join(report.lines() if args.full else report.summary()))
    return 1 if report.in_doubt else 0


def chain_statement(args: argparse.Namespace) -> int:
    """Print a signed statement of both chain heads (JSON) to publish or timestamp elsewhere."""
    import json

    from starfever.server.db import open_existing
    from starfever.server.services.anchor import statement

    settings = _audit_settings()
    db = open_existing(_database_url(args))
    try:
        signed = statement(db, settings.chain_key())
    finally:
        db.dispose()
    text = json.dumps(signed, indent=2, sort_keys=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as file:
            file.write(text + "\n")
        print(f"statement of round {signed['rounds']['last_id']} and cashier entry "
              f"{signed['cashier']['last_id']} written to {args.out}")
    else:
        print(text)
    return 0


def _read_password(prompt: str) -> str:
    """The password: typed at a terminal, or the first line of stdin, which must be UTF-8
    text (refused before any database is opened)."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(prompt)
    line = sys.stdin.buffer.readline()
    try:
        return line.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise InputError("the password on stdin is not UTF-8 text") from None


def _show_totp(new: Any) -> None:
    print("second factor (TOTP): add this secret to an authenticator app now; it is not "
          "shown again")
    print(f"  secret: {new.totp_secret}")
    print(f"  uri:    {new.provisioning_uri}")


def create_operator(args: argparse.Namespace) -> int:
    """Create an operator account; the password is the first line of stdin. Prints the TOTP
    secret of the account's second factor."""
    from starfever.server.db import checked_url, open_migrated
    from starfever.server.schemas import is_username
    from starfever.server.services import operator_accounts
    from starfever.server.services.errors import ServiceError
    from starfever.server.settings import Settings
    from starfever.server.spin.wallets import LedgerWallet

    if not is_username(args.name):
        raise InputError(f"operator name {args.name!r} must be 3-32 characters of a-z 0-9 _ . -")
    url = _database_url(args)
    checked_url(url)  # an in-memory database would lose the account with the command
    password = _read_password("operator password: ")
    # a WeakPassword is an InputError
    operator_accounts.check_operator_password(args.name, password)
    db = open_migrated(url)
    try:
        new = operator_accounts.create_operator(db, Settings(), LedgerWallet(), args.name, password)
    except ServiceError as error:
        raise InputError(error.message) from None
    finally:
        db.dispose()
    print(f"operator {args.name!r} created")
    _show_totp(new)
    return 0


def reset_operator_totp(args: argparse.Namespace) -> int:
    """Give an operator a new TOTP secret (and print it)."""
    from starfever.server.db import migrate, open_existing
    from starfever.server.services import operator_accounts
    from starfever.server.services.errors import ServiceError

    db = open_existing(_database_url(args))  # never creates one
    try:
        migrate(db)
        new = operator_accounts.reset_totp(db, args.name)
    except ServiceError as error:
        raise InputError(error.message) from None
    finally:
        db.dispose()
    print(f"operator {args.name!r}: new second factor")
    _show_totp(new)
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
    p.add_argument("--market", default=None,
                   help="market profile: at (the default: the Austrian conditions), de "
                        "(with --model de), uk (2.5 s, GBP 5 a spin, GBP 2 under 25) or strict "
                        "(a test profile)")
    p.add_argument("--currency", default=None, metavar="CODES",
                   help="served currencies, e.g. EUR,GBP (the first is a new ledger wallet's; "
                        "default: the market's currency, or EUR)")
    p.add_argument("--log-level", default="info",
                   choices=("critical", "error", "warning", "info", "debug"))
    p.add_argument("--log-format", choices=("json", "text"), default="json",
                   help="json (one object a line, with the request id; the default) or text")
    p.add_argument("--wallet", choices=("ledger", "operator"), default=None,
                   help="ledger (embedded, the default) or operator (the operator's wallet at "
                        "--wallet-url; secret in $STARFEVER_OPERATOR_SECRET)")
    p.add_argument("--wallet-url", default=None,
                   help="the operator wallet's root URL (http:// or https://)")
    p.add_argument("--wallet-ca-file", default=None, metavar="PEM",
                   help="CA certificates an https:// wallet is verified against (default: the "
                        "system's; $STARFEVER_WALLET_CA_FILE)")
    p.add_argument("--wallet-client-cert", default=None, metavar="PEM",
                   help="client certificate for mutual TLS with the wallet "
                        "($STARFEVER_WALLET_CLIENT_CERT)")
    p.add_argument("--wallet-client-key", default=None, metavar="PEM",
                   help="its key, unless in the certificate's file "
                        "($STARFEVER_WALLET_CLIENT_KEY)")
    p.add_argument("--public-url", default=None, metavar="ORIGIN",
                   help="operator mode: the game's public origin (https://game.example) the "
                        "launch addresses are built on; required in production "
                        "($STARFEVER_PUBLIC_URL)")
    p.add_argument("--drain-grace", type=int, default=None, metavar="SECONDS",
                   help="on SIGTERM, serve on this long with /readyz 503 before draining "
                        "(default 5; 0: drain at once; $STARFEVER_DRAIN_GRACE_SECONDS)")
    p.set_defaults(handler=serve)

    p = sub.add_parser("audit", help="replay every stored round and verify chain and wallets")
    p.add_argument("--database-url", help=url_help)
    p.add_argument("--show", type=int, default=20, help="mismatches to list (default 20)")
    p.add_argument("--statement", action="append", default=[], metavar="FILE",
                   help="a signed chain statement (starfever chain-statement) the chains "
                        "must still hold; repeatable")
    p.add_argument("--model", action="append", default=[], metavar="PATH",
                   help="a model file not shipped with the package (a tuned model a server "
                        "played from a file), for the rounds it played; repeatable")
    p.set_defaults(handler=audit)

    p = sub.add_parser("chain-statement", help="print a signed statement of the chain heads "
                                               "(to publish or timestamp elsewhere)")
    p.add_argument("--database-url", help=url_help)
    p.add_argument("--out", help="write it to this file instead of standard output")
    p.set_defaults(handler=chain_statement)

    p = sub.add_parser("reconcile", help="operator mode: each spin's debit, credit or rollback "
                                         "with both sides' ids, and what is in doubt")
    p.add_argument("--since", help="only spins debited from this date (YYYY-MM-DD) or time on")
    p.add_argument("--player", metavar="PLAYER_ID",
                   help="only this player's spins (the operator's player id)")
    p.add_argument("--round", metavar="ROUND",
                   help="only this round's spin: Star Fever's round id, or the round_id the "
                        "operator was sent")
    p.add_argument("--full", action="store_true",
                   help="list every spin, not only the summary and the spins in doubt")
    p.add_argument("--json", action="store_true", help="write the report as one JSON object")
    p.add_argument("--database-url", help=url_help)
    p.set_defaults(handler=reconcile)

    p = sub.add_parser("operator", help="manage operator accounts")
    op_sub = p.add_subparsers(dest="operator_command", required=True, metavar="ACTION")
    create = op_sub.add_parser("create", help="create an operator (password on stdin; prints "
                                              "the TOTP secret of its second factor)")
    create.add_argument("name")
    create.add_argument("--database-url", help=url_help)
    create.set_defaults(handler=create_operator)
    totp = op_sub.add_parser("totp", help="give an operator a new TOTP secret (prints it)")
    totp.add_argument("name")
    totp.add_argument("--database-url", help=url_help)
    totp.set_defaults(handler=reset_operator_totp)
