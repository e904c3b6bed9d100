"""Cashier idempotency (ADR 0017): a deposit or withdrawal sent again with its
``Idempotency-Key`` answers the first booking and moves the money once; the same key with
another request is refused; a booking can be looked up by its key. A real server on SQLite and
on PostgreSQL."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import httpx
from sqlalchemy import text

from tests.harness import Server, run_cli_in_process
from tests.server.helpers import books


def _post(server: Server, kind: str, name: str, amount: int, key: str | None,
          token: str | None = None) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return server.call("POST", f"/players/{name}/{kind}", token or server.operator_token,
                       json={"amount": amount}, headers=headers)


def _cashier_entries(server: Server, name: str) -> list[tuple[str, int]]:
    with server.engine().connect() as conn:
        return [(str(kind), int(amount)) for kind, amount in conn.execute(text(
            "SELECT e.kind, e.amount FROM ledger_entries e JOIN accounts a "
            "ON a.id = e.account_id WHERE a.username = :n AND e.book = 'wallet' "
            "AND e.kind IN ('deposit', 'withdrawal') ORDER BY e.id"), {"n": name})]


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, str(response.json()["error"]["code"])


def test_a_retried_deposit_and_withdrawal_answer_the_first_booking_and_move_money_once(
        server: Server) -> None:
    name, token = server.player()
    key = uuid.uuid4().hex
    first = _post(server, "deposits", name, 5_000, key)
    assert first.status_code == 201, first.text
    booked = first.json()
    assert (booked["kind"], booked["amount"], booked["balance"], booked["idempotency_key"],
            booked["replayed"]) == ("deposit", 5_000, 5_000, key, False)
    out_key = uuid.uuid4().hex
    paid = _post(server, "withdrawals", name, 1_200, out_key)
    assert paid.status_code == 201 and paid.json()["balance"] == 3_800
    for _ in range(3):
        again = _post(server, "deposits", name, 5_000, key)
        assert again.status_code == 200, again.text
        assert again.json() == {**booked, "replayed": True}  # the first answer: balance 5,000
        repaid = _post(server, "withdrawals", name, 1_200, out_key)
        assert repaid.status_code == 200
        assert repaid.json() == {**paid.json(), "replayed": True}
    assert server.balance(token) == 3_800
    assert _cashier_entries(server, name) == [("deposit", 5_000), ("withdrawal", -1_200)]
    entries = server.call("GET", "/wallet/entries", token).json()["entries"]
    assert [e["id"] for e in entries] == [paid.json()["transaction_id"],
                                         booked["transaction_id"]]


def test_the_same_key_with_another_request_is_409_and_moves_nothing(server: Server) -> None:
    name, token = server.player()
    other, _ = server.player()
    key = uuid.uuid4().hex
    assert _post(server, "deposits", name, 2_000, key).status_code == 201
    for kind, player, amount in (("deposits", name, 2_001), ("withdrawals", name, 2_000),
                                 ("deposits", other, 2_000)):
        refused = _post(server, kind, player, amount, key)
        assert _error(refused) == (409, "idempotency_key_reused"), refused.text
        assert "deposit of 2000 cents" in refused.json()["error"]["message"]
    assert server.balance(token) == 2_000
    assert _cashier_entries(server, name) == [("deposit", 2_000)]
    assert _cashier_entries(server, other) == []


def test_a_booking_is_looked_up_by_its_key(server: Server) -> None:
    name, _ = server.player()
    key, out_key = uuid.uuid4().hex, f"payout:{uuid.uuid4().hex}"
    booked = _post(server, "deposits", name, 700, key).json()
    paid = _post(server, "withdrawals", name, 300, out_key).json()
    op = server.operator_token
    found = server.call("GET", f"/players/{name}/deposits/{key}", op)
    assert found.status_code == 200 and found.json() == booked
    assert server.call("GET", f"/players/{name}/withdrawals/{out_key}", op).json() == paid
    never = uuid.uuid4().hex
    for path in (f"/players/{name}/deposits/{never}", f"/players/{name}/withdrawals/{key}",
                 f"/players/{name}/deposits/{out_key}"):
        assert _error(server.call("GET", path, op)) == (404, "transaction_not_found")
    other, other_token = server.player()
    assert _error(server.call("GET", f"/players/{other}/deposits/{key}", op)) == \
        (404, "transaction_not_found")
    assert server.call("GET", f"/players/{name}/deposits/{key}", other_token).status_code == 403
    for bad in ("bad%20key", "k" * 129):  # as the POST's header says it: 400, its own code
        assert _error(server.call("GET", f"/players/{name}/deposits/{bad}", op)) == \
            (400, "invalid_idempotency_key")
    # a key looked up and not found, then sent, books once
    assert _post(server, "deposits", name, 50, never).status_code == 201
    assert server.call("GET", f"/players/{name}/deposits/{never}", op).json()["amount"] == 50


def test_a_malformed_key_is_400_and_books_nothing(server: Server) -> None:
    name, token = server.player()
    for bad in ("", "x" * 129, "spaces are not allowed", "über"):
        refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                              json={"amount": 100},
                              headers={"Idempotency-Key": bad.encode()})
        assert _error(refused) == (400, "invalid_idempotency_key"), (bad, refused.text)
    assert server.balance(token) == 0


def test_a_cashier_request_without_a_key_is_refused_so_no_retry_books_twice(
        server: Server) -> None:
    """A retried deposit without a key once booked twice: now neither the request nor its
    retry books anything (400 ``idempotency_key_required``), on both kinds of request."""
    name, token = server.player(deposit=1_000)
    for kind in ("deposits", "withdrawals"):
        for _ in range(2):  # the request and its retry
            refused = _post(server, kind, name, 100, None)
            assert _error(refused) == (400, "idempotency_key_required"), refused.text
            assert "Idempotency-Key" in refused.json()["error"]["message"]
    assert server.balance(token) == 1_000
    assert _cashier_entries(server, name) == [("deposit", 1_000)]


def test_a_retry_is_answered_even_when_the_deposit_limit_is_now_used_up(
        server: Server) -> None:
    name, token = server.player()
    limit = server.call("GET", "/limits", token).json()["weekly_deposit_limit"]
    key = uuid.uuid4().hex
    assert _post(server, "deposits", name, limit, key).status_code == 201
    over = _post(server, "deposits", name, 1, uuid.uuid4().hex)
    assert _error(over) == (403, "deposit_limit_exceeded")
    again = _post(server, "deposits", name, limit, key)  # the first answer, not a refusal
    assert again.status_code == 200 and again.json()["replayed"]
    assert server.balance(token) == limit


def test_a_refused_request_records_nothing_and_its_retry_is_decided_afresh(
        server: Server) -> None:
    name, token = server.player(deposit=100)
    key = uuid.uuid4().hex
    assert _error(_post(server, "withdrawals", name, 150, key)) == (409, "insufficient_funds")
    assert _error(server.call("GET", f"/players/{name}/withdrawals/{key}",
                              server.operator_token)) == (404, "transaction_not_found")
    server.deposit(name, 100)
    assert _post(server, "withdrawals", name, 150, key).status_code == 201
    assert server.balance(token) == 50


def _at_once(server: Server, count: int, path: str, amount: int, key: str,
             op: str) -> list[httpx.Response]:
    """``count`` identical requests, released together from a barrier."""
    answers: list[httpx.Response] = []
    start = threading.Barrier(count)

    def send() -> None:
        with httpx.Client(base_url=server.base, timeout=60) as http:
            start.wait()
            answers.append(http.post(path, json={"amount": amount}, headers={
                "Idempotency-Key": key, "Authorization": f"Bearer {op}"}))

    threads = [threading.Thread(target=send) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_concurrent_retries_with_one_key_book_once(server: Server) -> None:
    name, token = server.player(deposit=10_000)
    op = server.operator_token
    for kind, amount in (("deposits", 3_000), ("withdrawals", 2_000)):
        answers = _at_once(server, 8, f"/players/{name}/{kind}", amount, uuid.uuid4().hex, op)
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200] * 7 + [201], [a.text for a in answers]
        bodies: list[dict[str, Any]] = [a.json() for a in answers]
        assert len({(b["transaction_id"], b["balance"]) for b in bodies}) == 1
    assert server.balance(token) == 11_000
    assert [k for k, _ in _cashier_entries(server, name)] == ["deposit", "deposit",
                                                             "withdrawal"]
    sums = books(server.engine())
    assert sums["wallets_stored"] == sums["wallet"]


def test_the_audit_checks_each_keyed_booking_against_its_entry(server: Server) -> None:
    name, _ = server.player()
    key = uuid.uuid4().hex
    assert _post(server, "deposits", name, 400, key).status_code == 201
    tamper = "UPDATE cashier_transactions SET amount = amount + :d WHERE idempotency_key = :k"
    with server.engine().begin() as conn:
        conn.execute(text(tamper), {"d": 1, "k": key})
    try:
        audit = run_cli_in_process("audit", "--database-url", server.database_url)
        assert audit.returncode == 1
        assert "does not match its entry" in audit.stdout and key in audit.stdout
    finally:
        with server.engine().begin() as conn:
            conn.execute(text(tamper), {"d": -1, "k": key})
    audit = run_cli_in_process("audit", "--database-url", server.database_url)
    assert audit.returncode == 0, audit.stdout
