"""The player protections a market profile requires beyond pacing and the stake cap (ADR 0073,
ADR 0075, ADR 0077): one session at a time per player, the panic button, the monthly deposit
limit, the young adults' stake cap.

Each reads the running market (``settings.market``) and does nothing where the profile does not
ask for it. Each acts inside a transaction that holds the player's account row (or wallet row)
locked, so two worker processes cannot both pass a rule: the second waits for the first's
commit and then sees what it wrote.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from starfever.markets import MarketProfile, load_market
from starfever.server.db import Database
from starfever.server.models import WALLET, Account, LedgerEntry, SessionToken
from starfever.server.services import events, ledger
from starfever.server.services.errors import Forbidden, NotFound, Unprocessable, utcnow
from starfever.server.services.principal import SESSION_PANIC, SESSION_REPLACED, Principal
from starfever.server.services.protection_rules import age_on
from starfever.server.settings import Settings

PANIC_EXCLUSION = timedelta(hours=24)
"""How long the panic button excludes the player (GlüStV 2021 § 6a: 24 hours)."""


def market_of(settings: Settings) -> MarketProfile:
    """The running market's profile."""
    return load_market(settings.market)


def end_other_sessions(session: Session, settings: Settings, account_id: int,
                       now: datetime) -> int:
    """In a market with one session per player, end the player's live sessions (``replaced``)
    before a new one is added in the same transaction; their next request is refused with
    ``401 session_replaced``. The caller holds the account row locked (a log-in and a launch
    both do), so two concurrent log-ins of one player end up with one live session. Returns how
    many were ended."""
    if not market_of(settings).one_session_per_player:
        return 0
    ended = session.execute(update(SessionToken).where(
        SessionToken.account_id == account_id, SessionToken.revoked_at.is_(None),
        SessionToken.expires_at > now)
        .values(revoked_at=now, ended_because=SESSION_REPLACED)
        .execution_options(synchronize_session=False))
    return int(getattr(ended, "rowcount", 0) or 0)


def press_panic_button(db: Database, settings: Settings, principal: Principal, *,
                       operator_mode: bool) -> datetime:
    """The panic button: exclude the player for :data:`PANIC_EXCLUSION` from now (never
    shortening a longer exclusion: one conditional UPDATE, as ``protection.self_exclude``);
    returns when the exclusion ends. In ledger mode it is a self-exclusion (bets and deposits
    refused with ``self_excluded``), logged as one. In operator mode the operator keeps the
    player's account: the server logs a ``panic_button`` event for the operator (its event
    feed), ends this session (``panic_button_pressed``) and refuses a new launch of the player
    until the time is up (ADR 0075). ``404 panic_button_not_offered`` in a market without one."""
    if not market_of(settings).panic_button:
        raise NotFound("this market offers no panic button", code="panic_button_not_offered")
    now = utcnow()
    until = now + PANIC_EXCLUSION
    with db.write() as session:
        session.execute(update(Account).where(
            Account.id == principal.account_id,
            or_(Account.excluded_until.is_(None), Account.excluded_until < until))
            .values(excluded_until=until).execution_options(synchronize_session=False))
        stored = session.scalar(select(Account.excluded_until)
                                .where(Account.id == principal.account_id))
        if stored is None:
            raise NotFound("no such player", code="player_not_found")
        detail = {"player": principal.username, "hours": 24, "until": stored,
                  "extended": stored == until, "panic_button": True}
        if operator_mode:
            external = session.scalar(select(Account.external_id)
                                      .where(Account.id == principal.account_id))
            session.execute(update(SessionToken).where(
                SessionToken.id == principal.session_id, SessionToken.revoked_at.is_(None))
                .values(revoked_at=now, ended_because=SESSION_PANIC)
                .execution_options(synchronize_session=False))
            events.record(session, "panic_button", actor=principal.username,
                          detail={**detail, "player_id": external})
        else:
            events.record(session, "self_exclusion", actor=principal.username, detail=detail)
        return stored


def check_not_panicked(account: Account, now: datetime) -> None:
    """Operator mode: ``403 self_excluded`` for a launch of a player whose panic button's
    exclusion still runs (the operator's wallet would not know of it)."""
    until = account.excluded_until
    if until is not None and until > now:
        when = until.strftime("%Y-%m-%d %H:%M")
        raise Forbidden(f"the player pressed the panic button: no play until {when} UTC",
                        code="self_excluded")


