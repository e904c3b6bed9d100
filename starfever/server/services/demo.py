"""Demo play (ADR 0066): the real game and model for a play balance, with no account and no
money. Its state is in three tables of its own (``demo_sessions``, ``demo_pool``,
``demo_rates``), apart from the books: a demo spin writes no round, ledger entry, wallet call,
chain link, meter or event, and never calls the operator's wallet. So the reports, the
meters, the audit and the operator's books cannot see it, by construction.

A demo session is opened by the stand-alone page ("Play for fun") where the market allows
demo play, or by the operator's signed launch with ``mode: "demo"`` (a single-use launch
token, exchanged like a real one; such a session counts as verified, which a
``verified_only`` market requires). Each address may open
``STARFEVER_DEMO_SESSIONS_PER_ADDRESS`` sessions an hour and play
``STARFEVER_DEMO_SPINS_PER_ADDRESS`` spins a minute (``429``, counted in the database, so
across workers). The market's least time per round, its largest stake and maintenance hold as
for real play. A spin is one transaction on its session row and the demo pool: a retry under
the same Idempotency-Key answers the last spin again.
"""

from __future__ import annotations

import json
import math
import secrets
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.engine import money
from starfever.engine.model import MathModel
from starfever.engine.round import at_pool
from starfever.engine.symbols import Cents, InvalidBet, check_line_bet
from starfever.markets import DEMO_FORBIDDEN, DEMO_VERIFIED_ONLY, MarketProfile
from starfever.server import clock
from starfever.server.db import Database
from starfever.server.models import DemoPool, DemoRate, DemoSession
from starfever.server.services.auth import token_hash
from starfever.server.services.chain import canonical_json
from starfever.server.services.controls import check_game_open
from starfever.server.services.errors import (
    Conflict,
    Forbidden,
    TooManyRequests,
    Unauthorized,
    Unprocessable,
    utcnow,
)
from starfever.server.settings import Settings
from starfever.server.spin.calls import check_same_request
from starfever.server.spin.draw import play_live_or_test, request_hash

DEMO_BALANCE: Final = 100_000
"""A demo session's play balance: EUR 1,000.00 of play money."""
DEMO_TTL: Final = timedelta(hours=12)
DEMO_LAUNCH_TTL: Final = timedelta(seconds=60)
POOL_ID: Final = 1
TOKEN_PREFIX: Final = "demo-"
"""Demo tokens say what they are (and can never be a real session's)."""
SESSIONS, SPINS = "sessions", "spins"
_WINDOWS_MS: Final = {SESSIONS: 3_600_000, SPINS: 60_000}


def check_market(market: MarketProfile, *, verified: bool) -> None:
    """``403 demo_not_allowed`` where the market forbids demo play, ``403
    demo_requires_verified_player`` where it allows it only for a player the operator
    verified and this one is not."""
    if market.demo == DEMO_FORBIDDEN:
        raise Forbidden(f"the market {market.name!r} does not allow demo play",
                        code="demo_not_allowed")
    if market.demo == DEMO_VERIFIED_ONLY and not verified:
        raise Forbidden(f"in the market {market.name!r} demo play is for players the operator "
                        "verified: launch it from the operator",
                        code="demo_requires_verified_player")


def _count(session: Session, address: str, kind: str, most: int, now_ms: int) -> None:
    """Count one ``kind`` for ``address`` in its fixed window, or refuse it (``429``)."""
    window = _WINDOWS_MS[kind]
    row = session.scalar(select(DemoRate).where(DemoRate.address == address,
                                                DemoRate.kind == kind).with_for_update())
    if row is None:
        session.add(DemoRate(address=address, kind=kind, window_start_ms=now_ms, count=1))
        session.flush()
        return
    if now_ms - row.window_start_ms >= window:
        row.window_start_ms, row.count = now_ms, 1
        return
    if row.count >= most:
        wait = math.ceil((row.window_start_ms + window - now_ms) / 1000)
        per = "an hour" if kind == SESSIONS else "a minute"
        raise TooManyRequests(f"this address has had its {most} demo {kind} {per}; try again "
                              f"in {wait} s", retry_after=max(1, wait),
                              code=f"too_many_demo_{kind}")
    row.count += 1


def _new_session(session: Session, settings: Settings, address: str, now: datetime, *,
                 verified: bool) -> str:
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(DemoSession(token_hash=token_hash(settings, token), address=address[:64],
                            balance=DEMO_BALANCE, created_at=now, expires_at=now + DEMO_TTL,
                            verified=verified, rounds=0))
    return token


