"""Group commit of spins (ADR 0009): inside one server process, every spin is handed to one
settler thread, which settles the spins waiting at that moment (up to :data:`MAX_BATCH`) in ONE
transaction, in the order they arrived, then answers each of them.

The transaction locks the players' wallets (sorted by account id, so two processes' batches
never deadlock), then the €€€ pool, then the chain head — the order of ADR 0005 — once per batch
instead of once per round. Each round is then settled exactly as :func:`rounds._spin` would:
its ``pool_before`` follows the previous round's ``pool_after`` and the running carry, the
round is re-derived from its draws at that pool, it gets the next id and the previous hash, and
its ledger entries are booked against the running balances. A request that must be refused
(a retry of a settled key, a key reused for another body, short funds, self-exclusion) is
refused alone, checked in order against the running state; it writes nothing and the rest of
the batch goes on. If the batch transaction itself fails, every spin of it is settled again
alone (a batch of one), so an unexpected error reaches only the request that caused it.

Nothing is answered before the commit: a crash loses the whole batch, and none of its rounds
was ever shown to anyone.

The batch runs as few statements as it can, on a bare Core connection (no ORM unit of work):
three reads (wallets with their accounts, locked; rounds already stored under the batch's
keys; the sessions), one that locks the pool row and the chain head together, and then six
writes that on PostgreSQL go out as one pipeline, answered in one round trip, before the
commit. A connection found dead (the database restarted) costs the batch one more try.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from sqlalchemy import Connection, Table, bindparam, insert, select, true, tuple_, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from starfever.engine import money
from starfever.engine.model import MathModel
from starfever.engine.round import RoundResult, replay_round
from starfever.engine.symbols import Cents
from starfever.server.db import Database
from starfever.server.models import (
    HOUSE,
    POOL,
    WALLET,
    Account,
    ChainHead,
    JackpotPool,
    LedgerEntry,
    Round,
    SessionToken,
    Wallet,
)
from starfever.server.services import jackpot, ledger
from starfever.server.services.auth import Principal, check_session_live
from starfever.server.services.chain import GENESIS_HASH, canonical_json, round_hash
from starfever.server.services.errors import (
    Conflict,
    NotFound,
    ServiceError,
    Unauthorized,
    utcnow,
)
from starfever.server.services.protection import (
    RealityCheck,
    check_exclusion,
    check_reality_acknowledged,
    reality_check_of,
)
from starfever.server.settings import Settings

CHAIN_ID = 1
MAX_BATCH = 64
"""The most spins one transaction settles."""
IDLE_EXIT_S = 5.0
"""The settler thread ends after this long without work (the next spin starts a new one)."""

_ROUNDS: Table = Round.__table__  # type: ignore[assignment]
_LEDGER: Table = LedgerEntry.__table__  # type: ignore[assignment]
_WALLETS: Table = Wallet.__table__  # type: ignore[assignment]
_SESSIONS: Table = SessionToken.__table__  # type: ignore[assignment]
_POOL: Table = JackpotPool.__table__  # type: ignore[assignment]
_HEAD: Table = ChainHead.__table__  # type: ignore[assignment]
_ACCOUNTS: Table = Account.__table__  # type: ignore[assignment]
_LOCK_WALLETS = (
    select(_WALLETS.c.account_id, _WALLETS.c.balance, _ACCOUNTS.c.excluded_until)
    .join(_ACCOUNTS, _ACCOUNTS.c.id == _WALLETS.c.account_id)
    .where(_WALLETS.c.account_id.in_(bindparam("ids", expanding=True)))
    .order_by(_WALLETS.c.account_id).with_for_update(of=_WALLETS))
_SESSIONS_OF = (
    select(_SESSIONS.c.id, _SESSIONS.c.created_at, _SESSIONS.c.reality_check_at,
           _SESSIONS.c.net_result, _SESSIONS.c.revoked_at, _SESSIONS.c.expires_at)
    .where(_SESSIONS.c.id.in_(bindparam("ids", expanding=True))))
_LOCK_POOL_AND_HEAD = (
    select(_POOL.c.amount, _POOL.c.carry, _HEAD.c.last_round_id, _HEAD.c.last_hash)
    .select_from(_POOL.join(_HEAD, true()))
    .where(_POOL.c.id == jackpot.POOL_ID, _HEAD.c.id == CHAIN_ID).with_for_update())
"""Both rows in one round trip, locked in the order of ADR 0005 (pool, then chain head)."""
_UPDATE_WALLET = (update(_WALLETS).where(_WALLETS.c.account_id == bindparam("w_id"))
                  .values(balance=bindparam("w_balance"), updated_at=bindparam("w_at")))
_UPDATE_NET = (update(_SESSIONS).where(_SESSIONS.c.id == bindparam("s_id"))
               .values(net_result=_SESSIONS.c.net_result + bindparam("s_delta")))
_UPDATE_POOL = (update(_POOL).where(_POOL.c.id == jackpot.POOL_ID).values(
    amount=bindparam("p_amount"), carry=bindparam("p_carry"),
    contributions=_POOL.c.contributions + bindparam("p_contributions"),
    wins=_POOL.c.wins + bindparam("p_wins"), refills=_POOL.c.refills + bindparam("p_refills"),
    hits=_POOL.c.hits + bindparam("p_hits"), updated_at=bindparam("p_at")))
_UPDATE_HEAD = (update(_HEAD).where(_HEAD.c.id == CHAIN_ID)
                .values(last_round_id=bindparam("h_id"), last_hash=bindparam("h_hash")))


@dataclass(frozen=True, slots=True)
class SpinOutcome:
    """A stored round, the wallet after it, and whether this was a retry."""

    round: Round
    balance: int
    replayed: bool
    reality_check: RealityCheck


@dataclass(slots=True)
class Job:
    """One spin waiting to be settled; its draws were made before it was queued."""

    settings: Settings
    model: MathModel
    principal: Principal
    bet: int
    key: str
    fingerprint: str
    drawn: RoundResult
    test: bool
    future: Future[SpinOutcome] = field(default_factory=Future)


class Settler:
    """The one writer of spins of a :class:`Database` in this process."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._queue: deque[Job] = deque()
        self._cond = threading.Condition()
        self._running = False

    def submit(self, job: Job) -> SpinOutcome:
        """Queue ``job`` and wait until its batch is committed (or it was refused)."""
        return self.enqueue(job).result()

    def enqueue(self, job: Job) -> Future[SpinOutcome]:
        """Queue ``job``; its future resolves once its batch is committed (or it was refused).
        For an event loop, which must not block: ``await asyncio.wrap_future(...)``."""
        with self._cond:
            self._queue.append(job)
            if self._running:
                self._cond.notify()
            else:
                self._running = True
                threading.Thread(target=self._run, name="starfever-settler",
                                 daemon=True).start()
        return job.future

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._cond.wait(IDLE_EXIT_S)
                    if not self._queue:
                        self._running = False
                        return
                first = self._queue[0]
                batch: list[Job] = []
                rest: deque[Job] = deque()
                while self._queue and len(batch) < MAX_BATCH:
                    job = self._queue.popleft()
                    # one batch settles under one model and one set of settings
                    if job.model is first.model and job.settings is first.settings:
                        batch.append(job)
                    else:
                        rest.append(job)
                rest.extend(self._queue)
                self._queue = rest
            self._settle(batch)

    def _settle(self, batch: list[Job], *, reconnected: bool = False) -> None:
        try:
            results = settle_batch(self.db, batch)
        except BaseException as error:
            if isinstance(error, DBAPIError) and error.connection_invalidated \
                    and not reconnected:
                # the connection had died (say, the database restarted) and the pool has been
                # emptied: once more on a new one. Nothing of the batch was stored, or, if the
                # commit itself was cut, its rounds are found by their keys and answered.
                self._settle(batch, reconnected=True)
                return
            if len(batch) == 1:
                batch[0].future.set_exception(error)
                return
            for job in batch:  # settle each alone: the error reaches only its cause
                self._settle([job])
            return
        for job, result in zip(batch, results, strict=True):
            if isinstance(result, BaseException):
                job.future.set_exception(result)
            else:
                job.future.set_result(result)


