"""The wallet protocol end to end: Star Fever's client against the reference operator wallet,
a real process with its own SQLite books."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from starfever.seamless import protocol as p
from starfever.seamless.client import WalletClient, WalletEndpoint, WalletRefused, WalletUnavailable
from tests.seamless.conftest import SECRET, OperatorWallet


def _id(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def _client(wallet: OperatorWallet, *, secret: str = SECRET, timeout: float = 5) -> WalletClient:
    return WalletClient(WalletEndpoint(wallet.url, secret, timeout))


def _debit(player: str, amount: int, tx: str | None = None) -> dict[str, Any]:
    return {"transaction_id": tx or _id("d"), "round_id": _id("r"), "player_id": player,
            "session_id": "s-1", "operator_session": "op-s-1", "currency": "EUR",
            "amount": amount, "game": p.GAME,
            "model": "default 2.0"}


def _credit(debit: dict[str, Any], amount: int, jackpot: int = 0) -> dict[str, Any]:
    return {"transaction_id": _id("c"), "round_id": debit["round_id"],
            "player_id": debit["player_id"], "session_id": "s-1", "operator_session": "op-s-1",
            "currency": "EUR", "amount": amount, "debit_transaction_id": debit["transaction_id"],
            "jackpot_amount": jackpot, "round_closed": True,
            "round_details_url": "https://game.example/round-details/1/00"}


def _rollback(debit: dict[str, Any]) -> dict[str, Any]:
    return {"transaction_id": _id("b"), "round_id": debit["round_id"],
            "player_id": debit["player_id"], "debit_transaction_id": debit["transaction_id"]}


def test_a_round_debits_then_credits_and_the_books_agree(operator_wallet: OperatorWallet) -> None:
    player = _id("p")
    operator_wallet.player(player, 1_000)
    client = _client(operator_wallet)
    debit = _debit(player, 200)
    reply = client.call(p.DEBIT, debit)
    assert reply.balance == 800 and reply.operator_transaction_id
    assert client.call(p.CREDIT, _credit(debit, 350, jackpot=50)).balance == 1_150
    assert client.call(p.BALANCE, {"player_id": player, "session_id": "s-1",
                                   "operator_session": "op-s-1",
                                   "currency": "EUR"}).balance == 1_150
    assert operator_wallet.balance(player) == 1_150
    rows = operator_wallet.transactions(player)
    assert [(r["method"], r["amount"], r["applied"]) for r in rows] == [
        ("debit", 200, True), ("credit", 350, True)]
    assert rows[0]["closed_by"] == rows[1]["transaction_id"]


def test_a_replayed_transaction_id_gets_its_first_answer_and_moves_nothing(
        operator_wallet: OperatorWallet) -> None:
    player = _id("p")
    operator_wallet.player(player, 500)
    client = _client(operator_wallet)
    debit = _debit(player, 100)
    first = client.call(p.DEBIT, debit)
    assert client.call(p.DEBIT, debit) == first
    short = _debit(player, 10_000)
    with pytest.raises(WalletRefused) as refused:
        client.call(p.DEBIT, short)
    assert refused.value.code == p.INSUFFICIENT_FUNDS
    operator_wallet.player(player, 50_000)  # even with funds now, the retry is refused again
    with pytest.raises(WalletRefused):
        client.call(p.DEBIT, short)
    credit = _credit(debit, 40)
    assert client.call(p.CREDIT, credit) == client.call(p.CREDIT, credit)
    assert operator_wallet.balance(player) == 50_040  # the admin reset, then one credit of 40
    assert len(operator_wallet.transactions(player)) == 3


def test_refusals_are_final_codes(operator_wallet: OperatorWallet) -> None:
    player = _id("p")
    operator_wallet.player(player, 100, blocked=True)
    client = _client(operator_wallet)
    with pytest.raises(WalletRefused) as blocked:
        client.call(p.DEBIT, _debit(player, 20))
    assert blocked.value.code == p.PLAYER_BLOCKED and 400 <= blocked.value.status < 500
    with pytest.raises(WalletRefused) as unknown:
        client.call(p.CREDIT, _credit(_debit(player, 20), 5))
    assert unknown.value.code == p.UNKNOWN_TRANSACTION
    assert operator_wallet.balance(player) == 100


def test_a_rollback_of_an_unseen_debit_is_recorded_and_the_late_debit_refused(
        operator_wallet: OperatorWallet) -> None:
    player = _id("p")
    operator_wallet.player(player, 300)
    client = _client(operator_wallet)
    debit = _debit(player, 100)
    assert client.call(p.ROLLBACK, _rollback(debit)).balance == 300
    with pytest.raises(WalletRefused, match="rolled back"):
        client.call(p.DEBIT, debit)
    acknowledged = _debit(player, 100)
    client.call(p.DEBIT, acknowledged)
    assert client.call(p.ROLLBACK, _rollback(acknowledged)).balance == 300
    with pytest.raises(WalletRefused):  # a rolled-back debit cannot be credited
        client.call(p.CREDIT, _credit(acknowledged, 10))
    assert operator_wallet.balance(player) == 300


def test_a_forged_signature_is_refused_both_ways(operator_wallet: OperatorWallet) -> None:
    player = _id("p")
    operator_wallet.player(player, 100)
    forger = _client(operator_wallet, secret="a-different-secret-of-enough-length-xx")
    with pytest.raises(WalletUnavailable, match="not signed"):
        # the wallet answers 401 bad_signature, signed with the real secret: to the forger
        # that reply is unsigned, so nothing it is told can be trusted either
        forger.call(p.DEBIT, _debit(player, 50))
    body = p.encode(_debit(player, 50), datetime.now(UTC))
    raw = httpx.post(f"{operator_wallet.url}/debit", content=body,
                     headers={p.STARFEVER_SIGNATURE: "00" * 32})
    assert raw.status_code == 401 and raw.json()["error"] == p.BAD_SIGNATURE
    assert operator_wallet.balance(player) == 100


def test_a_reply_signed_with_another_secret_counts_for_nothing(
        operator_wallet: OperatorWallet) -> None:
    """The other way: a reply that is not signed with the shared secret (a man in the middle's)
    is no answer to Star Fever's client, whatever it says; the call's outcome is unknown (here
    the debit was applied), and the retry of its transaction_id gets the genuine first
    answer."""
    player = _id("p")
    operator_wallet.player(player, 1_000)
    client = _client(operator_wallet)
    operator_wallet.fault(p.DEBIT, "forge")
    debit = _debit(player, 100)
    with pytest.raises(WalletUnavailable, match="not signed"):
        client.call(p.DEBIT, debit)
    assert operator_wallet.balance(player) == 900
    assert client.call(p.DEBIT, debit).balance == 900
    assert len(operator_wallet.transactions(player)) == 1


def test_stale_and_malformed_requests_are_bad_requests(operator_wallet: OperatorWallet) -> None:
    player = _id("p")
    operator_wallet.player(player, 100)
    endpoint = WalletEndpoint(operator_wallet.url, SECRET)
    old = datetime.now(UTC) - timedelta(minutes=6)
    url, body, headers, _ = endpoint.request(p.DEBIT, _debit(player, 5), now=old)
    response = httpx.post(url, content=body, headers=headers)
    assert response.status_code == 400 and "5 minutes" in response.json()["message"]
    client = _client(operator_wallet)
    for broken in ({**_debit(player, 5), "amount": -1}, {**_debit(player, 5), "currency": "USD"},
                   {k: v for k, v in _debit(player, 5).items() if k != "round_id"},
                   {k: v for k, v in _debit(player, 5).items() if k != "operator_session"},
                   {**_debit(player, 5), "transaction_id": "bad id\n"}):
        with pytest.raises(WalletRefused) as refused:
            client.call(p.DEBIT, broken)
        assert refused.value.code == p.BAD_REQUEST
    assert operator_wallet.balance(player) == 100


@pytest.mark.parametrize("fault", ["delay", "drop"])
def test_a_reply_lost_after_the_debit_was_applied(operator_wallet: OperatorWallet,
                                                  fault: str) -> None:
    """Delayed past the timeout or dropped: the call fails with an unknown outcome, the money
    moved, and a retry of the same transaction_id returns the first answer."""
    player = _id("p")
    operator_wallet.player(player, 1_000)
    operator_wallet.fault(p.DEBIT, fault, seconds=3)
    debit = _debit(player, 100)
    with pytest.raises(WalletUnavailable, match="Timeout"):
        _client(operator_wallet, timeout=0.5).call(p.DEBIT, debit)
    assert operator_wallet.balance(player) == 900
    assert _client(operator_wallet).call(p.DEBIT, debit).balance == 900


def test_a_500_applies_nothing_and_a_duplicate_delivery_changes_nothing(
        operator_wallet: OperatorWallet) -> None:
    player = _id("p")
    operator_wallet.player(player, 1_000)
    client = _client(operator_wallet)
    operator_wallet.fault(p.DEBIT, "error")
    debit = _debit(player, 100)
    with pytest.raises(WalletUnavailable, match="not signed"):
        client.call(p.DEBIT, debit)
    assert operator_wallet.balance(player) == 1_000
    operator_wallet.fault(p.DEBIT, "twice")
    assert client.call(p.DEBIT, debit).balance == 900
    assert operator_wallet.balance(player) == 900
    assert len(operator_wallet.transactions(player)) == 1


def test_admin_input_is_checked(operator_wallet: OperatorWallet) -> None:
    bad = operator_wallet.admin.post("/_admin/faults", json={"method": "debit", "fault": "melt"})
    assert bad.status_code == 400 and bad.json()["error"] == p.BAD_REQUEST
    bad = operator_wallet.admin.post("/_admin/players", json={"player_id": "x", "balance": -5})
    assert bad.status_code == 400


def _recorded(wallet: OperatorWallet, method: str, fields: dict[str, Any]) -> httpx.Response:
    """One genuine signed exchange with the wallet, as a man in the middle records it."""
    url, body, headers, _ = WalletEndpoint(wallet.url, SECRET).request(method, fields)
    return httpx.post(url, content=body, headers=headers)


def test_every_reply_echoes_its_request_id_and_transaction_id(
        operator_wallet: OperatorWallet) -> None:
    """Version 2: a reply, a refusal too, repeats the request's ``request_id`` and
    ``transaction_id``, so that it answers that request and no other."""
    player = _id("p")
    operator_wallet.player(player, 100)
    for method, fields in ((p.DEBIT, _debit(player, 30)), (p.DEBIT, _debit(player, 10_000)),
                           (p.BALANCE, {"player_id": player, "session_id": "s-1",
                                        "operator_session": "op-s-1", "currency": "EUR"})):
        fields = {**fields, "request_id": _id("q")}
        reply = _recorded(operator_wallet, method, fields)
        assert reply.status_code in (200, 402)
        assert reply.json()["request_id"] == fields["request_id"]
        assert reply.json().get("transaction_id") == fields.get("transaction_id")
        assert p.verify(SECRET, reply.content, reply.headers[p.OPERATOR_SIGNATURE])


@pytest.mark.parametrize("method", [p.DEBIT, p.CREDIT])
def test_a_signed_reply_played_back_to_another_request_counts_for_nothing(
        operator_wallet: OperatorWallet, method: str) -> None:
    """A genuine signed reply (a ``200``, and a final ``4xx``) recorded from the wallet and
    played back as the answer to a later request is a failed call, never an answer: its
    ``request_id`` (and ``transaction_id``) is another request's. Nothing else reaches the
    client here (``httpx.MockTransport`` stands where the man in the middle sits)."""
    player = _id("p")
    operator_wallet.player(player, 1_000)
    debit = _debit(player, 100)
    genuine = [_recorded(operator_wallet, p.DEBIT, debit)]
    if method == p.CREDIT:
        genuine.append(_recorded(operator_wallet, p.CREDIT, _credit(debit, 40)))
    genuine.append(_recorded(operator_wallet, method, _credit(_debit(player, 1), 5)
                             if method == p.CREDIT else _debit(player, 10_000)))
    assert [r.status_code for r in genuine][-1] in (402, 404)
    for recorded in genuine[-2:]:
        replay = httpx.MockTransport(lambda _, r=recorded: httpx.Response(
            r.status_code, headers=dict(r.headers), content=r.content))
        client = WalletClient(WalletEndpoint(operator_wallet.url, SECRET), transport=replay)
        later = _debit(player, 100) if method == p.DEBIT else _credit(_debit(player, 1), 40)
        with pytest.raises(WalletUnavailable, match="another request"):
            client.call(method, later)
        # the very same transaction sent again (a retry) is a new request with its own id
        sent_again = debit if method == p.DEBIT else _credit(debit, 40)
        with pytest.raises(WalletUnavailable, match="another request"):
            client.call(method, sent_again)
