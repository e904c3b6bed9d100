"""Player protection: weekly deposit limits, the reality check, self-exclusion.

- Deposit limit: deposits over the last 7 days (rolling) may not exceed the limit. Default
  EUR 400, EUR 200 for players under 26 whose birth date is known. A player may set their own:
  a decrease applies at once, an increase only after a cooling-off delay (72 hours).
- Reality check: every N minutes of play the responses say it is due, with the time played
  and the net result of the play period; until the player acknowledges it, spins are refused
  (``409 reality_check_due``), so play pauses on it. The clock is the player's, across all of
  their sessions: a log-in does not restart it (:func:`start_play_period`).
- Self-exclusion: for a period; refuses bets and deposits. It can be extended, never shortened
  (one conditional UPDATE, so a concurrent shorter request cannot win).
- Age: no deposit and no bet without a known birth date of 18 years or more (RULES.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import WALLET, Account, DepositLimit, LedgerEntry
from starfever.server.services import events, ledger, market_rules
from starfever.server.services.auth import Principal
from starfever.server.services.errors import Forbidden, NotFound, utcnow
from starfever.server.services.protection_rules import (
    RealityCheck,
    age_on,
    check_adult,
    check_exclusion,
    reality_check_of,
)
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
        # the account row's lock serializes one player's limit changes: two first PUTs can
        # no longer both insert the deposit_limits row (a duplicate key, answered 500)
        account = session.scalar(select(Account).where(Account.id == principal.account_id)
                                 .with_for_update())
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
        state = limit_state(session, settings, account, now)
        events.record(session, "limit_changed", actor=principal.username, detail={
            "player": account.username, "previous": current.weekly_deposit_limit,
            "requested": amount, "in_force": state.weekly_deposit_limit,
            "pending_effective_at": state.pending_effective_at})
        return state


def check_not_excluded(account: Account, now: datetime, action: str) -> None:
    """``Forbidden`` ``self_excluded`` while a self-exclusion runs."""
    check_exclusion(account.excluded_until, now, action)


def check_deposit(session: Session, settings: Settings, account: Account, amount: int,
                  now: datetime) -> None:
    """Refuse a deposit that self-exclusion, the player's age, the market's monthly limit
    (``market_rules``) or the weekly limit forbids (wallet locked)."""
    check_not_excluded(account, now, "deposits are")
    check_adult(account.birth_date, now, "deposits are")
    state = limit_state(session, settings, account, now, apply_due=True)
    market_rules.check_monthly_deposit(session, settings, account.id, amount, now)
    if amount > state.remaining:
        raise Forbidden(f"a deposit of {amount} cents exceeds the weekly deposit limit of "
                        f"{state.weekly_deposit_limit} cents ({state.remaining} cents left "
                        f"in the last 7 days)", code="deposit_limit_exceeded")


def self_exclude(db: Database, principal: Principal, days: int, *,
                 actor: str | None = None) -> datetime:
    """Exclude the player for ``days`` days from now (never shortens a running exclusion);
    ``actor``: the operator who recorded it for the player (the event log's actor).

    One conditional UPDATE: the database compares with the value as it is when the row is
    written (PostgreSQL re-checks the condition after waiting for a concurrent writer's row
    lock), so of two concurrent requests the longer always stays; a read-then-write let the
    last writer win and shortened a 10-year exclusion to one day."""
    now = utcnow()
    until = now + timedelta(days=days)
    with db.write() as session:
        session.execute(update(Account).where(
            Account.id == principal.account_id,
            or_(Account.excluded_until.is_(None), Account.excluded_until < until))
            .values(excluded_until=until).execution_options(synchronize_session=False))
        stored = session.scalar(select(Account.excluded_until)
                                .where(Account.id == principal.account_id))
        if stored is None:
            raise NotFound("no such player", code="player_not_found")
        events.record(session, "self_exclusion", actor=actor or principal.username, detail={
            "player": principal.username, "days": days, "until": stored,
            "extended": stored == until})
        return stored


def exclusion(db: Database, principal: Principal) -> datetime | None:
    """When the player's self-exclusion ends (``None`` if none runs)."""
    with db.read() as session:
        account = session.get(Account, principal.account_id)
        until = account.excluded_until if account else None
    return until if until is not None and until > utcnow() else None


def reality_check(session: Session, settings: Settings, account_id: int,
                  now: datetime) -> RealityCheck:
    """The reality check of a player (one clock across all of the player's sessions)."""
    account = session.get(Account, account_id)
    if account is None:
        raise NotFound("no such player", code="player_not_found")
    return reality_check_of(settings, account.play_started_at, account.reality_check_at,
                            account.net_result, now, account.reality_check_seconds)


def read_reality_check(db: Database, settings: Settings, principal: Principal) -> RealityCheck:
    """:func:`reality_check` in its own transaction."""
    with db.read() as session:
        return reality_check(session, settings, principal.account_id, utcnow())


def acknowledge(db: Database, settings: Settings, principal: Principal) -> RealityCheck:
    """The player saw the reality check: when one is due, the next is due an interval from now
    (in every session of the player). When none is due nothing changes and the check is
    answered as it stands: an acknowledgement sent early (or twice) must not move the clock,
    or a client acknowledging ahead of time would never be stopped by it."""
    now = utcnow()
    with db.write() as session:
        # the account row's lock: of two acknowledgements of one due check, the second sees
        # the first's clock and changes nothing
        account = session.scalar(select(Account).where(Account.id == principal.account_id)
                                 .with_for_update())
        if account is None:
            raise NotFound("no such player", code="player_not_found")
        check = reality_check_of(settings, account.play_started_at, account.reality_check_at,
                                 account.net_result, now, account.reality_check_seconds)
        if not check.due and account.reality_check_at is not None:
            return check
        account.reality_check_at = now  # due (or a clock never started: it starts now)
        return reality_check_of(settings, account.play_started_at, now, account.net_result,
                                now, account.reality_check_seconds)