_settlers: dict[int, Settler] = {}
_settlers_lock = threading.Lock()


def settler(db: Database) -> Settler:
    """The settler of ``db`` in this process (made on first use)."""
    found = _settlers.get(id(db))
    if found is not None and found.db is db:
        return found
    with _settlers_lock:
        found = _settlers.get(id(db))
        if found is None or found.db is not db:
            found = _settlers[id(db)] = Settler(db)
        return found


def _book(rows: list[dict[str, Any]], book: str, kind: str, amount: int, round_id: int,
          at: Any, *, account_id: int | None = None, balance_after: int | None = None) -> None:
    rows.append({"book": book, "account_id": account_id, "kind": kind, "amount": amount,
                 "balance_after": balance_after, "round_id": round_id, "created_at": at})


def settle_batch(db: Database, jobs: Sequence[Job]) -> list[SpinOutcome | ServiceError]:
    """Settle ``jobs`` in order in one transaction; a refused job gets its error instead."""
    model, settings = jobs[0].model, jobs[0].settings
    results: list[SpinOutcome | ServiceError] = []
    account_ids = sorted({j.principal.account_id for j in jobs})
    session_ids = sorted({j.principal.session_id for j in jobs})
    wanted = sorted({(j.principal.account_id, j.key) for j in jobs})
    with db.write_connection() as conn:
        now = utcnow()
        # lock order: wallets (sorted), then pool, then chain head (ADR 0005)
        balances: dict[int, int] = {}
        excluded: dict[int, Any] = {}
        for aid, balance, until in conn.execute(_LOCK_WALLETS, {"ids": account_ids}):
            balances[aid], excluded[aid] = balance, until
        settled: dict[tuple[int, str], Round] = {
            (row.account_id, row.idempotency_key): Round(**row._mapping)
            for row in conn.execute(select(_ROUNDS).where(
                tuple_(_ROUNDS.c.account_id, _ROUNDS.c.idempotency_key).in_(wanted)))}
        logins: dict[int, list[Any]] = {
            row[0]: list(row[1:]) for row in conn.execute(_SESSIONS_OF, {"ids": session_ids})}
        pool_amount, carry_text, last_id, last_hash = _lock_pool_and_head(conn, model, now)

        def check_of(session_id: int) -> RealityCheck:
            login = logins.get(session_id)
            if login is None:
                raise NotFound("no such session", code="session_not_found")
            return reality_check_of(settings, login[0], login[1], login[2], now)

        carry = Fraction(carry_text)
        contributions = wins = refills = hits = 0
        round_rows: list[dict[str, Any]] = []
        ledger_rows: list[dict[str, Any]] = []
        touched: set[int] = set()
        nets: dict[int, int] = {}
        rate = model.contribution_rate
        for job in jobs:
            aid, sid = job.principal.account_id, job.principal.session_id
            try:
                login = logins.get(sid)
                if login is None:
                    raise Unauthorized("the bearer token is not valid", code="invalid_token")
                check_session_live(login[3], login[4], now)  # spins skip the auth query
                if aid not in balances:
                    raise NotFound(f"player {aid} has no wallet", code="wallet_not_found")
                prior = settled.get((aid, job.key))
                if prior is not None:
                    if prior.request_hash != job.fingerprint:
                        raise Conflict("this Idempotency-Key was used for a different spin "
                                       "request", code="idempotency_key_reused")
                    results.append(SpinOutcome(round=prior, balance=balances[aid],
                                               replayed=True, reality_check=check_of(sid)))
                    continue
                check_exclusion(excluded[aid], now, "bets are")
                check_reality_acknowledged(check_of(sid))
                balance_before = balances[aid]
                total = money.total_bet(Cents(job.bet))
                if balance_before < total:
                    raise Conflict(f"the balance of {balance_before} cents does not cover the "
                                   f"total bet of {total} cents", code="insufficient_funds")
                contribution, new_carry = money.progressive_contribution(total, rate, carry)
                pool_before = pool_amount + contribution
                drawn = job.drawn
                result = at_pool(model, drawn, pool_before)
            except ServiceError as error:
                results.append(error)
                continue
            carry = new_carry
            game_win = result.total_win - result.progressive_win
            balance_after = balance_before - total + result.total_win
            values: dict[str, Any] = {
                "id": last_id + 1, "account_id": aid, "session_id": sid,
                "idempotency_key": job.key, "request_hash": job.fingerprint,
                "model_name": model.name, "model_version": model.version,
                "line_bet": job.bet, "total_bet": total, "contribution": contribution,
                "base_win": result.base_win, "star_wild_win": result.star_wild_win,
                "hold_and_cash_win": result.hold_and_cash_win,
                "progressive_win": result.progressive_win, "total_win": result.total_win,
                "feature": result.feature, "pool_before": result.pool_before,
                "pool_after": result.pool_after, "pool_refill": result.pool_refill,
                "balance_before": balance_before, "balance_after": balance_after,
                "draws": json.dumps(list(result.draws), separators=(",", ":")),
                "events": canonical_json(list(result.events)), "test": job.test,
                "created_at": now, "prev_hash": last_hash, "hash": ""}
            stored = Round(**values)
            values["hash"] = stored.hash = round_hash(stored)
            round_rows.append(values)
            rid = last_id = stored.id
            last_hash = stored.hash
            # the entries of rounds._book, in its order; they sum to zero
            running = balance_before - total
            _book(ledger_rows, WALLET, ledger.BET, -total, rid, now, account_id=aid,
                  balance_after=running)
            _book(ledger_rows, POOL, ledger.CONTRIBUTION, contribution, rid, now,
                  balance_after=result.pool_before)
            _book(ledger_rows, HOUSE, ledger.BET, total - contribution, rid, now)
            if game_win:
                running += game_win
                _book(ledger_rows, WALLET, ledger.WIN, game_win, rid, now, account_id=aid,
                      balance_after=running)
                _book(ledger_rows, HOUSE, ledger.WIN, -game_win, rid, now)
            if result.progressive_win:
                running += result.progressive_win
                _book(ledger_rows, WALLET, ledger.JACKPOT_WIN, result.progressive_win, rid, now,
                      account_id=aid, balance_after=running)
                _book(ledger_rows, POOL, ledger.JACKPOT_WIN, -result.progressive_win, rid, now,
                      balance_after=result.pool_before - result.progressive_win)
            if result.pool_refill:
                _book(ledger_rows, POOL, ledger.REFILL, result.pool_refill, rid, now,
                      balance_after=result.pool_after)
                _book(ledger_rows, HOUSE, ledger.REFILL, -result.pool_refill, rid, now)
            balances[aid] = balance_after
            touched.add(aid)
            pool_amount = result.pool_after
            contributions += contribution
            wins += result.progressive_win
            refills += result.pool_refill
            hits += len(result.jackpot_hits)
            delta = result.total_win - total
            logins[sid][2] += delta
            nets[sid] = nets.get(sid, 0) + delta
            settled[(aid, job.key)] = stored
            results.append(SpinOutcome(round=stored, balance=balance_after, replayed=False,
                                       reality_check=check_of(sid)))
        if round_rows:
            with db.pipelined(conn):
                conn.execute(insert(_ROUNDS), round_rows)
                conn.execute(insert(_LEDGER), ledger_rows)
                conn.execute(_UPDATE_WALLET, [
                    {"w_id": aid, "w_balance": balances[aid], "w_at": now}
                    for aid in sorted(touched)])
                conn.execute(_UPDATE_NET, [{"s_id": sid, "s_delta": delta}
                                           for sid, delta in sorted(nets.items())])
                conn.execute(_UPDATE_POOL, {
                    "p_amount": pool_amount, "p_carry": str(carry), "p_contributions":
                    contributions, "p_wins": wins, "p_refills": refills, "p_hits": hits,
                    "p_at": now})
                conn.execute(_UPDATE_HEAD, {"h_id": last_id, "h_hash": last_hash})
    return results


