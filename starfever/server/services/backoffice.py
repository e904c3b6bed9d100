"""What the back office reads: players found by name, one player in full, rounds searched
across players, and the meters (per day and per bet class, the €€€ pool and its refills,
operator mode's pending credits). Every figure is a sum over stored rows (integer cents)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import (
    PLAYER,
    WALLET,
    Account,
    LedgerEntry,
    Round,
    SessionToken,
    Wallet,
    WalletCall,
)
from starfever.server.services import ledger, protection, support, unpaid
from starfever.server.services.errors import NotFound, Unprocessable, utcnow
from starfever.server.services.protection import LimitState
from starfever.server.settings import Settings
from starfever.server.spin.calls import CallKind, CallState

MAX_DAYS = 400
"""The longest span of days the daily meters sum at once."""


@dataclass(frozen=True, slots=True)
class PlayerLine:
    """A player found by a search."""

    username: str
    balance: int | None
    """``None`` in operator mode (the operator holds the balance)."""
    created_at: datetime
    excluded_until: datetime | None
    external_id: str | None
    currency: str | None = None
    """The wallet's currency, of ``balance``, the limits and the cashier lines (ADR 0076);
    ``None`` in operator mode (no wallet here)."""


@dataclass(frozen=True, slots=True)
class CashierLine:
    """A deposit or withdrawal of the player's wallet."""

    id: int
    kind: str
    amount: int
    balance_after: int | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PlayerTotals:
    """A player's rounds, bets and wins in one currency (a free round stakes nothing)."""

    currency: str
    rounds: int
    total_bet: int
    total_win: int


@dataclass(frozen=True, slots=True)
class PlayerFile:
    """One player in full, for the back office."""

    line: PlayerLine
    birth_date: date | None
    limits: LimitState | None
    """``None`` in operator mode (the operator's)."""
    play_started_at: datetime | None
    net_result: int
    rounds: int
    total_bet: int | None
    """The bets of every round where they are of one currency; ``None`` where the player
    played in several (operator mode: a launch per currency), never a sum of two."""
    total_win: int | None
    cashier: list[CashierLine]
    totals: list[PlayerTotals] = field(default_factory=list)
    """The rounds, bets and wins per currency, by code (ADR 0078)."""


def _excluded(until: datetime | None, now: datetime) -> datetime | None:
    return until if until is not None and until > now else None


def find_players(db: Database, text: str, limit: int, offset: int) -> list[PlayerLine]:
    """Players whose name (or operator player id) contains ``text``, by name."""
    query = (select(Account.username, Wallet.balance, Account.created_at,
                    Account.excluded_until, Account.external_id, Wallet.currency)
             .outerjoin(Wallet, Wallet.account_id == Account.id)
             .where(Account.role == PLAYER))
    if text:
        pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%") \
            .replace("_", "\\_") + "%"
        query = query.where(func.lower(Account.username).like(pattern, escape="\\")
                            | func.lower(func.coalesce(Account.external_id, ""))
                            .like(pattern, escape="\\"))
    query = query.order_by(Account.username).limit(limit).offset(offset)
    now = utcnow()
    with db.read() as session:
        return [PlayerLine(username=u, balance=b, created_at=c,
                           excluded_until=_excluded(e, now), external_id=x, currency=k)
                for u, b, c, e, x, k in session.execute(query)]


def _account(session: Session, username: str) -> Account:
    account = session.scalar(select(Account).where(Account.username == username,
                                                      Account.role == PLAYER))
    if account is None:
        raise NotFound(f"no player {username!r}", code="player_not_found")
    return account


def account_id(db: Database, username: str) -> int:
    """The id of the player ``username`` (``404 player_not_found``)."""
    with db.read() as session:
        return _account(session, username).id


