"""The seamless wallet, the wallet port's second adapter (OPERATOR-WALLET.md, rules 1-6): a
spin in operator mode.

A spin is debited on the operator's side before it is queued for the settler, and its round's
credit is sent after the round is committed; in between, every call is a ``wallet_calls`` row
written *before* it is sent:

1. the spin's transaction ids are derived from (account, ``Idempotency-Key``)
   (:class:`TransactionIds`), so a retried request reuses them and the operator answers it
   with its first answer;
2. the debit is recorded ``pending`` (in the group commit of ``call_book.CallBook``,
   committed before it is sent) and sent; a ``4xx`` refusal is final (``refused``) and
   reaches the client as its own 4xx code, nothing played; a timeout or any other failure
   records a rollback (the debit becomes ``rolled_back``) and the client gets ``503
   wallet_unavailable`` at once: the rollback, committed first, is sent in the background
   and then by the resender until acknowledged, so a hanging wallet costs a player one
   timeout, never two (ADR 0062);
3. only once the operator acknowledged the debit is a live round drawn (rule 2: a refused
   or lost bet never had an outcome) and handed to the settler (``rule.Job.debit``,
   with the answer), which records the acknowledgement, books the round against it in the
   ``operator`` book and records the round's credit as ``pending``, all in the round's own
   transaction (``rule.Settlement.debits`` and ``.calls``); a debit the retrier rolled
   back meanwhile is not played;
4. the credit is sent once the batch is committed, and the spin is answered with the
   operator's balance as soon as the credit's reply arrives; the acknowledgement is recorded
   in the next group commit of ``CallBook`` (the answer does not wait for it: until then, and
   for ever if the process dies first, the credit is ``pending`` and is only sent again, which
   the operator answers with its first answer). One not acknowledged stays pending (the
   round is ``pending_credit``) and ``resender.Resender``, a thread of the server process
   that runs in one process of the installation at a time (a lease, ADR 0062), resends
   pending credits and rollbacks with a capped backoff, also after a restart. A debit
   acknowledged (or left pending by a crash) whose round was never stored is rolled back once
   it is stale; a played debit names its round (``round_id``), so that search reads only the
   debits still without one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, Table, and_, bindparam, exists, or_, select, text, update
from sqlalchemy.exc import IntegrityError

from starfever.engine.rng import RandomSource, SystemRandomSource
from starfever.seamless import protocol as p
from starfever.seamless.client import (
    AsyncWalletClient,
    WalletClient,
    WalletRefused,
    WalletReply,
    WalletUnavailable,
)
from starfever.server import logs
from starfever.server.db import Database
from starfever.server.models import UNPLAYED_DEBIT, Account, Round, SessionToken, WalletCall
from starfever.server.seamless_config import OperatorConfig
from starfever.server.services import round_details, unpaid, unpaid_actions
from starfever.server.services.auth import Principal
from starfever.server.services.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ServiceError,
    Unauthorized,
    utcnow,
)
from starfever.server.spin import draw
from starfever.server.spin import settler as settle
from starfever.server.spin.call_book import CallBook, DebitIds
from starfever.server.spin.calls import CallKind, CallState, Carried, call_row
from starfever.server.spin.rule import Debit, Job, SpinOutcome
from starfever.server.spin.wallets import LedgerWallet, refuse_not_kept

if TYPE_CHECKING:
    from starfever.server.spin.resender import Resender

log = logging.getLogger("starfever.server")

MAX_BACKOFF_S = 2.0
"""The longest wait between two sends of one call (unless ``STARFEVER_WALLET_RETRY_SECONDS``
is longer): a round in doubt closes within seconds of the wallet's recovery. One resender per
installation (``resender``), which sends one call at a time while the wallet gives no answer,
keeps an outage's load on the wallet at about one call per retry interval (ADR 0062)."""
STALE_BATCH = 100
"""Stale debits rolled back by one search (a full one: the next search at the next tick)."""


class WalletUnavailableError(ServiceError):
    """The operator's wallet gave no valid answer; nothing was played."""

    status = 503
    code = "wallet_unavailable"