def _lock_pool_and_head(conn: Connection, model: MathModel,
                        now: Any) -> tuple[int, str, int, str]:
    """Lock the pool row, then the chain head, in one statement: the pool's amount and carry,
    the last round's id and hash. Creates whichever is missing (a new database) first."""
    row = conn.execute(_LOCK_POOL_AND_HEAD).first()
    if row is None:
        with Session(bind=conn) as session:  # joins the connection's transaction
            jackpot.lock_pool(session, model, now)
            lock_chain(session)
            session.flush()
        row = conn.execute(_LOCK_POOL_AND_HEAD).one()
    return row[0], row[1], row[2], row[3]


def at_pool(model: MathModel, drawn: RoundResult, pool_before: int) -> RoundResult:
    """The round of these draws played against ``pool_before``.

    Only a round with a €€€ line depends on the pool (engine.round.play_round: without one,
    no share is paid, nothing is refilled, and the pool appears only in ``pool_before``,
    ``pool_after`` and the ``round_end`` event), so only such a round is re-derived from its
    draws; the others get the pool written in. ``starfever audit`` replays every round."""
    if drawn.pool_before == pool_before:
        return drawn
    if drawn.progressive_win or drawn.pool_refill or drawn.pool_after != drawn.pool_before \
            or any(e["type"] == "jackpot" for e in drawn.events):
        return replay_round(model, drawn.line_bet, drawn.draws, pool=pool_before)
    end = drawn.events[-1]
    if end["type"] != "round_end":  # not the layout this shortcut knows
        return replay_round(model, drawn.line_bet, drawn.draws, pool=pool_before)
    pool = Cents(pool_before)
    return replace(drawn, pool_before=pool, pool_after=pool,
                   events=(*drawn.events[:-1], {**end, "pool_after": pool}))


def lock_chain(session: Session) -> ChainHead:
    """The chain head, locked until the transaction ends (created at genesis if missing)."""
    head = session.scalar(select(ChainHead).where(ChainHead.id == CHAIN_ID).with_for_update())
    if head is None:
        head = ChainHead(id=CHAIN_ID, last_round_id=0, last_hash=GENESIS_HASH)
        session.add(head)
    return head