def open_session(db: Database, settings: Settings, market: MarketProfile,
                 address: str) -> tuple[str, datetime]:
    """The public page's "Play for fun": a demo token and its expiry."""
    check_market(market, verified=False)
    check_game_open(db)
    now = utcnow()
    for _ in range(2):
        try:
            with db.write() as session:
                _count(session, address[:64], SESSIONS, settings.demo_sessions_per_address,
                       clock.now_ms())
                return _new_session(session, settings, address, now, verified=False), \
                    now + DEMO_TTL
        except IntegrityError:  # two first sessions of one address: count again
            continue
    raise RuntimeError("the demo rate row could not be made or found")


def _with_currency(token: str, currency: str | None) -> str:
    """``token`` naming ``currency`` after a ``.`` (never in ``token_urlsafe``'s alphabet): a
    demo session has no currency column (ADR 0078), so its launch's currency travels in its
    tokens, whose stored hash covers it (a token with another currency is no token)."""
    return token if currency is None else f"{token}.{currency}"


def currency_of(settings: Settings, token: str) -> str:
    """The currency a demo token names (its operator launch's), if served; else the first
    served (the stand-alone page's "Play for fun", and every token made before)."""
    _, dot, code = token.rpartition(".")
    return code if dot and code in settings.served_currencies else \
        settings.served_currencies[0]


def launch(db: Database, settings: Settings, launch_id: str, address: str,
           currency: str | None = None) -> tuple[str, datetime]:
    """The operator's demo launch: a single-use launch token (``409 launch_replayed`` for a
    ``launch_id`` seen before) that names the launch's ``currency``; the market was checked
    by the caller."""
    now = utcnow()
    token = _with_currency(secrets.token_urlsafe(32), currency)
    try:
        with db.write() as session:
            session.add(DemoSession(launch_hash=token_hash(settings, token), launch_id=launch_id,
                                    launch_expires_at=now + DEMO_LAUNCH_TTL, verified=True,
                                    address=address[:64], balance=DEMO_BALANCE,
                                    created_at=now, expires_at=now + DEMO_TTL, rounds=0))
    except IntegrityError:
        raise Conflict(f"the launch {launch_id!r} was used before: a launch is taken once "
                       "(send a new launch_id)", code="launch_replayed") from None
    return token, now + DEMO_LAUNCH_TTL


def exchange(db: Database, settings: Settings, launch_token: str) -> tuple[str, datetime]:
    """The demo token of an operator's demo launch (once, within 60 s), naming the launch's
    currency as the launch token did."""
    check_game_open(db)
    now = utcnow()
    _, dot, code = launch_token.rpartition(".")
    token = _with_currency(TOKEN_PREFIX + secrets.token_urlsafe(32),
                           code if dot and code in settings.served_currencies else None)
    with db.write() as session:
        claimed = session.execute(
            update(DemoSession).where(DemoSession.launch_hash == token_hash(settings,
                                                                            launch_token),
                                      DemoSession.token_hash.is_(None),
                                      DemoSession.launch_expires_at > now)
            .values(token_hash=token_hash(settings, token), expires_at=now + DEMO_TTL)
            .returning(DemoSession.id)).first()
    if claimed is None:
        raise Unauthorized("the demo launch token is used, expired or not valid; launch the "
                           "game again from the operator", code="invalid_launch_token")
    return token, now + DEMO_TTL


def _session_of(session: Session, settings: Settings, token: str, *, lock: bool) -> DemoSession:
    query = select(DemoSession).where(DemoSession.token_hash == token_hash(settings, token))
    row = session.scalar(query.with_for_update() if lock else query)
    if row is None or row.expires_at <= utcnow():
        raise Unauthorized("the demo session is not valid or has ended; start demo play again",
                           code="invalid_demo_token")
    return row


def balance(db: Database, settings: Settings, token: str) -> int:
    """The demo session's play balance."""
    with db.read() as session:
        return _session_of(session, settings, token, lock=False).balance


def pool(db: Database, model: MathModel) -> int:
    """The demo €€€ pool (the model's seed until the first demo spin)."""
    with db.read() as session:
        row = session.get(DemoPool, POOL_ID)
    return model.seed_cents if row is None else row.amount


def _pool_row(session: Session, model: MathModel, now: datetime) -> DemoPool:
    row = session.scalar(select(DemoPool).where(DemoPool.id == POOL_ID).with_for_update())
    if row is None:
        row = DemoPool(id=POOL_ID, amount=model.seed_cents, carry="0", updated_at=now)
        session.add(row)
        session.flush()
    return row