def player_file(db: Database, settings: Settings, username: str, *,
                operator_mode: bool) -> PlayerFile:
    """Everything the back office shows of one player."""
    now = utcnow()
    with db.read() as session:
        account = _account(session, username)
        wallet = session.execute(select(Wallet.balance, Wallet.currency)
                                 .where(Wallet.account_id == account.id)).one_or_none()
        balance = None if wallet is None else int(wallet.balance)
        currency = None if wallet is None else str(wallet.currency)
        limits = None if operator_mode else protection.limit_state(session, settings, account,
                                                                   now)
        totals = [PlayerTotals(str(code or "EUR"), int(n), int(bet), int(win))
                  for code, n, bet, win in session.execute(
            select(Round.currency, func.count(), func.coalesce(func.sum(  # a free round
                       case((Round.grant_id.is_(None), Round.total_bet), else_=0)), 0),  # stakes 0
                   func.coalesce(func.sum(func.coalesce(Round.paid_win, Round.total_win)), 0))
            .where(Round.account_id == account.id).group_by(Round.currency)
            .order_by(Round.currency))]
        entries = session.scalars(
            select(LedgerEntry).where(LedgerEntry.book == WALLET,
                                      LedgerEntry.account_id == account.id,
                                      LedgerEntry.kind.in_((ledger.DEPOSIT, ledger.WITHDRAWAL)))
            .order_by(LedgerEntry.id.desc()).limit(50)).all()
        return PlayerFile(
            line=PlayerLine(username=account.username, balance=balance,
                            created_at=account.created_at,
                            excluded_until=_excluded(account.excluded_until, now),
                            external_id=account.external_id, currency=currency),
            birth_date=account.birth_date, limits=limits,
            play_started_at=account.play_started_at, net_result=account.net_result,
            rounds=sum(t.rounds for t in totals),
            total_bet=_one_currency(totals, "total_bet"),
            total_win=_one_currency(totals, "total_win"), totals=totals,
            cashier=[CashierLine(id=e.id, kind=e.kind, amount=e.amount,
                                 balance_after=e.balance_after, created_at=e.created_at)
                     for e in entries])


def _one_currency(totals: list[PlayerTotals], name: str) -> int | None:
    """The figure where the rounds are of one currency (0 with none); ``None`` with several."""
    if len(totals) > 1:
        return None
    return int(getattr(totals[0], name)) if totals else 0


@dataclass(frozen=True, slots=True)
class RoundFilter:
    """What a round search asks for (every part optional)."""

    username: str | None = None
    round_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    line_bet: int | None = None
    feature: str | None = None
    min_win: int | None = None
    before: int | None = None
    player_id: str | None = None
    """The operator's player id (``accounts.external_id``), operator mode."""
    transaction_id: str | None = None
    """Star Fever's id of one of the round's wallet calls."""
    operator_transaction_id: str | None = None
    """The operator's id of one of the round's wallet calls."""
    currency: str | None = None
    """Only rounds of this currency; ``min_win`` is in its minor units (ADR 0078)."""


def search_rounds(db: Database, wanted: RoundFilter,
                  limit: int) -> list[tuple[Round, str, str | None]]:
    """Rounds matching ``wanted``, newest first, with their players' names and operator
    player ids."""
    query = (select(Round, Account.username, Account.external_id)
             .join(Account, Account.id == Round.account_id))
    if wanted.username is not None:
        query = query.where(Account.username == wanted.username)
    if wanted.round_id is not None:
        query = query.where(Round.id == wanted.round_id)
    if wanted.since is not None:
        query = query.where(Round.created_at >= wanted.since)
    if wanted.until is not None:
        query = query.where(Round.created_at < wanted.until)
    if wanted.line_bet is not None:
        query = query.where(Round.line_bet == wanted.line_bet)
    if wanted.feature == "none":
        query = query.where(Round.feature.is_(None))
    elif wanted.feature is not None:
        query = query.where(Round.feature == wanted.feature)
    if wanted.currency is not None:
        query = query.where(Round.currency == wanted.currency)
    if wanted.min_win is not None:
        query = query.where(Round.total_win >= wanted.min_win)
    if wanted.before is not None:
        query = query.where(Round.id < wanted.before)
    if wanted.player_id is not None:
        query = query.where(Account.external_id == wanted.player_id)
    with db.read() as session:
        if wanted.transaction_id is not None or wanted.operator_transaction_id is not None:
            named = support.rounds_of_ids(session, wanted.transaction_id,
                                          wanted.operator_transaction_id)
            query = query.where(Round.id.in_(sorted(named)))
        return [(r, u, x) for r, u, x in
                session.execute(query.order_by(Round.id.desc()).limit(limit))]


def get_round(db: Database, round_id: int) -> tuple[Round, str, str | None]:
    """Any player's round with the player's name and, in operator mode, the brand its
    session's launch named (``None``: none) (``404 round_not_found``)."""
    with db.read() as session:
        found = session.execute(select(Round, Account.username, SessionToken.brand)
                                .join(Account, Account.id == Round.account_id)
                                .outerjoin(SessionToken, SessionToken.id == Round.session_id)
                                .where(Round.id == round_id)).first()
    if found is None:
        raise NotFound(f"no round {round_id}", code="round_not_found")
    return found[0], found[1], found[2]


@dataclass
class DayLine:
    """The meters of one UTC day and bet class (``line_bet`` None: every class)."""

    day: str
    line_bet: int | None
    rounds: int = 0
    bets: int = 0
    wins: int = 0

    @property
    def ggr(self) -> int:
        """Gross gaming revenue: bets - wins."""
        return self.bets - self.wins


