"""``starfever operator-wallet-demo``: the reference operator wallet on a port of its own."""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from starfever.engine.errors import InputError
from starfever.seamless import protocol

_PLAYER = re.compile(r"([A-Za-z0-9_.:-]{1,128})=(\d{1,12})")


def register(sub: Any) -> None:
    """Add the command to ``starfever``'s parser."""
    p = sub.add_parser(
        "operator-wallet-demo",
        help="run the reference operator wallet (seamless-wallet protocol v2) for development",
        description="The other side of the operator-mode wallet protocol, for an operator's "
                    "developer and for tests: balances in its own SQLite file, signatures "
                    "checked, every call printed, faults injected on request (POST "
                    "/_admin/faults). The shared secret comes from STARFEVER_OPERATOR_SECRET.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9000)
    p.add_argument("--db", type=Path, default=Path("operator-wallet.db"),
                   help="its SQLite file (default ./operator-wallet.db)")
    p.add_argument("--player", action="append", default=[], metavar="ID=CENTS",
                   help="create or reset a player with this balance (repeatable)")
    p.add_argument("--quiet", action="store_true", help="do not print every call")
    p.add_argument("--ssl-certfile", type=Path, default=None, metavar="PEM",
                   help="serve https with this certificate (and --ssl-keyfile)")
    p.add_argument("--ssl-keyfile", type=Path, default=None, metavar="PEM")
    p.add_argument("--ssl-client-ca", type=Path, default=None, metavar="PEM",
                   help="require a client certificate signed by these CAs (mutual TLS)")
    p.set_defaults(handler=cmd_operator_wallet_demo)


def cmd_operator_wallet_demo(args: argparse.Namespace) -> int:
    import uvicorn

    from starfever.cli import check_can_listen
    from starfever.seamless.reference import ReferenceWallet, WalletStore
    from starfever.server.transport import CoalescingHTTPProtocol

    secret = protocol.check_secret(os.environ.get("STARFEVER_OPERATOR_SECRET"))
    if not 0 <= args.port <= 65535:
        raise InputError(f"--port must be 0..65535, got {args.port}")
    players = []
    for text in args.player:
        match = _PLAYER.fullmatch(text)
        if match is None:
            raise InputError(f"--player {text!r} must be ID=CENTS, e.g. alice=5000")
        players.append((match.group(1), int(match.group(2))))
    tls = _tls_options(args)
    # the address before the books: a wallet that cannot listen resets no balance
    check_can_listen(args.host, args.port)
    try:
        store = WalletStore(args.db)
    except sqlite3.Error as error:
        raise InputError(f"--db {str(args.db)!r}: cannot open it as an SQLite file ({error})") \
            from None
    for player_id, cents in players:
        store.set_player(player_id, cents, False)
    wallet = ReferenceWallet(store, secret, log=not args.quiet)
    scheme = "https" if tls else "http"
    print(f"reference operator wallet on {scheme}://{args.host}:{args.port} (books in "
          f"{args.db}); Star Fever: starfever serve --wallet operator --wallet-url "
          f"{scheme}://{args.host}:{args.port}", flush=True)
    # every call is printed by the wallet itself (not --quiet); no proxy in front of it. On
    # SIGTERM a call still under way gets 2 s to finish (its books are written before any
    # injected delay or drop): one held by a "delay" fault is then cancelled, where uvicorn
    # would wait for its whole delay (a minute, in the resender's tests)
    uvicorn.run(wallet, host=args.host, port=args.port, log_level="warning", access_log=False,
                proxy_headers=False, http=CoalescingHTTPProtocol, timeout_graceful_shutdown=2,
                **tls)
    store.close()
    return 0


def _tls_options(args: argparse.Namespace) -> dict[str, Any]:
    """uvicorn's TLS options of ``--ssl-*`` (none: plain http)."""
    import ssl

    if args.ssl_certfile is None:
        if args.ssl_keyfile is not None or args.ssl_client_ca is not None:
            raise InputError("--ssl-keyfile and --ssl-client-ca need --ssl-certfile")
        return {}
    for path in (args.ssl_certfile, args.ssl_keyfile, args.ssl_client_ca):
        if path is not None and not path.is_file():
            raise InputError(f"{str(path)!r} is not a readable file")
    options: dict[str, Any] = {"ssl_certfile": str(args.ssl_certfile),
                               "ssl_keyfile": str(args.ssl_keyfile or args.ssl_certfile)}
    if args.ssl_client_ca is not None:
        options.update(ssl_ca_certs=str(args.ssl_client_ca), ssl_cert_reqs=ssl.CERT_REQUIRED)
    return options