def month_start(now: datetime) -> datetime:
    """The first instant of ``now``'s calendar month (the server's clock is UTC)."""
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def check_monthly_deposit(session: Session, settings: Settings, account_id: int, amount: int,
                          now: datetime) -> None:
    """Ledger mode, in a market with a monthly deposit limit: ``422
    monthly_deposit_limit_exceeded`` for a deposit that would take the player's deposits of
    this calendar month (UTC) above it. The caller holds the player's wallet row locked, so two
    concurrent deposits cannot both pass."""
    limit = market_of(settings).monthly_deposit_limit_cents
    if limit is None:
        return
    since = month_start(now)
    deposited = int(session.scalar(select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
        LedgerEntry.book == WALLET, LedgerEntry.account_id == account_id,
        LedgerEntry.kind == ledger.DEPOSIT, LedgerEntry.created_at >= since)) or 0)
    if deposited + amount > limit:
        raise Unprocessable(f"a deposit of {amount} cents exceeds the market's monthly deposit "
                            f"limit of {limit} cents ({max(0, limit - deposited)} cents left "
                            "this calendar month)", code="monthly_deposit_limit_exceeded")


def stake_cap(market: MarketProfile, birth: date | None, today: date) -> int:
    """The largest total bet of one round for a player born on ``birth`` (``None``: not known,
    which takes the young adults' cap where the market has one)."""
    return market.stake_cap_for(None if birth is None else age_on(birth, today))


def player_stake_cap(db: Database, market: MarketProfile, account_id: int) -> int:
    """The player's stake cap in ``market``; the birth date is read only where the market has
    an age band (the account's: registered in ledger mode, the newest launch's in operator
    mode, which a market with an age band requires)."""
    if market.young_adult_stake_cap is None:
        return market.max_stake_cents
    with db.read() as session:
        birth = session.scalar(select(Account.birth_date).where(Account.id == account_id))
    return stake_cap(market, birth, utcnow().date())


def check_stake(market: MarketProfile, total_bet: int) -> bool:
    """``422 stake_above_market_limit`` for a total bet above the market's cap; whether the
    player's age must be checked too (:func:`check_age_stake`: a stake above the young adults'
    cap of a market with one). No database: a stake within the lower cap costs no read."""
    if total_bet > market.max_stake_cents:
        raise Unprocessable(f"the market {market.name!r} allows a stake of at most "
                            f"{market.max_stake_cents} cents a round",
                            code="stake_above_market_limit")
    young = market.young_adult_stake_cap
    return young is not None and total_bet > young.max_stake_cents


def check_age_stake(db: Database, market: MarketProfile, account_id: int,
                    total_bet: int) -> None:
    """``422 stake_above_age_limit`` for a total bet above the young adults' cap of a player
    under its age (or of unknown age). Nothing is debited: the caller checks before the bet.
    Every worker reads the birth date from the database, so each refuses alike."""
    cap = player_stake_cap(db, market, account_id)
    if total_bet > cap and market.young_adult_stake_cap is not None:
        raise Unprocessable(f"the market {market.name!r} allows players under "
                            f"{market.young_adult_stake_cap.below_age} a stake of at most "
                            f"{cap} cents a round", code="stake_above_age_limit")


def check_launch_birth_date(market: MarketProfile, birth: date | None, *, real: bool) -> None:
    """Operator mode: ``422 birth_date_required`` for a real-money launch without the
    ``birth_date`` in a market whose stake cap depends on the player's age (OPERATOR-WALLET.md,
    "Launching the game"); a demo launch stakes nothing and needs none."""
    if real and market.young_adult_stake_cap is not None and birth is None:
        raise Unprocessable(f"the market {market.name!r} caps the stake of players under "
                            f"{market.young_adult_stake_cap.below_age}: a launch must carry the "
                            "player's birth_date", code="birth_date_required")


__all__ = ["PANIC_EXCLUSION", "check_age_stake", "check_launch_birth_date",
           "check_monthly_deposit",
           "check_not_panicked", "check_stake", "end_other_sessions", "market_of",
           "month_start", "player_stake_cap", "press_panic_button", "stake_cap"]