def day_range(since: date | None, until: date | None) -> tuple[date, date]:
    """``[since, until]`` (UTC days; default the last 30 days up to today), checked."""
    last = until or utcnow().date()
    if last >= date.max:
        raise Unprocessable("until must be before 9999-12-31", code="bad_period")
    try:
        first = since or last - timedelta(days=29)
    except OverflowError:
        raise Unprocessable("until is too early", code="bad_period") from None
    if first > last:
        raise Unprocessable("since must not be after until", code="bad_period")
    if (last - first).days >= MAX_DAYS:
        raise Unprocessable(f"at most {MAX_DAYS} days at once", code="bad_period")
    return first, last


def daily(db: Database, first: date, last: date, currency: str = "EUR") -> list[DayLine]:
    """Per UTC day and bet class, of ``currency``'s rounds (minor units of it, ADR 0076):
    rounds, bets, paid wins of paid rounds (test rounds and free
    rounds left out, ADR 0064: GGR is of stakes taken; a win the operator's wallet refused is
    not counted, unpaid or settled manually), newest day first,
    each day's lines followed by its total."""
    start_at = datetime(first.year, first.month, first.day, tzinfo=UTC)
    end_at = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1)
    day = func.date(Round.created_at)
    refused = unpaid.refused_rounds().subquery()  # never paid by the wallet: no win (rule 5)
    paid_win = case((refused.c.round_id.is_not(None), 0), else_=Round.total_win)
    query = (select(day, Round.line_bet, func.count(), func.sum(Round.total_bet),
                    func.sum(paid_win))
             .select_from(Round.__table__.outerjoin(refused, refused.c.round_id == Round.id))
             .where(Round.created_at >= start_at, Round.created_at < end_at,
                    Round.test.is_(False), Round.grant_id.is_(None),
                    Round.currency == currency)
             .group_by(day, Round.line_bet).order_by(day.desc(), Round.line_bet))
    lines: list[DayLine] = []
    totals: dict[str, DayLine] = {}
    with db.read() as session:
        for d, bet, n, bets, wins in session.execute(query):
            name = str(d)[:10]
            line = DayLine(name, int(bet), int(n), int(bets or 0), int(wins or 0))
            total = totals.get(name)
            if total is None:
                total = totals[name] = DayLine(name, None)
            total.rounds += line.rounds
            total.bets += line.bets
            total.wins += line.wins
            lines.append(line)
    ordered: list[DayLine] = []
    for name in sorted(totals, reverse=True):
        ordered.extend(line for line in lines if line.day == name)
        ordered.append(totals[name])
    return ordered


@dataclass(frozen=True, slots=True)
class Refill:
    """A round that refilled the €€€ pool (the operator's money)."""

    round_id: int
    created_at: datetime
    amount: int
    pool_after: int


def refills(db: Database, limit: int = 50, currency: str = "EUR") -> list[Refill]:
    """The newest refills of ``currency``'s pool (from its rounds)."""
    with db.read() as session:
        rows = session.execute(select(Round.id, Round.created_at, Round.pool_refill,
                                      Round.pool_after).where(Round.pool_refill > 0,
                                                              Round.currency == currency)
                               .order_by(Round.id.desc()).limit(limit)).all()
    return [Refill(round_id=i, created_at=c, amount=a, pool_after=p) for i, c, a, p in rows]


@dataclass
class PendingCredits:
    """Operator mode: credits the operator's wallet has not acknowledged yet."""

    count: int = 0
    amount: int = 0
    oldest: datetime | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)


def pending_credits(db: Database, limit: int = 50,
                    currency: str | None = None) -> PendingCredits:
    """The credits still pending (a played round's win not yet acknowledged): of
    ``currency`` (``None``: of every currency)."""
    pending = (WalletCall.kind == CallKind.CREDIT, WalletCall.status == CallState.PENDING,
               *(() if currency is None else (WalletCall.currency == currency,)))
    with db.read() as session:
        n, amount, oldest = session.execute(
            select(func.count(), func.coalesce(func.sum(WalletCall.amount), 0),
                   func.min(WalletCall.created_at)).where(*pending)).one()
        rows = session.execute(
            select(WalletCall.transaction_id, WalletCall.round_id, WalletCall.amount,
                   WalletCall.attempts, WalletCall.created_at, Account.username,
                   Account.external_id)
            .join(Account, Account.id == WalletCall.account_id).where(*pending)
            .order_by(WalletCall.id).limit(limit)).all()
    return PendingCredits(count=int(n), amount=int(amount), oldest=oldest, calls=[
        {"transaction_id": t, "round_id": r, "amount": a, "attempts": k, "created_at": c,
         "username": u, "external_id": x} for t, r, a, k, c, u, x in rows])


__all__ = ["CashierLine", "DayLine", "PendingCredits", "PlayerFile", "PlayerLine", "Refill",
           "RoundFilter", "account_id", "daily", "day_range", "find_players", "get_round",
           "pending_credits", "player_file", "refills", "search_rounds"]
