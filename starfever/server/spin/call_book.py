"""Operator mode's group commit of ``wallet_calls`` (ADR 0024): one thread per server process
records, in ONE transaction, every debit the spins of this process want recorded before they
send it and every credit acknowledgement that arrived meanwhile.

A transaction per spin for each of these cost a spin more CPU than its round's settlement
(measured: recording the debit alone, an ORM session with four statements and a commit, was
the largest single cost of an operator-mode spin). Here a batch is two reads (the batch's
sessions with their accounts, and the debits already recorded), then at most two statements,
an insert of the new debits and an update of the acknowledged credits (``statements``: one statement
each), and the commit: two round trips on PostgreSQL (``transaction``, ADR 0027).

Guarantees (OPERATOR-WALLET.md):

- a debit is sent only after its ``pending`` row is committed (:meth:`CallBook.prepare`'s
  future resolves after the commit), so a crash never leaves a debit sent and unrecorded;
- a credit's acknowledgement is recorded in a batch after its reply arrived
  (:meth:`CallBook.acknowledge`; the spin's answer does not wait for it): with the next
  debit to record, or alone after :data:`ACK_LINGER_S`; one lost (the
  process dies first) leaves the credit pending: the retrier resends it and the operator
  answers with its first answer, so nothing moves twice;
- a batch that fails is recorded again item by item, so an error reaches only its cause; a
  debit row another process inserted meanwhile (two workers serving retries of one request)
  makes that item look again and find it.

The debit's own acknowledgement is not recorded here: the settler records it with the round,
in the round's transaction (``rule.Settlement.debits``).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, Table, select
from sqlalchemy.exc import IntegrityError

from starfever.seamless.client import WalletReply
from starfever.server.db import Database
from starfever.server.models import Account, GameControl, SessionToken, WalletCall
from starfever.server.services.auth import check_session_live
from starfever.server.services.control_rules import (
    OPEN,
    Maintenance,
    check_not_terminated,
    check_open,
)
from starfever.server.services.errors import (
    Conflict,
    NotFound,
    ServiceError,
    Unauthorized,
    utcnow,
)
from starfever.server.services.protection_rules import (
    check_play_time,
    check_reality_acknowledged,
    reality_check_of,
)
from starfever.server.spin.calls import (
    CallKind,
    CallState,
    Carried,
    acknowledgement,
    call_row,
    check_same_request,
)
from starfever.server.spin.group_commit import GroupCommit
from starfever.server.spin.rule import Job
from starfever.server.spin.transaction import Batch, among, begin

ACK_LINGER_S = 0.02
"""How long credit acknowledgements with no debit to record beside them wait for one (ADR
0028): they ride in the next debit's transaction instead of one of their own. No answer waits
for them; a credit is sent again only once its timeout has passed (seconds)."""

_CALLS: Table = WalletCall.__table__  # type: ignore[assignment]
_ACCOUNTS: Table = Account.__table__  # type: ignore[assignment]
_SESSIONS: Table = SessionToken.__table__  # type: ignore[assignment]
_CONTROLS: Table = GameControl.__table__  # type: ignore[assignment]
_MAINTENANCE = (select(_CONTROLS.c.maintenance_since, _CONTROLS.c.retry_after_seconds)
                .where(_CONTROLS.c.id == 1))
"""The maintenance switch, read with the batch's other reads (no round trip of its own)."""


def _logins_of(*, postgres: bool) -> Select[Any]:
    """The batch's sessions, each with its player's account (one read for both)."""
    return (select(_SESSIONS.c.id, _SESSIONS.c.account_id, _SESSIONS.c.revoked_at,
                   _SESSIONS.c.expires_at, _SESSIONS.c.ended_because,
                   _SESSIONS.c.operator_session, _SESSIONS.c.brand,
                   _ACCOUNTS.c.external_id,
                   _ACCOUNTS.c.play_started_at, _ACCOUNTS.c.reality_check_at,
                   _ACCOUNTS.c.net_result, _ACCOUNTS.c.reality_check_seconds,
                   _SESSIONS.c.play_ends_at, _SESSIONS.c.terminated_at)
            .join(_ACCOUNTS, _ACCOUNTS.c.id == _SESSIONS.c.account_id)
            .where(among(_SESSIONS.c.id, "ids", postgres=postgres)))