def spin(db: Database, settings: Settings, model: MathModel, market: MarketProfile,
         token: str, line_bet: int, key: str, test_draws: list[int] | None,
         address: str) -> dict[str, Any]:
    """Play one demo round (a retry under the last key answers it again). The answer has the
    shape of a real spin's (``SpinPublic``) with ``"demo": true`` and no reality check."""
    try:
        bet = check_line_bet(line_bet)
    except InvalidBet as error:
        raise Unprocessable(str(error), code="invalid_bet") from None
    total = money.total_bet(Cents(bet))
    if total > market.max_stake_cents:
        raise Unprocessable(f"the market {market.name!r} allows a stake of at most "
                            f"{market.max_stake_cents} cents a round",
                            code="stake_above_market_limit")
    if test_draws is not None and not settings.test_mode:
        raise Unprocessable("test_draws are accepted only in test mode",
                            code="test_draws_not_allowed")
    check_game_open(db)  # maintenance closes demo play too (a retry of the last spin as well)
    fingerprint = request_hash(bet, test_draws)
    drawn = play_live_or_test(model, bet, model.seed_cents, test_draws)
    now, now_ms = utcnow(), clock.now_ms()
    for _ in range(2):
        try:
            with db.write() as session:
                return _settle(session, settings, model, market, token, key, fingerprint,
                               drawn, total, address, now, now_ms,
                               test=test_draws is not None)
        except IntegrityError:  # the first demo spin of an address or of the installation
            continue
    raise RuntimeError("a demo spin could not be stored")


def _settle(session: Session, settings: Settings, model: MathModel, market: MarketProfile,
            token: str, key: str, fingerprint: str, drawn: Any, total: int, address: str,
            now: datetime, now_ms: int, *, test: bool) -> dict[str, Any]:
    row = _session_of(session, settings, token, lock=True)
    if row.last_key == key and row.last_answer is not None:
        answer: dict[str, Any] = json.loads(row.last_answer)
        check_same_request(answer.pop("request_hash", None), fingerprint)
        return {**answer, "replayed": True}
    if market.min_round_ms and row.last_spin_ms is not None \
            and now_ms - row.last_spin_ms < market.min_round_ms:
        wait = row.last_spin_ms + market.min_round_ms - now_ms
        raise TooManyRequests(f"this market allows a round every {market.min_round_ms} ms: "
                              f"the next may start in {wait} ms",
                              retry_after=max(1, math.ceil(wait / 1000)), code="round_too_soon")
    _count(session, address[:64], SPINS, settings.demo_spins_per_address, now_ms)
    if row.balance < total:
        raise Conflict(f"the play balance of {row.balance} cents does not cover the total bet "
                       f"of {total} cents", code="insufficient_funds")
    demo_pool = _pool_row(session, model, now)
    contribution, carry = money.progressive_contribution(Cents(total), model.contribution_rate,
                                                         Fraction(demo_pool.carry))
    result = at_pool(model, drawn, demo_pool.amount + contribution)
    demo_pool.amount, demo_pool.carry, demo_pool.updated_at = result.pool_after, str(carry), now
    before = row.balance
    row.balance = before - total + result.total_win
    row.rounds += 1
    row.last_spin_ms = now_ms
    answer = {"round": {
        "id": row.rounds, "created_at": now.isoformat(), "line_bet": result.line_bet,
        "total_bet": total, "total_win": result.total_win, "feature": result.feature,
        "test": test, "model_name": model.name,
        "model_version": model.version, "contribution": contribution,
        "base_win": result.base_win, "star_wild_win": result.star_wild_win,
        "hold_and_cash_win": result.hold_and_cash_win,
        "progressive_win": result.progressive_win, "pool_before": result.pool_before,
        "pool_after": result.pool_after, "pool_refill": result.pool_refill,
        "balance_before": before, "balance_after": row.balance,
        "draws": list(result.draws), "events": json.loads(canonical_json(list(result.events))),
        "prev_hash": "", "hash": "", "build_sha256": None, "model_sha256": None,
        "details_url": None, "payment": "paid", "demo": True},
        "balance": row.balance, "replayed": False, "reality_check": None,
        "session_time_left_seconds": None, "demo": True}
    row.last_key = key
    row.last_answer = json.dumps({**answer, "request_hash": fingerprint},
                                 separators=(",", ":"))
    return answer


__all__ = ["DEMO_BALANCE", "DEMO_TTL", "TOKEN_PREFIX", "balance", "check_market",
           "currency_of", "exchange", "launch", "open_session", "pool", "spin"]
