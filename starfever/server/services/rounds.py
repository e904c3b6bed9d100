"""One round = one transaction: debit the bet, feed the pool, play the whole round with the
engine, pay every win, book the €€€ shares and any refill, store the round in the hash chain,
commit all at once. An idempotency key makes a retry return the same round and move no money.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from fractions import Fraction

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.engine import money
from starfever.engine.model import MathModel
from starfever.engine.rng import RandomSource, ReplayError, ReplaySource, SystemRandomSource
from starfever.engine.round import RoundResult, play_round, replay_round
from starfever.engine.symbols import Cents, InvalidBet, check_line_bet
from starfever.server.db import Database
from starfever.server.models import HOUSE, POOL, Account, Round, SessionToken
from starfever.server.services import jackpot, ledger, protection, settle
from starfever.server.services.auth import Principal, check_session_live
from starfever.server.services.chain import canonical_json, round_hash
from starfever.server.services.errors import (
    Conflict,
    NotFound,
    Unauthorized,
    Unprocessable,
    utcnow,
)
from starfever.server.services.settle import SpinOutcome, lock_chain
from starfever.server.services.wallet import LedgerWallet, WalletPort
from starfever.server.settings import Settings


def request_hash(line_bet: int, test_draws: Sequence[int] | None) -> str:
    """Fingerprint of a spin request: a retry with the same key must send the same body."""
    body = {"line_bet": line_bet, "test_draws": list(test_draws) if test_draws else None}
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def play_live_or_test(model: MathModel, line_bet: int, pool_before: int,
                      test_draws: Sequence[int] | None, *,
                      live_source: Callable[[], RandomSource] = SystemRandomSource,
                      ) -> RoundResult:
    """The round of a request: from ``test_draws`` (test mode only, checked by the caller), or
    from a fresh ``live_source``, which must be marked ``live`` (fail closed: a seeded source or
    the simulator's generator wired in here by mistake refuses to play instead of playing)."""
    if test_draws is None:
        source = live_source()
        if getattr(source, "live", False) is not True:
            raise RuntimeError(f"refusing {type(source).__name__}, a source not marked live, "
                               "for a live round")
        return play_round(model, line_bet, source, pool=pool_before)
    replay = ReplaySource(test_draws)
    try:
        result = play_round(model, line_bet, replay, pool=pool_before)
        replay.check_used_up()
    except ReplayError as error:
        raise Unprocessable(f"test_draws do not make a round: {error}",
                            code="invalid_test_draws") from None
    return result


def spin(db: Database, settings: Settings, model: MathModel, wallet: WalletPort,
         principal: Principal, line_bet: int, idempotency_key: str,
         test_draws: Sequence[int] | None = None) -> SpinOutcome:
    """Play and book one round for ``principal`` (see the module docstring).

    The outcome is drawn before the transaction (the draws never depend on the pool or on
    anyone's balance), so the serialized part holds no engine work: under the pool lock the
    round is only re-derived from its draws at the real pool (ADR 0009). Draws of a request
    that is then refused (a retry, short funds, self-exclusion) are discarded unseen; which
    requests are refused never depends on what was drawn.
    """
    if isinstance(wallet, LedgerWallet):  # group commit (ADR 0009)
        job = queued_spin(settings, model, principal, line_bet, idempotency_key, test_draws)
        try:
            return settle.settler(db).submit(job)
        except IntegrityError:
            return after_key_race(db, settings, wallet, principal, job.key, job.fingerprint)
    bet, fingerprint, drawn = _draw(settings, model, line_bet, test_draws)
    try:
        return _spin(db, settings, model, wallet, principal, bet, idempotency_key,
                     fingerprint, drawn, test=test_draws is not None)
    except IntegrityError:
        return after_key_race(db, settings, wallet, principal, idempotency_key, fingerprint)


async def spin_awaiting(db: Database, settings: Settings, model: MathModel, wallet: WalletPort,
                        principal: Principal, line_bet: int, idempotency_key: str,
                        test_draws: Sequence[int] | None = None) -> SpinOutcome:
    """:func:`spin` for an event loop. With the ledger wallet the round is drawn here and the
    settler's future awaited, so no thread waits per spin (ADR 0010); anything that blocks on
    the database runs in a worker thread."""
    if not isinstance(wallet, LedgerWallet):
        return await asyncio.to_thread(spin, db, settings, model, wallet, principal, line_bet,
                                       idempotency_key, test_draws)
    job = queued_spin(settings, model, principal, line_bet, idempotency_key, test_draws)
    try:
        return await asyncio.wrap_future(settle.settler(db).enqueue(job))
    except IntegrityError:
        return await asyncio.to_thread(after_key_race, db, settings, wallet, principal, job.key,
                                       job.fingerprint)


def queued_spin(settings: Settings, model: MathModel, principal: Principal, line_bet: int,
                idempotency_key: str, test_draws: Sequence[int] | None) -> settle.Job:
    """A spin drawn and ready for the settler (:func:`settle.Settler.enqueue`); the async spin
    route awaits its future instead of holding a thread."""
    bet, fingerprint, drawn = _draw(settings, model, line_bet, test_draws)
    return settle.Job(settings=settings, model=model, principal=principal, bet=bet,
                      key=idempotency_key, fingerprint=fingerprint, drawn=drawn,
                      test=test_draws is not None)


def after_key_race(db: Database, settings: Settings, wallet: WalletPort, principal: Principal,
                   key: str, fingerprint: str) -> SpinOutcome:
    """The answer when a spin lost a race on its idempotency key to a concurrent request
    (possible only if the wallet lock was bypassed): that request's round."""
    with db.write() as session:
        outcome = _existing(session, settings, wallet, principal, key, fingerprint)
    if outcome is None:
        raise Conflict("a concurrent request with this Idempotency-Key was not settled",
                       code="idempotency_key_race")
    return outcome


def _draw(settings: Settings, model: MathModel, line_bet: int,
          test_draws: Sequence[int] | None) -> tuple[Cents, str, RoundResult]:
    try:
        bet = check_line_bet(line_bet)
    except InvalidBet as error:
        raise Unprocessable(str(error), code="invalid_bet") from None
    if test_draws is not None and not settings.test_mode:
        raise Unprocessable("test_draws are accepted only in test mode",
                            code="test_draws_not_allowed")
    result = play_live_or_test(model, bet, model.seed_cents, test_draws)
    return bet, request_hash(bet, test_draws), result


def _existing(session: Session, settings: Settings, wallet: WalletPort, principal: Principal,
              key: str, fingerprint: str) -> SpinOutcome | None:
    stored = session.scalar(select(Round).where(Round.account_id == principal.account_id,
                                                Round.idempotency_key == key))
    if stored is None:
        return None
    if stored.request_hash != fingerprint:
        raise Conflict("this Idempotency-Key was used for a different spin request",
                       code="idempotency_key_reused")
    return SpinOutcome(round=stored, balance=wallet.balance(session, principal.account_id),
                       replayed=True, reality_check=protection.reality_check(
                           session, settings, principal.session_id, utcnow()))


def _spin(db: Database, settings: Settings, model: MathModel, wallet: WalletPort,
          principal: Principal, bet: int, key: str, fingerprint: str,
          drawn: RoundResult, *, test: bool) -> SpinOutcome:
    with db.write() as session:
        now = utcnow()
        balance_before = wallet.lock(session, principal.account_id)  # lock order: wallet,
        login = session.get(SessionToken, principal.session_id)  # loaded before the pool lock
        if login is None:
            raise Unauthorized("the bearer token is not valid", code="invalid_token")
        check_session_live(login.revoked_at, login.expires_at, now)  # spins skip the auth query
        retry = _existing(session, settings, wallet, principal, key, fingerprint)
        if retry is not None:
            return retry
        account = session.get(Account, principal.account_id)
        if account is None:
            raise NotFound("no such player", code="player_not_found")
        protection.check_not_excluded(account, now, "bets are")
        protection.check_reality_acknowledged(protection.reality_check_of(
            settings, login.created_at, login.reality_check_at, login.net_result, now))
        total = money.total_bet(Cents(bet))
        if balance_before < total:
            raise Conflict(f"the balance of {balance_before} cents does not cover the total "
                           f"bet of {total} cents", code="insufficient_funds")
        # --- serialized from here to the commit: keep it short (ADR 0009) ---
        pool = jackpot.lock_pool(session, model, now)  # ... then pool,
        contribution, carry = money.progressive_contribution(
            total, model.contribution_rate, Fraction(pool.carry))
        pool_before = pool.amount + contribution
        result = drawn if drawn.pool_before == pool_before else \
            replay_round(model, bet, drawn.draws, pool=pool_before)
        head = lock_chain(session)  # ... then chain head
        game_win = result.total_win - result.progressive_win
        stored = Round(
            id=head.last_round_id + 1, account_id=principal.account_id,
            session_id=principal.session_id, idempotency_key=key, request_hash=fingerprint,
            model_name=model.name, model_version=model.version, line_bet=bet, total_bet=total,
            contribution=contribution, base_win=result.base_win,
            star_wild_win=result.star_wild_win, hold_and_cash_win=result.hold_and_cash_win,
            progressive_win=result.progressive_win, total_win=result.total_win,
            feature=result.feature, pool_before=result.pool_before,
            pool_after=result.pool_after, pool_refill=result.pool_refill,
            balance_before=balance_before,
            balance_after=balance_before - total + result.total_win,
            draws=json.dumps(list(result.draws), separators=(",", ":")),
            events=canonical_json(list(result.events)), test=test,
            created_at=now, prev_hash=head.last_hash, hash="")
        stored.hash = round_hash(stored)
        session.add(stored)
        _book(session, wallet, principal.account_id, stored, game_win)
        pool.amount = result.pool_after
        pool.carry = str(carry)
        pool.contributions += contribution
        pool.wins += result.progressive_win
        pool.refills += result.pool_refill
        pool.hits += len(result.jackpot_hits)
        pool.updated_at = now
        head.last_round_id, head.last_hash = stored.id, stored.hash
        login.net_result += stored.total_win - stored.total_bet
        check = protection.reality_check(session, settings, principal.session_id, now)
        return SpinOutcome(round=stored, balance=stored.balance_after, replayed=False,
                           reality_check=check)


def _book(session: Session, wallet: WalletPort, account_id: int, r: Round, game_win: int) -> None:
    """The round's ledger entries; they sum to zero across the books."""
    at = r.created_at
    wallet.debit(session, account_id, r.total_bet, ledger.BET, at, round_id=r.id)
    ledger.book(session, POOL, ledger.CONTRIBUTION, r.contribution, at,
                balance_after=r.pool_before, round_id=r.id)
    ledger.book(session, HOUSE, ledger.BET, r.total_bet - r.contribution, at, round_id=r.id)
    if game_win:
        wallet.credit(session, account_id, game_win, ledger.WIN, at, round_id=r.id)
        ledger.book(session, HOUSE, ledger.WIN, -game_win, at, round_id=r.id)
    if r.progressive_win:
        wallet.credit(session, account_id, r.progressive_win, ledger.JACKPOT_WIN, at,
                      round_id=r.id)
        ledger.book(session, POOL, ledger.JACKPOT_WIN, -r.progressive_win, at,
                    balance_after=r.pool_before - r.progressive_win, round_id=r.id)
    if r.pool_refill:
        ledger.book(session, POOL, ledger.REFILL, r.pool_refill, at,
                    balance_after=r.pool_after, round_id=r.id)
        ledger.book(session, HOUSE, ledger.REFILL, -r.pool_refill, at, round_id=r.id)


def list_rounds(db: Database, principal: Principal, limit: int,
                before: int | None) -> list[Round]:
    """The player's rounds, newest first, ``limit`` of them with ids below ``before``."""
    query = select(Round).where(Round.account_id == principal.account_id)
    if before is not None:
        query = query.where(Round.id < before)
    with db.read() as session:
        return list(session.scalars(query.order_by(Round.id.desc()).limit(limit)))


def get_round(db: Database, principal: Principal, round_id: int) -> Round:
    """One of the player's rounds; ``round_not_found`` for unknown ids and other players'."""
    with db.read() as session:
        stored = session.get(Round, round_id)
    if stored is None or stored.account_id != principal.account_id:
        raise NotFound(f"no round {round_id} of yours", code="round_not_found")
    return stored