class WalletMisconfigured(ServiceError):
    """The operator's wallet refused a call for a reason of the integration (its signature,
    its shape): nothing was played."""

    status = 502
    code = "wallet_refused"


def stale_debits(cutoff: datetime) -> Select[str]:
    """The debits without a round, still pending or acknowledged, last touched before
    ``cutoff``: spins left by a request or a process that ended before the round. The
    condition is written out as the partial index ``ix_wallet_calls_unplayed_debits`` has it
    (migration 0015), so the search reads that index, not every refused or rolled-back debit."""
    played = exists().where(and_(Round.account_id == WalletCall.account_id,
                                 Round.idempotency_key == WalletCall.idempotency_key))
    return (select(WalletCall.transaction_id)
            .where(text(UNPLAYED_DEBIT), WalletCall.updated_at < cutoff, ~played)
            .limit(STALE_BATCH))


@dataclass(frozen=True, slots=True)
class RefusedCredit:
    """The operator's wallet refused a round's credit with a final ``4xx`` (``code``): the
    round's win is unpaid (OPERATOR-WALLET.md rule 5, ``services.unpaid``)."""

    code: str


def refusal(code: str, message: str) -> ServiceError:
    """A debit refusal of the operator as the client sees it."""
    text = f"the operator's wallet refused the bet: {message or code}"
    if code == p.INSUFFICIENT_FUNDS:
        return Conflict(text, code=code)
    if code == p.PLAYER_BLOCKED:
        return Forbidden(text, code=code)
    if code == p.SESSION_EXPIRED:
        return Unauthorized(text, code=code)
    return WalletMisconfigured(f"{text} ({code})")


@dataclass(frozen=True, slots=True)
class TransactionIds:
    """The ids of one spin's calls, the same for every retry of its request."""

    debit: str
    credit: str
    rollback: str
    round_ref: str

    @classmethod
    def of(cls, account_id: int, key: str) -> TransactionIds:
        """From the account and the request's ``Idempotency-Key``: unique per installation
        (the account is), deterministic (a retry reuses them)."""
        digest = hashlib.sha256(f"{account_id}\x00{key}".encode()).hexdigest()[:40]
        return cls(debit=f"sfd-{digest}", credit=f"sfc-{digest}", rollback=f"sfb-{digest}",
                   round_ref=f"sfr-{digest}")


def rollback_id(debit_id: str) -> str:
    """The rollback's id of a debit's id (:class:`TransactionIds`)."""
    return "sfb-" + debit_id.removeprefix("sfd-")


def session_ref(session_id: int | None) -> str:
    """The ``session_id`` the operator is sent for one of Star Fever's sessions."""
    return f"sfs-{session_id or 0}"


def call_fields(kind: str, transaction_id: str, row: WalletCall | None = None,
                player_id: str | None = None) -> dict[str, Any]:
    """A wallet call's ids as fields of its log lines (``extra``): the method, Star Fever's
    transaction id, the round (the ``round_id`` the operator was sent, and ours once stored),
    the operator's player id and transaction id where known."""
    fields: dict[str, Any] = {"call": str(kind), "transaction_id": transaction_id}
    if row is not None:
        fields.update(round_ref=row.round_ref, round_id=row.round_id,
                      operator_transaction_id=row.operator_transaction_id)
    if player_id is not None:
        fields["player_id"] = player_id
    return {k: v for k, v in fields.items() if v is not None}


def _log_unrecorded(transaction_id: str, recorded: Future[bool]) -> None:
    """A credit acknowledgement the books could not record stays pending: the retrier sends
    the credit again and the operator answers with its first answer, nothing moves twice."""
    if not recorded.cancelled() and recorded.exception() is not None:
        log.error("the acknowledgement of credit %s was not recorded: %s", transaction_id,
                  recorded.exception(), extra=call_fields(CallKind.CREDIT, transaction_id))