def _debits_of(*, postgres: bool) -> Select[Any]:
    """The debits already recorded under the batch's ids."""
    return (select(_CALLS.c.transaction_id, _CALLS.c.request_hash, _CALLS.c.status,
                   _CALLS.c.error, _CALLS.c.balance)
            .where(among(_CALLS.c.transaction_id, "ids", postgres=postgres)))


_READS = {postgres: (_logins_of(postgres=postgres), _debits_of(postgres=postgres))
          for postgres in (False, True)}
"""Per dialect (PostgreSQL or not): the two reads of a batch that records debits."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A debit recorded (or found) before it is sent."""

    player_id: str
    acknowledged_balance: int | None
    """The operator's balance after it, if it was acknowledged before (a retry)."""
    carried: Carried
    """The session's ``operator_session`` and ``brand`` from its launch, sent with each call."""


@dataclass(frozen=True, slots=True)
class DebitIds:
    """What :meth:`CallBook.prepare` needs of a spin's transaction ids."""

    debit: str
    round_ref: str


@dataclass(slots=True)
class _Prepare:
    job: Job
    ids: DebitIds


@dataclass(slots=True)
class _Ack:
    transaction_id: str
    reply: WalletReply


_Item = _Prepare | _Ack


def _linger(batch: list[_Item]) -> float:
    """A batch of acknowledgements only waits for a debit to ride with (:data:`ACK_LINGER_S`);
    one with a debit, which must be recorded before it is sent, is written at once."""
    return 0.0 if any(isinstance(item, _Prepare) for item in batch) else ACK_LINGER_S


class CallBook:
    """The group commit (``group_commit``) of operator mode's wallet calls in one server
    process."""

    def __init__(self, db: Database, refusal: Any) -> None:
        self.db = db
        self.refusal = refusal
        """``seamless_wallet.refusal``: a debit refused before, as the client sees it."""
        self.commits: GroupCommit[_Item, Prepared | bool] = GroupCommit(
            lambda batch: self._write(batch), name="starfever-wallet-books", linger=_linger,
            again_on=IntegrityError)

    def prepare(self, job: Job, ids: DebitIds) -> Future[Prepared]:
        """Check the spin's session and (for a new spin) the reality check and record its
        debit as ``pending``; the future resolves once that is committed, with the player's
        id at the operator, or with the spin's refusal. A retry of the request finds its
        debit: refused or rolled back (its refusal), acknowledged (its balance), or pending
        (to be sent again)."""
        return self.commits.submit(_Prepare(job, ids))  # type: ignore[return-value]

    def acknowledge(self, transaction_id: str, reply: WalletReply) -> Future[bool]:
        """Record a credit's acknowledgement; the future tells, once it is committed, whether
        the call's row changed."""
        return self.commits.submit(_Ack(transaction_id, reply))  # type: ignore[return-value]

    def close(self) -> None:
        """Record what is queued, then stop the thread."""
        self.commits.close()

    def _write(self, batch: Sequence[_Item]) -> list[Prepared | bool | ServiceError]:
        now = utcnow()
        prepares = [item for item in batch if isinstance(item, _Prepare)]
        acks = {item.transaction_id: acknowledgement(  # acknowledged twice: the same answer
            item.transaction_id, balance=item.reply.balance,
            operator_transaction_id=item.reply.operator_transaction_id, now=now)
            for item in batch if isinstance(item, _Ack)}
        with begin(self.db) as txn:
            prepared, rows = _prepare(txn, not self.db.is_sqlite, prepares, now) \
                if prepares else ({}, [])
            txn.insert(_CALLS, rows)
            txn.update(_CALLS, "transaction_id", list(acks.values()))
            txn.commit()
        results: list[Prepared | bool | ServiceError] = []
        for item in batch:
            if isinstance(item, _Prepare):
                answer = prepared[id(item)]
                results.append(self.refusal(*answer) if isinstance(answer, tuple) else answer)
            else:
                results.append(True)
        return results


