"""A reference operator wallet: the other side of the protocol, as an operator would run it.

It speaks version 2 of the protocol: every reply, a refusal too, echoes the request's
``request_id`` and ``transaction_id``, so that it answers that request and no other. It keeps
players and balances in its own SQLite file, refuses unsigned or wrongly signed requests,
answers a repeated ``transaction_id`` with its first answer, records a rollback of a
debit it never saw (so that the late debit is refused), and can be told to misbehave: delay a
reply past Star Fever's timeout, drop a reply after applying it, answer 500 without applying,
apply a request twice (the second time must change nothing), or apply it and sign the reply
with another secret (``forge``: what a man in the middle would send, which must count for
nothing), or refuse it with a final ``403 player_blocked`` without applying or recording it
(``refuse``: an operator that wrongly refuses a credit leaves the win unpaid, rule 5). An
operator's developer runs
it with ``starfever operator-wallet-demo`` and watches every call; the tests play against it.

It is a demonstration and a test peer, not a production wallet: its ``/_admin`` routes (set a
balance, block a player, list transactions, inject faults, sign a launch) are unauthenticated
and meant for 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.types import Receive, Scope, Send

from starfever.seamless import protocol as p

FAULTS = ("delay", "drop", "error", "twice", "forge", "refuse")
FORGED_SECRET = "not-the-operator-secret-a-forger-signs-with"
"""What a ``forge`` fault signs its reply with: what a party without the shared secret sends."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS players (
    player_id TEXT PRIMARY KEY,
    balance INTEGER NOT NULL CHECK (balance >= 0),
    blocked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS transactions (
    transaction_id TEXT PRIMARY KEY,
    method TEXT NOT NULL,
    player_id TEXT NOT NULL,
    round_id TEXT,
    amount INTEGER NOT NULL DEFAULT 0,
    jackpot_amount INTEGER NOT NULL DEFAULT 0,
    debit_transaction_id TEXT,
    operator_transaction_id TEXT NOT NULL,
    status INTEGER NOT NULL,
    reply TEXT NOT NULL,
    applied INTEGER NOT NULL,
    closed_by TEXT,
    created_at TEXT NOT NULL,
    round_details_url TEXT,
    free_round TEXT,
    operator_session TEXT,
    brand TEXT
);
CREATE INDEX IF NOT EXISTS transactions_debit ON transactions (debit_transaction_id);
"""


@dataclass(frozen=True, slots=True)
class Answer:
    """A reply: HTTP status and JSON body."""

    status: int
    body: dict[str, Any]


def _refusal(code: str, message: str, status: int = 400) -> Answer:
    return Answer(status, {"error": code, "message": message})


class WalletStore:
    """The operator's books: one SQLite file, every request applied in one transaction."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(transactions)")}
        if "round_details_url" not in columns:  # a file of an older demo
            self.db.execute("ALTER TABLE transactions ADD COLUMN round_details_url TEXT")
        if "free_round" not in columns:  # a file from before free rounds
            self.db.execute("ALTER TABLE transactions ADD COLUMN free_round TEXT")
        for name in ("operator_session", "brand"):  # a file from before ADR 0081
            if name not in columns:
                self.db.execute(f"ALTER TABLE transactions ADD COLUMN {name} TEXT")

    def close(self) -> None:
        self.db.close()

    # --- the protocol ------------------------------------------------------------------
    def apply(self, method: str, body: Mapping[str, Any]) -> Answer:
        """Apply one well-formed request (signature and shape already checked)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            answer = self._apply(method, body)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return answer

    def _apply(self, method: str, body: Mapping[str, Any]) -> Answer:
        if method != p.BALANCE:
            seen = self.db.execute("SELECT status, reply FROM transactions "
                                   "WHERE transaction_id = ?", (body["transaction_id"],)).fetchone()
            if seen is not None:  # idempotency: the first answer, nothing moves
                return Answer(int(seen[0]), json.loads(seen[1]))
        player = self.db.execute("SELECT balance, blocked FROM players WHERE player_id = ?",
                                 (body["player_id"],)).fetchone()
        if player is None:
            unknown = _refusal(p.BAD_REQUEST, "unknown player")
            return unknown if method == p.BALANCE else self._record(method, body, unknown, False)
        balance, blocked = int(player[0]), bool(player[1])
        if method == p.BALANCE:
            return Answer(200, {"balance": balance})
        if method == p.DEBIT:
            return self._debit(body, balance, blocked)
        if method == p.CREDIT:
            return self._credit(body, balance)
        return self._rollback(body, balance)

    def _debit(self, body: Mapping[str, Any], balance: int, blocked: bool) -> Answer:
        amount = int(body["amount"])
        late = self.db.execute("SELECT 1 FROM transactions WHERE method = 'rollback' AND "
                               "debit_transaction_id = ?", (body["transaction_id"],)).fetchone()
        if late is not None:
            answer = _refusal(p.BAD_REQUEST, "this debit was rolled back before it arrived")
        elif blocked:
            answer = _refusal(p.PLAYER_BLOCKED, "the player may not play now", 403)
        elif balance < amount:
            answer = _refusal(p.INSUFFICIENT_FUNDS,
                              f"the balance of {balance} cents does not cover {amount}", 402)
        else:
            balance = self._move(body["player_id"], -amount)
            answer = Answer(200, {"balance": balance})
        return self._record(p.DEBIT, body, answer, answer.status == 200)

    def _credit(self, body: Mapping[str, Any], balance: int) -> Answer:
        debit = self._debit_of(body)
        if debit is None:
            answer = _refusal(p.UNKNOWN_TRANSACTION, "no acknowledged debit with that id", 404)
        elif debit[1] is not None:
            answer = _refusal(p.BAD_REQUEST, f"that debit was already closed by {debit[1]}", 409)
        else:
            balance = self._move(body["player_id"], int(body["amount"]))
            self._close(body["debit_transaction_id"], body["transaction_id"])
            answer = Answer(200, {"balance": balance})
        return self._record(p.CREDIT, body, answer, answer.status == 200)

    def _rollback(self, body: Mapping[str, Any], balance: int) -> Answer:
        debit = self._debit_of(body)
        applied = False
        if debit is not None and debit[1] is not None:
            closer = debit[1]
            answer = (Answer(200, {"balance": balance}) if self._is_rollback(closer)
                      else _refusal(p.BAD_REQUEST, f"that debit was credited by {closer}", 409))
        else:
            if debit is not None:  # refund it; an unknown debit is recorded all the same
                balance = self._move(body["player_id"], int(debit[0]))
                self._close(body["debit_transaction_id"], body["transaction_id"])
                applied = True
            answer = Answer(200, {"balance": balance})
        return self._record(p.ROLLBACK, body, answer, applied)

    def _debit_of(self, body: Mapping[str, Any]) -> tuple[int, str | None] | None:
        row = self.db.execute(
            "SELECT amount, closed_by FROM transactions WHERE transaction_id = ? AND "
            "method = 'debit' AND applied = 1 AND player_id = ?",
            (body["debit_transaction_id"], body["player_id"])).fetchone()
        return None if row is None else (int(row[0]), row[1])

    def _is_rollback(self, transaction_id: str) -> bool:
        row = self.db.execute("SELECT method FROM transactions WHERE transaction_id = ?",
                              (transaction_id,)).fetchone()
        return row is not None and row[0] == p.ROLLBACK

    def _move(self, player_id: str, delta: int) -> int:
        row = self.db.execute("UPDATE players SET balance = balance + ? WHERE player_id = ? "
                              "RETURNING balance", (delta, player_id)).fetchall()
        return int(row[0][0])  # (fetched to the end: the statement is done before COMMIT)

    def _close(self, debit_id: str, by: str) -> None:
        self.db.execute("UPDATE transactions SET closed_by = ? WHERE transaction_id = ?",
                        (by, debit_id))

    def _record(self, method: str, body: Mapping[str, Any], answer: Answer,
                applied: bool) -> Answer:
        operator_id = f"op-{uuid.uuid4().hex[:16]}"
        if answer.status == 200 and method in (p.DEBIT, p.CREDIT):
            answer = Answer(200, {**answer.body, "operator_transaction_id": operator_id})
        self.db.execute(
            "INSERT INTO transactions (transaction_id, method, player_id, round_id, amount, "
            "jackpot_amount, debit_transaction_id, operator_transaction_id, status, reply, "
            "applied, created_at, round_details_url, free_round, operator_session, brand) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (body["transaction_id"], method, body["player_id"], str(body.get("round_id", "")),
             int(body.get("amount", 0)), int(body.get("jackpot_amount", 0)),
             body.get("debit_transaction_id"), operator_id, answer.status,
             json.dumps(answer.body), int(applied), datetime.now(UTC).isoformat(),
             body.get("round_details_url"),
             None if body.get("free_round") is None else json.dumps(body["free_round"]),
             body.get("operator_session"), body.get("brand")))
        return answer

    # --- administration ------------------------------------------------------------------
    def set_player(self, player_id: str, balance: int, blocked: bool) -> dict[str, Any]:
        """Create a player or set its balance and block."""
        self.db.execute("INSERT INTO players (player_id, balance, blocked) VALUES (?, ?, ?) "
                        "ON CONFLICT (player_id) DO UPDATE SET balance = excluded.balance, "
                        "blocked = excluded.blocked", (player_id, balance, int(blocked)))
        return self.player(player_id) or {}

    def player(self, player_id: str) -> dict[str, Any] | None:
        """A player's balance and block, or None."""
        row = self.db.execute("SELECT balance, blocked FROM players WHERE player_id = ?",
                              (player_id,)).fetchone()
        if row is None:
            return None
        return {"player_id": player_id, "balance": int(row[0]), "blocked": bool(row[1])}

    def transactions(self, player_id: str | None = None) -> list[dict[str, Any]]:
        """Every recorded request (oldest first), of one player or all."""
        query = ("SELECT transaction_id, method, player_id, round_id, amount, jackpot_amount, "
                 "debit_transaction_id, operator_transaction_id, status, applied, closed_by, "
                 "round_details_url, free_round, operator_session, brand FROM transactions")
        args: tuple[str, ...] = ()
        if player_id is not None:
            query += " WHERE player_id = ?"
            args = (player_id,)
        names = ("transaction_id", "method", "player_id", "round_id", "amount", "jackpot_amount",
                 "debit_transaction_id", "operator_transaction_id", "status", "applied",
                 "closed_by", "round_details_url", "free_round", "operator_session", "brand")
        rows = self.db.execute(query + " ORDER BY rowid", args).fetchall()
        return [{**dict(zip(names, row, strict=True)), "applied": bool(row[9]),
                 "free_round": None if row[12] is None else json.loads(row[12])}
                for row in rows]