class SeamlessWallet:
    """Operator mode's wallet, the port's second adapter (``wallets.WalletPort``): the calls
    of a spin, the balance, and the retrier's work. The operator keeps the balances, the
    players (who arrive by its signed launch), their limits and exclusions."""

    keeps_balances = False
    launches_players = True
    calls_operator = True

    def __init__(self, db: Database, config: OperatorConfig, *, details_key: bytes,
                 probe_currency: str = p.CURRENCY) -> None:
        self.db = db
        self.config = config
        self.probe_currency = probe_currency
        """The currency of the readiness probe's ``balance`` call: one the installation serves
        (its first), so an operator that pays only in it is not asked in another (ADR 0078)."""
        self.details_key = details_key
        """The key of round-details addresses (``services.round_details``): every credit
        carries its round's ``round_details_url``."""
        self.client = WalletClient(config.endpoint)
        self._async: AsyncWalletClient | None = None
        self.books = CallBook(db, refusal)
        self.live_source: Callable[[], RandomSource] = SystemRandomSource
        """Where a live round's draws come from (``draw.draw_live``)."""
        self._retrier: Resender | None = None
        self._background: set[asyncio.Task[Any]] = set()
        """Sends no answer waits for (a failed debit's rollback), kept until they end."""

    @property
    def launch_secret(self) -> str:
        """The secret the operator signs its launches with."""
        return self.config.secret

    @property
    def public_url(self) -> str | None:
        """The public origin launch addresses are built on (``--public-url``)."""
        return self.config.public_url

    def ledger(self, what: str) -> LedgerWallet:
        """Nothing of a player's money is kept here: refused."""
        raise refuse_not_kept(what)

    def ready(self) -> str:
        """The operator's wallet answers a signed ``balance`` call in time."""
        from starfever.server.services import readiness

        readiness.wallet_answers(self)
        return "answers"

    def start(self) -> None:
        """Start the retrier (resends pending credits and rollbacks, rolls back stale debits)."""
        from starfever.server.spin.resender import Resender

        self._retrier = Resender(self).start()

    @property
    def aclient(self) -> AsyncWalletClient:
        """The event loop's client (made on first use, inside the loop)."""
        if self._async is None:
            self._async = AsyncWalletClient(self.config.endpoint)
        return self._async

    def _in_background(self, send: Coroutine[Any, Any, Any]) -> None:
        """Run a send no answer waits for: its call is recorded (committed) before, so one cut
        short by a crash or the shutdown is resent by the resender."""
        task = asyncio.ensure_future(send)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Let the background sends end (one timeout at most), stop the retrier, close both
        clients and the books (the app's shutdown)."""
        if self._background:
            _, late = await asyncio.wait(set(self._background), timeout=self.config.timeout)
            for task in late:  # left pending in the books: the resender sends it again
                task.cancel()
        if self._retrier is not None:
            await asyncio.to_thread(self._retrier.stop)
            self._retrier = None
        if self._async is not None:
            await self._async.close()
        self.client.close()
        await asyncio.to_thread(self.books.close)

    @property
    def lease_seconds(self) -> float:
        """The resender's lease's time to live: renewed before each call when a third of it
        has passed, so a call (at most a timeout) always ends well inside it."""
        return max(5.0, 3 * self.config.timeout)

    @property
    def stale(self) -> timedelta:
        """How old an unplayed debit must be before the retrier rolls it back."""
        return timedelta(seconds=max(30.0, 3 * self.config.timeout))

    # --- the spin ----------------------------------------------------------------------
    async def spin(self, job: Job) -> SpinOutcome:
        """Debit, settle, credit one drawn spin (see the module docstring)."""
        principal = job.principal
        ids = TransactionIds.of(principal.account_id, job.key)
        prepared = await asyncio.wrap_future(
            self.books.prepare(job, DebitIds(ids.debit, ids.round_ref)))
        logs.bind(player_id=prepared.player_id, round_ref=ids.round_ref,
                  debit_transaction_id=ids.debit, credit_transaction_id=ids.credit)
        balance, operator_id = prepared.acknowledged_balance, None
        if balance is None:
            answer = await self._debit(job, ids, prepared.player_id, prepared.carried)
            balance, operator_id = answer.balance, answer.operator_transaction_id
            logs.bind(operator_debit_transaction_id=operator_id)
        job.debit = Debit(transaction_id=ids.debit, credit_transaction_id=ids.credit,
                          round_ref=ids.round_ref, balance=balance,
                          operator_transaction_id=operator_id)
        draw.draw_live(job, self.live_source)  # rule 2: drawn only once the bet is taken
        try:
            outcome = await self._settle(job)
        except ServiceError:
            # refused at settlement (the session ended, a reality check fell due): no round
            if await asyncio.to_thread(self.round_of, principal.account_id, job.key) is None:
                await asyncio.to_thread(self.record_rollback, ids.debit)
                self._in_background(self._send_due(ids.rollback))
            raise
        if outcome.credit is None:  # a retry of a settled spin: its credit was answered before
            return await asyncio.to_thread(self._as_paid, outcome)
        reply = await self._send_credit(outcome.credit, prepared.player_id, prepared.carried)
        if reply is None:  # the operator's balance now, as GET /wallet says it (ADR 0061)
            return replace(outcome, balance=balance, payment="pending")
        if isinstance(reply, RefusedCredit):  # rule 5: the win is unpaid, the balance the debit's
            return replace(outcome, balance=balance, payment="unpaid")
        return SpinOutcome(round=outcome.round, balance=reply.balance, replayed=False,
                           reality_check=outcome.reality_check, credit=outcome.credit)

    async def _settle(self, job: Job) -> SpinOutcome:
        """Hand the debited job to the settler; a batch that lost a race on the key to another
        process's (possible with several workers) is settled once more and finds its round."""
        try:
            return await asyncio.wrap_future(settle.settler(self.db).enqueue(job))
        except IntegrityError:
            return await asyncio.wrap_future(settle.settler(self.db).enqueue(job))

    async def _debit(self, job: Job, ids: TransactionIds, player_id: str,
                     carried: Carried) -> WalletReply:
        """Send the debit; the operator's answer (recorded by the settler with the round), or
        the client's refusal."""
        fields = {"transaction_id": ids.debit, "round_id": ids.round_ref, "player_id": player_id,
                  "session_id": session_ref(job.principal.session_id),
                  **carried.fields(), "currency": job.currency,
                  "amount": job.stake, "game": p.GAME,
                  "model": f"{job.model.name} {job.model.version}"}
        if job.free_round is not None:  # a free round: amount 0 and its block (v2)
            fields["free_round"] = json.loads(job.free_round)
        try:
            reply = await self.aclient.call(CallKind.DEBIT, fields)
        except WalletRefused as refused:
            await asyncio.to_thread(self.mark, ids.debit, CallState.REFUSED,
                                    error=refused.code[:32])
            raise refusal(refused.code, refused.message) from None
        except WalletUnavailable as error:
            log.warning("debit %s failed (%s): rolling it back", ids.debit, error,
                        extra=call_fields(CallKind.DEBIT, ids.debit, player_id=player_id))
            played = await asyncio.to_thread(self.record_rollback, ids.debit)
            if played is not None:  # a retry of this spin got the operator's answer and
                return played       # played it meanwhile: this request answers that round
            self._in_background(self._send_due(ids.rollback))
            raise WalletUnavailableError("the operator's wallet did not answer the bet; it "
                                         "was rolled back and nothing was played") from None
        return reply

    def _as_paid(self, replayed: SpinOutcome) -> SpinOutcome:
        """A retried spin's answer as its round stands: ``paid``, or ``unpaid``, ``pending``
        or ``settled_manually`` with the balance without the win (the wallet has not paid it:
        rule 5; a pending one as ``GET /wallet`` says it, ADR 0061)."""
        rid = replayed.round.id
        payment = unpaid.payments_of(self.db, [rid])[rid]
        if payment != unpaid.PAID:
            return replace(replayed, payment=payment,
                           balance=replayed.round.balance_after - replayed.round.paid)
        return replace(replayed, payment=payment)

    # --- the books of calls ---------------------------------------------------------------
    def mark(self, transaction_id: str, status: str, *, reply: WalletReply | None = None,
             error: str | None = None, only_pending: bool = False) -> bool:
        """Record a call's answer; whether its row changed."""
        values: dict[str, Any] = {"status": status, "error": error, "updated_at": utcnow()}
        if reply is not None:
            values.update(balance=reply.balance,
                          operator_transaction_id=reply.operator_transaction_id)
        query = update(WalletCall).where(WalletCall.transaction_id == transaction_id)
        if only_pending:
            query = query.where(WalletCall.status == CallState.PENDING)
        with self.db.write() as session:  # a refused credit (or one paid after it) is an event
            unpaid_actions.record_answer(session, transaction_id, status, error=error,
                                         operator_transaction_id=values.get(
                                             "operator_transaction_id"))
            return bool(session.execute(query.values(**values)).rowcount)  # type: ignore[attr-defined]

    def record_rollback(self, debit_id: str) -> WalletReply | None:
        """The debit becomes ``rolled_back`` and its rollback is recorded as pending, unless
        it was played meanwhile (a retry of the same spin got the operator's answer): then
        nothing changes, and the operator's recorded answer to the debit is returned."""
        now = utcnow()
        with self.db.write() as session:
            debit = session.scalar(select(WalletCall).where(
                WalletCall.transaction_id == debit_id).with_for_update())
            if debit is not None and debit.round_id is not None and debit.balance is not None:
                # a played debit names its round, under the same lock as here
                return WalletReply(balance=debit.balance,
                                   operator_transaction_id=debit.operator_transaction_id)
            if debit is None or debit.status == CallState.ROLLED_BACK \
                    or debit.round_id is not None:
                return None
            debit.status, debit.updated_at = CallState.ROLLED_BACK, now
            session.add(WalletCall(**call_row(
                CallKind.ROLLBACK, rollback_id(debit_id), account_id=debit.account_id,
                session_id=debit.session_id, round_ref=debit.round_ref, now=now,
                amount=debit.amount, debit_id=debit_id, currency=debit.currency)))
        return None

    def round_of(self, account_id: int, key: str) -> int | None:
        """The id of the round stored under the spin's key, if any."""
        with self.db.read() as session:
            found: int | None = session.scalar(select(Round.id).where(
                Round.account_id == account_id, Round.idempotency_key == key))
            return found

    def fields(self, row: WalletCall | Mapping[str, Any], player_id: str,
               carried: Carried) -> dict[str, Any]:
        """The request of a recorded credit or rollback (its row, or the row's values as
        the settlement returned them); ``carried``: its session's ``operator_session`` and
        ``brand``, which every call carries (ADR 0081). A credit's ``round_details_url`` is
        computed from its round id alone (no query)."""
        get = row.__getitem__ if isinstance(row, Mapping) else partial(getattr, row)
        if get("kind") == CallKind.ROLLBACK:
            return {"transaction_id": get("transaction_id"), "round_id": get("round_ref"),
                    "player_id": player_id,
                    "debit_transaction_id": get("debit_transaction_id"), **carried.fields()}
        currency = (row.get("currency") if isinstance(row, Mapping)
                    else getattr(row, "currency", None)) or p.CURRENCY  # its session's
        fields = {"transaction_id": get("transaction_id"), "round_id": get("round_ref"),
                  "player_id": player_id, "session_id": session_ref(get("session_id")),
                  **carried.fields(), "currency": currency, "amount": get("amount"),
                  "debit_transaction_id": get("debit_transaction_id"),
                  "jackpot_amount": get("jackpot_amount"), "round_closed": True,
                  "round_details_url": round_details.url_of(self.config.public_url,
                                                            self.details_key, get("round_id"))}
        block = get("free_round")
        if block is not None:  # a free round's credit carries its block (v2)
            fields["free_round"] = json.loads(block)
        return fields

    def _stored_request(self, transaction_id: str) -> tuple[WalletCall, dict[str, Any]] | None:
        """A pending call's row and its request, built from what is stored: the row, its
        player's id at the operator, its session's ``operator_session`` and ``brand``."""
        with self.db.read_engine.connect() as conn:
            found = conn.execute(_ONE, {"transaction_id": transaction_id}).first()
        if found is None or found.status != CallState.PENDING:
            return None
        return self._request_of(found)

    def _request_of(self, found: Any) -> tuple[WalletCall, dict[str, Any]]:
        """A call's row and its request, from a row of :data:`_DUE` or :data:`_ONE`."""
        values = dict(found._mapping)
        player_id = str(values.pop("player_id"))
        carried = Carried(values.pop("operator_session"), values.pop("brand"))
        row = WalletCall(**values)
        return row, self.fields(row, player_id, carried)

    async def send_recorded(self, client: AsyncWalletClient,
                            request: tuple[WalletCall, dict[str, Any]],
                            ) -> WalletReply | bool | None:
        """Send a recorded credit or rollback (its row and request) once: its reply (its
        acknowledgement not yet recorded), ``True`` when it is already recorded (a credit
        refused before, its ``unpaid_win_paid`` event with it), ``False`` refused (final,
        recorded), ``None`` no valid answer (postponed by its backoff; the resender sends it
        again)."""
        row, fields = request
        try:
            reply = await client.call(row.kind, fields)
        except WalletRefused as refused:
            log.error("%s %s refused: %s", row.kind, row.transaction_id, refused,
                      extra=call_fields(row.kind, row.transaction_id, row, fields["player_id"]))
            await asyncio.to_thread(self.mark, row.transaction_id, CallState.REFUSED,
                                    error=refused.code[:32], only_pending=True)
            return False
        except WalletUnavailable as error:
            log.warning("%s %s not acknowledged (%s): the resender sends it again", row.kind,
                        row.transaction_id, error, extra=call_fields(
                            row.kind, row.transaction_id, row, fields["player_id"]))
            await asyncio.to_thread(self.postpone, row)
            return None
        if row.error is not None:  # an unpaid win an operator resent: paid, an event says so
            await asyncio.to_thread(self.mark, row.transaction_id, CallState.ACKNOWLEDGED,
                                    reply=reply, only_pending=True)
            return True
        return reply

    async def _send_due(self, transaction_id: str) -> WalletReply | None:
        """Send a recorded rollback once now and record its answer; left pending for the
        resender if it gets none."""
        stored = await asyncio.to_thread(self._stored_request, transaction_id)
        if stored is None:
            return None
        answer = await self.send_recorded(self.aclient, stored)
        if not isinstance(answer, WalletReply):
            return None
        await asyncio.to_thread(self.mark, transaction_id, CallState.ACKNOWLEDGED, reply=answer)
        return answer

    async def _send_credit(self, credit: dict[str, Any], player_id: str,
                           carried: Carried) -> WalletReply | RefusedCredit | None:
        """Send a round's credit, just committed as pending (``credit``: its ``wallet_calls``
        values), once now; its acknowledgement is queued for the books' next group commit,
        which the spin's answer does not wait for (a credit still pending is only sent again).
        Left pending for the retrier if it gets no answer (``None``); :class:`RefusedCredit`
        when the operator refused it (the round's win is unpaid, rule 5)."""
        transaction_id = credit["transaction_id"]
        try:
            reply = await self.aclient.call(CallKind.CREDIT,
                                            self.fields(credit, player_id, carried))
        except WalletRefused as refused:
            log.error("credit %s refused: %s", transaction_id, refused,
                      extra=call_fields(CallKind.CREDIT, transaction_id, WalletCall(**credit),
                                        player_id))
            await asyncio.to_thread(self.mark, transaction_id, CallState.REFUSED,
                                    error=refused.code[:32])
            return RefusedCredit(refused.code)
        except WalletUnavailable as error:
            log.warning("credit %s not acknowledged (%s): the retrier resends it",
                        transaction_id, error, extra=call_fields(
                            CallKind.CREDIT, transaction_id, WalletCall(**credit), player_id))
            await asyncio.to_thread(self.postpone, WalletCall(**credit))
            return None
        self.books.acknowledge(transaction_id, reply).add_done_callback(
            partial(_log_unrecorded, transaction_id))
        return reply

    @property
    def resend_hold(self) -> timedelta:
        """How long the retrier leaves a credit an operator handed back to the request that
        sends it (:meth:`resend_credit`): longer than that send can take."""
        return timedelta(seconds=2 * self.config.timeout + 1)

    def resend_credit(self, transaction_id: str) -> None:
        """Send a pending credit once now, an unpaid win's that an operator handed back
        (``services.unpaid_actions.resend``), and record its answer as the retrier does:
        acknowledged, refused again (unpaid, with the new answer) or none (pending: the
        retrier sends it again)."""
        stored = self._stored_request(transaction_id)
        if stored is None:
            return
        row, fields = stored
        try:
            reply = self.client.call(row.kind, fields)
        except WalletRefused as refused:
            log.error("resent %s %s refused: %s", row.kind, transaction_id, refused)
            self.mark(transaction_id, CallState.REFUSED, error=refused.code[:32],
                      only_pending=True)
        except WalletUnavailable as error:
            log.warning("resent %s %s not acknowledged (%s): the retrier resends it",
                        row.kind, transaction_id, error)
            self.postpone(row)
        else:
            self.mark(transaction_id, CallState.ACKNOWLEDGED, reply=reply, only_pending=True)

    def _row(self, transaction_id: str) -> WalletCall | None:
        with self.db.read() as session:
            return session.scalar(select(WalletCall)
                                  .where(WalletCall.transaction_id == transaction_id))

    def postpone(self, row: WalletCall) -> None:
        """One more failed attempt: the next after the doubled backoff, at most
        :data:`MAX_BACKOFF_S` (or the retry interval, if longer). A call answered meanwhile
        (the resender sent it again while this send hung) is left as it is."""
        delay = min(max(MAX_BACKOFF_S, self.config.retry),
                    self.config.retry * 2 ** min(row.attempts or 0, 16))
        now = utcnow()
        with self.db.write() as session:
            session.execute(update(WalletCall).where(
                WalletCall.transaction_id == row.transaction_id,
                WalletCall.status == CallState.PENDING).values(
                attempts=WalletCall.attempts + 1, updated_at=now,
                next_attempt_at=now + timedelta(seconds=delay)))

    # --- the retrier's work ----------------------------------------------------------------
    def roll_back_stale_debits(self) -> int:
        """Record rollbacks for debits older than :attr:`stale` that have no round: left
        pending or acknowledged by a request (or a process) that ended before its round."""
        with self.db.read() as session:
            stale = list(session.scalars(stale_debits(utcnow() - self.stale)))
        for transaction_id in stale:
            if self._row_played(transaction_id):
                continue
            log.warning("debit %s has no round after %s: rolling it back", transaction_id,
                        self.stale, extra=call_fields(CallKind.DEBIT, transaction_id))
            self.record_rollback(transaction_id)
        return len(stale)

    def _row_played(self, transaction_id: str) -> bool:
        row = self._row(transaction_id)
        return row is None or (row.idempotency_key is not None
                               and self.round_of(row.account_id, row.idempotency_key) is not None)

    def due(self, limit: int, exclude: frozenset[str] = frozenset(),
            recovered: datetime | None = None) -> list[tuple[WalletCall, dict[str, Any]]]:
        """The pending credits and rollbacks whose time has come, oldest first (at most
        ``limit``, none of ``exclude``), each with its request. One never tried is left to the
        request that recorded it (which sends it at once) for one timeout, so the resender does
        not send every credit a second time while its spin is still waiting for the first
        answer; after a crash it is sent a timeout late. Once the wallet answers again after
        it gave none (``recovered``: when the call it answered was sent), the calls recorded
        or postponed before that are due too, whatever their backoff: they failed because
        the wallet was down, and their requests' sends may be held by the wallet until their
        timeout (the operator answers a second send with its first answer)."""
        now = utcnow()
        fresh = now - timedelta(seconds=self.config.timeout)
        params: dict[str, Any] = {"now": now, "limit": limit + len(exclude)}
        if recovered is not None:
            fresh = params["recovered"] = max(fresh, min(recovered, now))
        # a bare Core read (it runs every retry interval, and finds nothing most of the
        # time): the calls due with their players' ids at the operator
        with self.db.read_engine.connect() as conn:
            found = conn.execute(_DUE if recovered is None else _DUE_RECOVERED,
                                 {**params, "fresh": fresh}).all()
        requests = [self._request_of(one) for one in found
                    if one.transaction_id not in exclude]
        return requests[:limit]

    def balance(self, principal: Principal) -> int:
        """The operator's balance of the player (the ``balance`` method)."""
        with self.db.read() as session:
            player_id = session.scalar(select(Account.external_id)
                                       .where(Account.id == principal.account_id))
            launched = session.execute(select(SessionToken.operator_session, SessionToken.brand)
                                       .where(SessionToken.id == principal.session_id)).first()
        if player_id is None:
            raise NotFound("this player did not come from the operator's launch",
                           code="not_an_operator_player")
        try:
            reply = self.client.call(p.BALANCE, {"player_id": player_id,
                                                 "session_id": session_ref(principal.session_id),
                                                 **Carried(*(launched or (None, None)))
                                                 .fields(),
                                                 "currency": principal.currency})
        except WalletRefused as refused:
            raise refusal(refused.code, refused.message) from None
        except WalletUnavailable:
            raise WalletUnavailableError("the operator's wallet did not answer") from None
        return reply.balance


_CALLS: Table = WalletCall.__table__  # type: ignore[assignment]
_ACCOUNTS: Table = Account.__table__  # type: ignore[assignment]
_SESSIONS: Table = SessionToken.__table__  # type: ignore[assignment]
def _due(*, recovered: bool) -> Select[Any]:
    """The credits and rollbacks due to be resent (``resender``), with each player's id and
    its session's ``operator_session`` and ``brand`` (ADR 0081); ``recovered``: also those
    postponed before the wallet's recovery (``:recovered``), whatever their backoff."""
    due = _CALLS.c.next_attempt_at <= bindparam("now")
    if recovered:
        due = or_(due, _CALLS.c.updated_at <= bindparam("recovered"))
    return (select(*_CALLS.c, _ACCOUNTS.c.external_id.label("player_id"),
                   _SESSIONS.c.operator_session, _SESSIONS.c.brand)
            .join(_ACCOUNTS, _ACCOUNTS.c.id == _CALLS.c.account_id)
            .outerjoin(_SESSIONS, _SESSIONS.c.id == _CALLS.c.session_id)
            .where(_CALLS.c.status == CallState.PENDING,
                   _CALLS.c.kind.in_((CallKind.CREDIT, CallKind.ROLLBACK)), due,
                   or_(_CALLS.c.attempts > 0, _CALLS.c.created_at <= bindparam("fresh")))
            .order_by(_CALLS.c.id).limit(bindparam("limit")))


_DUE = _due(recovered=False)
_DUE_RECOVERED = _due(recovered=True)
_ONE = (select(*_CALLS.c, _ACCOUNTS.c.external_id.label("player_id"),
               _SESSIONS.c.operator_session, _SESSIONS.c.brand)
        .join(_ACCOUNTS, _ACCOUNTS.c.id == _CALLS.c.account_id)
        .outerjoin(_SESSIONS, _SESSIONS.c.id == _CALLS.c.session_id)
        .where(_CALLS.c.transaction_id == bindparam("transaction_id")))
"""One call with its player's id and its session's ``operator_session`` and ``brand``."""


__all__ = [
    "SeamlessWallet",
    "TransactionIds",
    "WalletMisconfigured",
    "WalletUnavailableError",
    "refusal",
]
