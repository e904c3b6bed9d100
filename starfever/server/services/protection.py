"""Player protection: weekly deposit limits, the reality check, self-exclusion.

- Deposit limit: deposits over the last 7 days (rolling) may not exceed the limit. Default
  EUR 400, EUR 200 for players under 26 whose birth date is known. A player may set their own:
  a decrease applies at once, an increase only after a cooling-off delay (72 hours).
- Reality check: every N minutes of a session the responses say it is due, with the time
  played and the session's net result; until the player acknowledges it, spins are refused
  (``409 reality_check_due``), so play pauses on it.
- Self-exclusion: for a period; refuses bets and deposits. It can be extended, never shortened.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import WALLET, Account, DepositLimit, LedgerEntry, SessionToken
from starfever.server.services import ledger
from starfever.server.services.auth import Principal
from starfever.server.services.errors import Conflict, Forbidden, NotFound, utcnow
from starfever.server.settings import Settings

WEEK = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class LimitState:
    """A player's weekly deposit limit as it stands now."""

    weekly_deposit_limit: int
    """The limit in force (cents per rolling 7 days)."""
    default_limit: int
    """What the limit would be without a choice of the player's."""
    deposited_last_7_days: int
    """Deposits in the rolling window."""
    pending_limit: int | None
    """A requested increase not yet in force."""
    pending_effective_at: datetime | None
    """When it takes effect."""

    @property
    def remaining(self) -> int:
        """What may still be deposited now."""
        return max(0, self.weekly_deposit_limit - self.deposited_last_7_days)


@dataclass(frozen=True, slots=True)
class RealityCheck:
    """What the reality check says now."""

    due: bool
    elapsed_seconds: int
    """Seconds since the session's log-in."""
    net_result: int
    """Wins minus bets of the session's rounds, in cents."""
    interval_seconds: int
    next_due_at: datetime


def age_on(birth: date, day: date) -> int:
    """Whole years from ``birth`` to ``day``."""
    return day.year - birth.year - ((day.month, day.day) < (birth.month, birth.day))


def default_limit(settings: Settings, account: Account, now: datetime) -> int:
    """The default weekly limit: lower for players under 26 when the birth date is known."""
    birth = account.birth_date
    if birth is not None and age_on(birth, now.date()) < settings.young_age:
        return settings.young_weekly_deposit_limit
    return settings.weekly_deposit_limit


def _deposited_since(session: Session, account_id: int, since: datetime) -> int:
    total = session.scalar(select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
        LedgerEntry.book == WALLET, LedgerEntry.account_id == account_id,
        LedgerEntry.kind == ledger.DEPOSIT, LedgerEntry.created_at > since))
    return int(total or 0)


def limit_state(session: Session, settings: Settings, account: Account, now: datetime, *,
                apply_due: bool = False) -> LimitState:
    """The limit in force; with ``apply_due`` a pending increase whose time has come is made
    permanent (only in a write transaction)."""
    row = session.get(DepositLimit, account.id)
    default = default_limit(settings, account, now)
    limit, pending, pending_at = default, None, None
    if row is not None:
        limit, pending, pending_at = row.amount, row.pending_amount, row.pending_effective_at
        if pending is not None and pending_at is not None and pending_at <= now:
            limit, pending, pending_at = pending, None, None
            if apply_due:
                row.amount, row.pending_amount, row.pending_effective_at = limit, None, None
                row.updated_at = now
    return LimitState(weekly_deposit_limit=limit, default_limit=default,
                      deposited_last_7_days=_deposited_since(session, account.id, now - WEEK),
                      pending_limit=pending, pending_effective_at=pending_at)


def read_limits(db: Database, settings: Settings, principal: Principal) -> LimitState:
    """The player's limit state."""
    with db.read() as session:
        account = session.get(Account, principal.account_id)
        if account is None:
            raise NotFound("no such player", code="player_not_found")
        return limit_state(session, settings, account, utcnow())