def _prepare(txn: Batch, postgres: bool, items: Sequence[_Prepare], now: datetime
             ) -> tuple[dict[int, Prepared | ServiceError | tuple[str, str]],
                        list[dict[str, Any]]]:
    """Each prepare's answer (by ``id`` of the item; a ``(code, message)`` pair for a debit
    the operator refused before) and the debit rows to insert. Both reads go out together
    (one round trip on PostgreSQL)."""
    logins_of, debits_of = _READS[postgres]
    login_rows, debit_rows, switch = txn.fetch([
        (logins_of, {"ids": sorted({i.job.principal.session_id for i in items})}),
        (debits_of, {"ids": sorted({i.ids.debit for i in items})}),
        (_MAINTENANCE, {})])
    maintenance = Maintenance(switch[0].maintenance_since, switch[0].retry_after_seconds) \
        if switch else OPEN
    logins = {row.id: row for row in login_rows}
    known: dict[str, tuple[str | None, str, str | None, int | None]] = {
        row.transaction_id: (row.request_hash, row.status, row.error, row.balance)
        for row in debit_rows}
    answers: dict[int, Prepared | ServiceError | tuple[str, str]] = {}
    rows: list[dict[str, Any]] = []
    for item in items:
        try:
            answers[id(item)] = _one(item, logins, known, rows, now, maintenance)
        except ServiceError as refused:
            answers[id(item)] = refused
    return answers, rows


def _one(item: _Prepare, logins: dict[int, Any],
         known: dict[str, tuple[str | None, str, str | None, int | None]],
         rows: list[dict[str, Any]], now: datetime,
         maintenance: Maintenance = OPEN) -> Prepared | tuple[str, str]:
    job, principal = item.job, item.job.principal
    login = logins.get(principal.session_id)
    if login is None or login.account_id != principal.account_id:
        raise Unauthorized("the bearer token is not valid", code="invalid_token")
    account = login
    check_session_live(login.revoked_at, login.expires_at, now, login.ended_because)
    if account.external_id is None:
        raise NotFound("this player did not come from the operator's launch",
                       code="not_an_operator_player")
    carried = Carried(login.operator_session, login.brand)
    seen = known.get(item.ids.debit)
    if seen is None:  # a new debit: the operator's controls hold (ADR 0067); a retry goes on
        check_not_terminated(login.terminated_at)
        check_open(maintenance)
        check_reality_acknowledged(reality_check_of(
            job.settings, account.play_started_at, account.reality_check_at,
            account.net_result, now, account.reality_check_seconds))
        check_play_time(login.play_ends_at, now)
        rows.append(call_row(CallKind.DEBIT, item.ids.debit, account_id=principal.account_id,
                             session_id=principal.session_id, round_ref=item.ids.round_ref,
                             now=now, amount=job.stake, key=job.key,
                             fingerprint=job.fingerprint, free_round=job.free_round,
                             currency=job.currency))
        # a retry in the batch finds it
        known[item.ids.debit] = (job.fingerprint, CallState.PENDING, None, None)
        return Prepared(account.external_id, None, carried)
    request_hash, status, error, balance = seen
    check_same_request(request_hash, job.fingerprint)
    if status == CallState.REFUSED:
        return (error or "bad_request", "refused before")
    if status == CallState.ROLLED_BACK:
        raise Conflict("the debit of this spin was rolled back; send a new Idempotency-Key",
                       code="debit_rolled_back")
    if status == CallState.ACKNOWLEDGED and balance is not None:
        return Prepared(account.external_id, balance, carried)
    return Prepared(account.external_id, None, carried)  # pending: send again


__all__ = ["CallBook", "DebitIds", "Prepared"]