@dataclass(slots=True)
class Fault:
    """One misbehaviour, consumed by the next call of its method."""

    kind: str
    seconds: float = 0.0


Handler = Callable[["_Call"], Awaitable[tuple[int, bytes, list[tuple[bytes, bytes]]]]]
"""A route: the request in, (status, body, extra headers) out."""
_JSON = (b"content-type", b"application/json")


@dataclass(slots=True)
class _Call:
    """One request as the routes see it: its path, query string, raw body, the signature
    header, and ``receive`` (the ``drop`` fault waits on it for the client to go away)."""

    path: str
    query: bytes
    body: bytes
    signature: str | None
    receive: Receive


def _json(status: int, value: Any) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    return status, json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(), [_JSON]


class ReferenceWallet:
    """The ASGI app: the four protocol methods under ``/`` and the ``/_admin`` routes.

    A plain ASGI callable on uvicorn, without a framework: the wallet answers two calls per
    spin, and a router, request and response objects per call cost it about half its CPU
    (``benchmarks/load.py --wallet operator`` runs it on the same two cores as the server)."""

    def __init__(self, store: WalletStore, secret: str, *, log: bool = False) -> None:
        self.store = store
        self.secret = p.check_secret(secret)
        self.log = log
        self.faults: dict[str, deque[Fault]] = {method: deque() for method in p.METHODS}
        self.routes: dict[tuple[str, str], Handler] = {
            ("POST", f"/{method}"): self._method for method in p.METHODS}
        self.routes.update({
            ("POST", "/_admin/players"): self._set_player,
            ("GET", "/_admin/transactions"): self._transactions,
            ("POST", "/_admin/faults"): self._faults,
            ("DELETE", "/_admin/faults"): self._clear_faults,
        })

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        handler = self.routes.get((method, path))
        if handler is None and method == "GET" and path.startswith(_PLAYER_PATH) \
                and "/" not in path[len(_PLAYER_PATH):] and len(path) > len(_PLAYER_PATH):
            handler = self._get_player
        if handler is None:
            known = any(route_path == path for _, route_path in self.routes) or \
                path.startswith(_PLAYER_PATH)
            status, body, headers = _json(405 if known else 404, {
                "error": p.BAD_REQUEST,
                "message": "method not allowed" if known else "not found"})
        else:
            raw, disconnected = await _read_body(receive)
            if disconnected:
                return
            signature = None
            for name, value in scope["headers"]:
                if name == _SIGNATURE:
                    signature = value.decode("latin-1")
            status, body, headers = await handler(
                _Call(path, scope.get("query_string", b""), raw, signature, receive))
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-length", str(len(body)).encode()), *headers]})
        await send({"type": "http.response.body", "body": body})

    def _reply(self, answer: Answer, request: Mapping[str, Any] | None = None, *,
               forged: bool = False) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """The signed reply to ``request`` (as far as it could be read): its body echoes the
        request's ``request_id`` and ``transaction_id`` (protocol v2)."""
        echo = {name: request[name] for name in p.ECHOED
                if request is not None and isinstance(request.get(name), str)}
        raw = json.dumps({**answer.body, **echo}, separators=(",", ":")).encode()
        secret = FORGED_SECRET if forged else self.secret
        return answer.status, raw, [_JSON, (_OPERATOR_SIGNATURE, p.sign(secret, raw).encode())]

    async def _method(self, call: _Call) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        method = call.path[1:]
        raw = call.body
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            body = None
        if not p.verify(self.secret, raw, call.signature):
            return self._reply(_refusal(p.BAD_SIGNATURE, "the signature does not match", 401),
                               body)
        try:
            if body is None:
                raise p.ProtocolError("the body must be a JSON object")
            p.check_request(method, body, datetime.now(UTC))
        except p.ProtocolError as error:
            return self._reply(_refusal(p.BAD_REQUEST, str(error)), body)
        fault = self.faults[method].popleft() if self.faults[method] else None
        if fault is not None and fault.kind == "error":
            self._say(method, body, 500, "fault: 500, not applied")
            return 500, b"operator wallet failure (injected)", [
                (b"content-type", b"text/plain; charset=utf-8")]
        if fault is not None and fault.kind == "refuse":  # a final 4xx, nothing recorded
            self._say(method, body, 403, "fault: refused, not applied")
            return self._reply(_refusal(p.PLAYER_BLOCKED, "refused (injected)", 403), body)
        answer = self.store.apply(method, body)
        self._say(method, body, answer.status, fault.kind if fault else "")
        if fault is not None and fault.kind == "twice":
            again = self.store.apply(method, body)
            if again != answer and method != p.BALANCE:
                raise RuntimeError(f"the second delivery of {body['transaction_id']} changed "
                                   "its answer")
        if fault is not None and fault.kind == "delay":
            await asyncio.sleep(fault.seconds)
        if fault is not None and fault.kind == "drop":
            while (await call.receive())["type"] != "http.disconnect":
                pass
        return self._reply(answer, body, forged=fault is not None and fault.kind == "forge")

    def _say(self, method: str, body: Mapping[str, Any], status: int, note: str) -> None:
        if self.log:
            free = body.get("free_round")  # a free round's call says so (issue 36)
            shown = "" if not isinstance(free, dict) else (
                f" FREE ROUND grant {free.get('grant_id')} campaign {free.get('campaign_id')} "
                f"rounds left {free.get('rounds_left')}")
            brand = f" brand {body['brand']}" if "brand" in body else ""
            print(f"{method:8} {body.get('transaction_id', '-'):40} player "
                  f"{body.get('player_id')} session {body.get('operator_session', '-')}{brand} "
                  f"amount {body.get('amount', '-')}{shown} -> {status} {note}",
                  file=sys.stderr, flush=True)

    @staticmethod
    def _object(call: _Call) -> dict[str, Any]:
        try:
            body = json.loads(call.body)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise p.ProtocolError("the body must be a JSON object")
        return body

    async def _set_player(self, call: _Call) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        try:
            body = self._object(call)
            player_id, balance = body.get("player_id"), body.get("balance", 0)
            if not p.is_id(player_id) or type(balance) is not int or balance < 0:
                raise p.ProtocolError("needs player_id (an id) and balance (cents >= 0)")
        except p.ProtocolError as error:
            return _json(400, {"error": p.BAD_REQUEST, "message": str(error)})
        return _json(200, self.store.set_player(str(player_id), balance,
                                                bool(body.get("blocked", False))))

    async def _get_player(self, call: _Call) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        found = self.store.player(call.path[len(_PLAYER_PATH):])
        if found is None:
            return _json(404, {"error": p.BAD_REQUEST, "message": "unknown player"})
        return _json(200, found)

    async def _transactions(self, call: _Call) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        wanted = parse_qs(call.query.decode("latin-1")).get("player_id")
        return _json(200, self.store.transactions(wanted[-1] if wanted else None))

    async def _clear_faults(self, _: _Call) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        for queue in self.faults.values():
            queue.clear()
        return _json(200, {"faults": 0})

    async def _faults(self, call: _Call) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        try:
            body = self._object(call)
            method, kind = body.get("method"), body.get("fault")
            times, seconds = body.get("times", 1), body.get("seconds", 0)
            if method not in p.METHODS or kind not in FAULTS:
                raise p.ProtocolError(f"method must be one of {p.METHODS}, fault one of {FAULTS}")
            if type(times) is not int or not 1 <= times <= 100_000:
                raise p.ProtocolError("times must be a whole number 1..100000")
            if not isinstance(seconds, int | float) or not 0 <= seconds <= 3600:
                raise p.ProtocolError("seconds must be 0..3600")
        except p.ProtocolError as error:
            return _json(400, {"error": p.BAD_REQUEST, "message": str(error)})
        self.faults[str(method)].extend(Fault(str(kind), float(seconds)) for _ in range(times))
        return _json(200, {"faults": sum(len(q) for q in self.faults.values())})


_PLAYER_PATH = "/_admin/players/"
_SIGNATURE = p.STARFEVER_SIGNATURE.lower().encode()
_OPERATOR_SIGNATURE = p.OPERATOR_SIGNATURE.lower().encode()


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request's whole body, and whether the client went away first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"", True
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), False


async def _lifespan(receive: Receive, send: Send) -> None:
    """Nothing to start or stop: say so to the server."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = ["FAULTS", "Answer", "Fault", "ReferenceWallet", "WalletStore"]