def set_limit(db: Database, settings: Settings, principal: Principal, amount: int) -> LimitState:
    """Set the weekly deposit limit: lower at once, higher after the cooling-off delay."""
    now = utcnow()
    with db.write() as session:
        account = session.get(Account, principal.account_id)
        if account is None:
            raise NotFound("no such player", code="player_not_found")
        current = limit_state(session, settings, account, now, apply_due=True)
        row = session.get(DepositLimit, account.id)
        if row is None:
            row = DepositLimit(account_id=account.id, amount=current.weekly_deposit_limit,
                               updated_at=now)
            session.add(row)
        if amount <= current.weekly_deposit_limit:
            row.amount, row.pending_amount, row.pending_effective_at = amount, None, None
        else:
            row.pending_amount = amount
            row.pending_effective_at = now + timedelta(
                seconds=settings.limit_increase_delay_seconds)
        row.updated_at = now
        session.flush()
        return limit_state(session, settings, account, now)


def check_not_excluded(account: Account, now: datetime, action: str) -> None:
    """``Forbidden`` ``self_excluded`` while a self-exclusion runs."""
    check_exclusion(account.excluded_until, now, action)


def check_exclusion(excluded_until: datetime | None, now: datetime, action: str) -> None:
    """:func:`check_not_excluded` from the account's ``excluded_until`` alone."""
    if excluded_until is not None and excluded_until > now:
        raise Forbidden(f"self-excluded until {excluded_until.isoformat()}: "
                        f"{action} refused", code="self_excluded")


def check_deposit(session: Session, settings: Settings, account: Account, amount: int,
                  now: datetime) -> None:
    """Refuse a deposit that self-exclusion or the weekly limit forbids (wallet locked)."""
    check_not_excluded(account, now, "deposits are")
    state = limit_state(session, settings, account, now, apply_due=True)
    if amount > state.remaining:
        raise Forbidden(f"a deposit of {amount} cents exceeds the weekly deposit limit of "
                        f"{state.weekly_deposit_limit} cents ({state.remaining} cents left "
                        f"in the last 7 days)", code="deposit_limit_exceeded")


def self_exclude(db: Database, principal: Principal, days: int) -> datetime:
    """Exclude the player for ``days`` days from now (never shortens a running exclusion)."""
    now = utcnow()
    with db.write() as session:
        account = session.get(Account, principal.account_id)
        if account is None:
            raise NotFound("no such player", code="player_not_found")
        until = now + timedelta(days=days)
        if account.excluded_until is None or account.excluded_until < until:
            account.excluded_until = until
        return account.excluded_until


def exclusion(db: Database, principal: Principal) -> datetime | None:
    """When the player's self-exclusion ends (``None`` if none runs)."""
    with db.read() as session:
        account = session.get(Account, principal.account_id)
        until = account.excluded_until if account else None
    return until if until is not None and until > utcnow() else None


def reality_check(session: Session, settings: Settings, session_id: int,
                  now: datetime) -> RealityCheck:
    """The reality check of one log-in session."""
    token = session.get(SessionToken, session_id)
    if token is None:
        raise NotFound("no such session", code="session_not_found")
    return reality_check_of(settings, token.created_at, token.reality_check_at,
                            token.net_result, now)


def check_reality_acknowledged(check: RealityCheck) -> None:
    """``409 reality_check_due`` while the session's reality check waits to be acknowledged:
    play stops until the player has seen it (``POST /reality-check/acknowledge``)."""
    if check.due:
        raise Conflict("the reality check is due: acknowledge it (POST "
                       "/api/v1/reality-check/acknowledge) to play on",
                       code="reality_check_due")


def reality_check_of(settings: Settings, created_at: datetime, reality_check_at: datetime,
                     net_result: int, now: datetime) -> RealityCheck:
    """The reality check of a session with these fields."""
    interval = timedelta(seconds=settings.reality_check_seconds)
    next_due = reality_check_at + interval
    return RealityCheck(due=now >= next_due,
                        elapsed_seconds=int((now - created_at).total_seconds()),
                        net_result=net_result,
                        interval_seconds=settings.reality_check_seconds, next_due_at=next_due)


def read_reality_check(db: Database, settings: Settings, principal: Principal) -> RealityCheck:
    """:func:`reality_check` in its own transaction."""
    with db.read() as session:
        return reality_check(session, settings, principal.session_id, utcnow())


def acknowledge(db: Database, settings: Settings, principal: Principal) -> RealityCheck:
    """The player saw the reality check: the next one is due an interval from now."""
    now = utcnow()
    with db.write() as session:
        token = session.get(SessionToken, principal.session_id)
        if token is None:
            raise NotFound("no such session", code="session_not_found")
        token.reality_check_at = now
        session.flush()
        return reality_check(session, settings, principal.session_id, now)
