"""Operator reports: ``starfever report daily|monthly`` — rounds, bets, wins, gross gaming
revenue and return per bet class and in total over a UTC day or month, the €€€ pool's
movements and the cashier's, straight from the database (integer cents; test-mode rounds left
out unless asked for). A report is of one currency (``--currency``, default EUR; ADR 0076):
its rounds, its pool, the cashier movements of its wallets, in its minor units. It names the
markets its rounds were played in, with the figures of each (``by_market``; ADR 0078): a
round stored before the market was recorded (migration 0028) is under ``None``, "not recorded".

Every figure is a sum over the stored rows of the period, so the report's totals are the
database's: GGR = bets - wins, where wins include €€€ payouts; the pool's contributions come
out of the bets and its refills are the operator's own money on top.

In operator mode a win whose credit the operator's wallet refused (OPERATOR-WALLET.md rule 5,
``services.unpaid``) was never paid: it is not in ``wins`` nor in GGR, but apart in
``unpaid_rounds`` and ``unpaid_wins`` (its round's bet stays in ``bets``: it was debited); one
settled manually outside the wallet (ADR 0061) is apart in ``settled_rounds`` and
``settled_wins``, never in wins either: the wallet never paid it. The pool's figures are the
pool's own movements, paid or not.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, func, select

from starfever.engine.errors import InputError
from starfever.server.db import Database, open_existing
from starfever.server.models import (
    WALLET,
    FreeRoundCampaign,
    FreeRoundGrant,
    LedgerEntry,
    Round,
    SessionToken,
    Wallet,
)
from starfever.server.services import unpaid
from starfever.server.services.ledger import DEPOSIT, WITHDRAWAL
from starfever.server.settings import DEFAULT_DATABASE_URL, ENV_NAMES

PERIODS = ("daily", "monthly")
FORMATS = ("text", "json", "csv")
BREAKDOWNS = ("line-bet", "brand")
"""What the table of the text and CSV forms has a row for (``--by``): each bet class, or each
brand the operator's launches named (operator mode; ADR 0081). The JSON form has both."""
NO_BRAND = "(none)"
"""The brand row of rounds whose launch named none (and of ledger mode): no brand has
parentheses (a launch's brand is 1-64 of ``A-Z a-z 0-9 _ . : -``)."""
TOTAL_BRAND = "(total)"
"""The total row's name in a table by brand."""


@dataclass(frozen=True, slots=True)
class Period:
    """A half-open UTC interval ``[start, end)`` and its name."""

    kind: str
    label: str
    start: datetime
    end: datetime


def period_of(kind: str, text: str) -> Period:
    """``daily`` and a day, ``YYYY-MM-DD``, or ``monthly`` and a month, ``YYYY-MM`` (a day
    for a month, or a month for a day, is refused: which one was meant is not known)."""
    if kind not in PERIODS:
        raise InputError(f"report must be one of {', '.join(PERIODS)}, got {kind!r}")
    pattern = r"\d{4}-\d{2}-\d{2}" if kind == "daily" else r"\d{4}-\d{2}"
    if not re.fullmatch(pattern, text):
        raise InputError(f"--date {text!r} must be " +
                         ("YYYY-MM-DD (a day) for a daily report" if kind == "daily"
                          else "YYYY-MM (a month) for a monthly report"))
    try:
        day = date.fromisoformat(text if len(text) == 10 else f"{text}-01")
    except ValueError:
        raise InputError(f"--date {text!r} is not a calendar date") from None
    try:
        if kind == "daily":
            start = datetime(day.year, day.month, day.day, tzinfo=UTC)
            return Period(kind, day.isoformat(), start, start + timedelta(days=1))
        start = datetime(day.year, day.month, 1, tzinfo=UTC)
        following = datetime(day.year + day.month // 12, day.month % 12 + 1, 1, tzinfo=UTC)
    except (OverflowError, ValueError):  # the period would end after the year 9999
        raise InputError(f"--date {text!r} is out of range (the last is in 9999-12, "
                         "and its period must end before the year 10000)") from None
    return Period(kind, f"{day.year:04d}-{day.month:02d}", start, following)


@dataclass(frozen=True, slots=True)
class Line:
    """The figures of one bet class (``line_bet`` cents), or of all (``line_bet`` None)."""

    line_bet: int | None
    rounds: int
    bets: int
    wins: int
    jackpot_wins: int
    ggr: int
    rtp: float | None
    """wins / bets (None without bets)."""
    contributions: int
    refills: int
    jackpot_hits: int
    star_wild_rounds: int
    hold_and_cash_rounds: int
    unpaid_rounds: int = 0
    """Operator mode: rounds whose credit the operator's wallet refused (rule 5)."""
    unpaid_wins: int = 0
    """Their wins: never in ``wins`` or ``ggr`` until paid."""
    free_rounds: int = 0
    """Free rounds (ADR 0064): in ``rounds`` and the pool's figures, never in ``bets``,
    ``wins``, ``ggr`` or ``rtp`` (only paid stakes count); their cost is
    :attr:`Report.free_round_costs`."""
    free_round_wins: int = 0
    """What the free rounds paid (the promotion's cost besides the €€€ funding)."""
    settled_rounds: int = 0
    """Operator mode: refused rounds settled manually outside the wallet (two operators,
    ADR 0061)."""
    settled_wins: int = 0
    """Their wins: the wallet never paid them, so they are not in ``wins`` or ``ggr``."""


@dataclass(frozen=True, slots=True)
class CampaignCost:
    """What one campaign's free rounds (``campaign`` None: the grants made alone) cost in the
    period: their winnings paid and the €€€ contributions the operator funded."""

    campaign: str | None
    rounds_played: int
    winnings: int
    jackpot_funding: int
    withheld: int
    """Won above a grant's cap, not paid (not a cost)."""

    @property
    def cost(self) -> int:
        return self.winnings + self.jackpot_funding


@dataclass(frozen=True, slots=True)
class Report:
    """One period's report."""

    period: Period
    by_line_bet: tuple[Line, ...]
    total: Line
    pool_start: int | None
    """The pool before the period's first round, test rounds included (None without rounds):
    start + contributions - jackpot wins + refills = end when the period has no test rounds
    or they are included."""
    pool_end: int | None
    deposits: int
    withdrawals: int
    include_test: bool
    by_brand: tuple[tuple[str | None, Line], ...] = ()
    """Operator mode: the figures per ``brand`` its sessions' launches named (``None``: none
    named, or ledger mode), by brand; every round is in exactly one."""
    free_round_costs: tuple[CampaignCost, ...] = ()
    currency: str = "EUR"
    """The currency of every figure (minor units): its rounds, pool and wallets only."""
    by_market: tuple[tuple[str | None, Line], ...] = ()
    """The figures per market its rounds were played in (``None``: not recorded, a round
    from before migration 0028), by market; every round is in exactly one."""

    @property
    def markets(self) -> tuple[str | None, ...]:
        """The markets of the period's rounds (``None``: not recorded)."""
        return tuple(market for market, _ in self.by_market)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (times as ISO 8601)."""
        return {
            "period": {"kind": self.period.kind, "label": self.period.label,
                       "start": self.period.start.isoformat(),
                       "end": self.period.end.isoformat()},
            "by_line_bet": [asdict(line) for line in self.by_line_bet],
            "total": asdict(self.total),
            "pool": {"start": self.pool_start, "end": self.pool_end,
                     "contributions": self.total.contributions,
                     "jackpot_wins": self.total.jackpot_wins, "refills": self.total.refills},
            "cashier": {"deposits": self.deposits, "withdrawals": self.withdrawals},
            "include_test": self.include_test,
            "by_brand": [{**asdict(line), "brand": brand} for brand, line in self.by_brand],
            "free_rounds": [{**asdict(c), "cost": c.cost} for c in self.free_round_costs],
            "currency": self.currency,
            "markets": list(self.markets),
            "by_market": [{**asdict(line), "market": market}
                          for market, line in self.by_market],
        }


def _line(line_bet: int | None, row: Any) -> Line:
    bets = int(row.bets or 0)
    wins = int(row.wins or 0) - int(row.unpaid_wins or 0) - int(row.settled_wins or 0)
    return Line(line_bet=line_bet, rounds=int(row.rounds or 0), bets=bets, wins=wins,
                jackpot_wins=int(row.jackpot_wins or 0), ggr=bets - wins,
                rtp=round(wins / bets, 6) if bets else None,
                contributions=int(row.contributions or 0), refills=int(row.refills or 0),
                jackpot_hits=int(row.jackpot_hits or 0),
                star_wild_rounds=int(row.star_wild or 0),
                hold_and_cash_rounds=int(row.hold_and_cash or 0),
                unpaid_rounds=int(row.unpaid_rounds or 0),
                unpaid_wins=int(row.unpaid_wins or 0),
                free_rounds=int(row.free_rounds or 0),
                free_round_wins=int(row.free_round_wins or 0),
                settled_rounds=int(row.settled_rounds or 0),
                settled_wins=int(row.settled_wins or 0))


def build_report(db: Database, period: Period, *, include_test: bool = False,
                 currency: str = "EUR") -> Report:
    """Sum the period's rounds in ``currency`` per bet class, and its pool's and its wallets'
    cashier movements."""
    in_period = and_(Round.created_at >= period.start, Round.created_at < period.end,
                     Round.currency == currency)
    refused = unpaid.refused_rounds().subquery()  # never paid by the wallet (rule 5)
    is_settled = and_(refused.c.round_id.is_not(None), refused.c.settled)
    is_unpaid = and_(refused.c.round_id.is_not(None), ~refused.c.settled)
    if not include_test:
        in_period = and_(in_period, Round.test.is_(False))
    paid = Round.grant_id.is_(None)
    figures = (
        func.count(Round.id).label("rounds"),
        func.sum(case((paid, Round.total_bet), else_=0)).label("bets"),
        func.sum(case((paid, Round.total_win), else_=0)).label("wins"),
        func.sum(Round.progressive_win).label("jackpot_wins"),
        func.sum(Round.contribution).label("contributions"),
        func.sum(Round.pool_refill).label("refills"),
        func.sum(case((Round.progressive_win > 0, 1), else_=0)).label("jackpot_hits"),
        func.sum(case((Round.feature == "star_wild", 1), else_=0)).label("star_wild"),
        func.sum(case((Round.feature == "hold_and_cash", 1), else_=0)).label("hold_and_cash"),
        func.sum(case((and_(is_unpaid, paid), 1), else_=0)).label("unpaid_rounds"),
        func.sum(case((and_(is_unpaid, paid), Round.total_win), else_=0)).label("unpaid_wins"),
        func.sum(case((and_(is_settled, paid), 1), else_=0)).label("settled_rounds"),
        func.sum(case((and_(is_settled, paid), Round.total_win), else_=0)).label("settled_wins"),
        func.sum(case((paid, 0), else_=1)).label("free_rounds"),
        func.sum(func.coalesce(Round.paid_win, 0)).label("free_round_wins"),
    )
    rounds = Round.__table__.outerjoin(refused, refused.c.round_id == Round.id)
    with db.read() as session:
        rows = session.execute(select(Round.line_bet, *figures).select_from(rounds)
                               .where(in_period).group_by(Round.line_bet)
                               .order_by(Round.line_bet)).all()
        total = session.execute(select(*figures).select_from(rounds).where(in_period)).one()
        branded = rounds.outerjoin(SessionToken.__table__, SessionToken.id == Round.session_id)
        brands = session.execute(select(SessionToken.brand, *figures).select_from(branded)
                                 .where(in_period).group_by(SessionToken.brand)
                                 .order_by(SessionToken.brand)).all()
        markets = session.execute(select(Round.market, *figures).select_from(rounds)
                                  .where(in_period).group_by(Round.market)
                                  .order_by(Round.market.asc().nulls_first())).all()
        # the pool's own states, over every round (test rounds play the same pool); a
        # round's pool_before is after its own contribution
        any_round = and_(Round.created_at >= period.start, Round.created_at < period.end,
                         Round.currency == currency)
        first = session.scalar(select(Round.pool_before - Round.contribution)
                               .where(any_round).order_by(Round.id).limit(1))
        last = session.scalar(select(Round.pool_after).where(any_round)
                              .order_by(Round.id.desc()).limit(1))
        cashier = dict(session.execute(
            select(LedgerEntry.kind, func.sum(LedgerEntry.amount))
            .join(Wallet, Wallet.account_id == LedgerEntry.account_id)
            .where(LedgerEntry.book == WALLET, LedgerEntry.kind.in_((DEPOSIT, WITHDRAWAL)),
                   Wallet.currency == currency,
                   LedgerEntry.created_at >= period.start, LedgerEntry.created_at < period.end)
            .group_by(LedgerEntry.kind)).all())
        costs = session.execute(
            select(FreeRoundCampaign.operator_id, func.count(Round.id),
                   func.coalesce(func.sum(Round.paid_win), 0),
                   func.coalesce(func.sum(Round.contribution), 0),
                   func.coalesce(func.sum(Round.total_win - Round.paid_win), 0))
            .select_from(Round).join(FreeRoundGrant, FreeRoundGrant.id == Round.grant_id)
            .outerjoin(FreeRoundCampaign, FreeRoundCampaign.id == FreeRoundGrant.campaign_id)
            .where(in_period).group_by(FreeRoundCampaign.operator_id)
            .order_by(FreeRoundCampaign.operator_id)).all()
    return Report(period=period, by_line_bet=tuple(_line(int(r.line_bet), r) for r in rows),
                  total=_line(None, total), pool_start=first, pool_end=last,
                  deposits=int(cashier.get(DEPOSIT) or 0),
                  withdrawals=-int(cashier.get(WITHDRAWAL) or 0), include_test=include_test,
                  by_brand=tuple((b.brand, _line(None, b)) for b in brands),
                  free_round_costs=tuple(CampaignCost(c, int(n), int(w or 0), int(f), int(h))
                                         for c, n, w, f, h in costs), currency=currency,
                  by_market=tuple((m.market, _line(None, m)) for m in markets))


CSV_FIELDS = ("line_bet", "rounds", "bets", "wins", "jackpot_wins", "ggr", "rtp",
              "contributions", "refills", "jackpot_hits", "star_wild_rounds",
              "hold_and_cash_rounds", "unpaid_rounds", "unpaid_wins", "free_rounds",
              "free_round_wins", "settled_rounds", "settled_wins")


def _rows(report: Report, by: str) -> list[tuple[str, Line]]:
    """The table's rows, each with its name: per bet class (``total`` last), or per brand
    (:data:`NO_BRAND` for none, :data:`TOTAL_BRAND` last)."""
    if by == "brand":
        return [*((brand or NO_BRAND, line) for brand, line in report.by_brand),
                (TOTAL_BRAND, report.total)]
    return [*((str(line.line_bet), line) for line in report.by_line_bet),
            ("total", report.total)]


UNRECORDED = "unrecorded"
"""How the CSV and text forms name the market of rounds stored before it was recorded."""


def market_names(report: Report) -> str:
    """The period's markets as one field: ``at``, ``at+uk``, ``unrecorded+at``; ``-`` for
    none (a period without rounds)."""
    return "+".join(m or UNRECORDED for m in report.markets) or "-"


def as_csv(report: Report, by: str = "line-bet") -> str:
    """One row per bet class and a ``total`` row, or with ``by="brand"`` one per brand (that
    column ``brand``) and a :data:`TOTAL_BRAND` row (minor units of ``currency``; rtp as a
    fraction), each naming the period's currency and its rounds' markets."""
    fields = CSV_FIELDS if by != "brand" else ("brand", *CSV_FIELDS[1:])
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=("period", "currency", "markets", *fields),
                            lineterminator="\n")
    writer.writeheader()
    markets = market_names(report)
    for name, line in _rows(report, by):
        row = {field: getattr(line, field) for field in CSV_FIELDS[1:]}
        row["rtp"] = "" if line.rtp is None else f"{line.rtp:.6f}"
        writer.writerow({"period": report.period.label, "currency": report.currency,
                         "markets": markets, fields[0]: name, **row})
    return out.getvalue()


def _euros(cents: int | None) -> str:
    return "-" if cents is None else f"{cents / 100:,.2f}"


def as_text(report: Report, by: str = "line-bet") -> str:
    """A table for a terminal, a row per bet class or (``by="brand"``) per brand (major units
    of the report's currency; the JSON and CSV forms carry minor units)."""
    c = report.currency
    width = max([9, *(len(brand or NO_BRAND) for brand, _ in report.by_brand)]) \
        if by == "brand" else 9
    lines = [f"Star Fever {report.period.kind} report {report.period.label} in {c} (UTC"
             f"{', test rounds included' if report.include_test else ''}); "
             f"market {market_names(report)}",
             f"{'brand' if by == 'brand' else 'line bet':>{width}} {'rounds':>9} "
             f"{'bets ' + c:>14} {'wins ' + c:>14} "
             f"{'GGR ' + c:>14} {'RTP':>8} {c + ' jackpots':>13}"]
    for name, line in _rows(report, by):
        if by != "brand" and line.line_bet is not None:
            name = _euros(line.line_bet)
        rtp = "-" if line.rtp is None else f"{line.rtp:.2%}"
        lines.append(f"{name:>{width}} {line.rounds:>9,} {_euros(line.bets):>14} "
                     f"{_euros(line.wins):>14} {_euros(line.ggr):>14} {rtp:>8} "
                     f"{_euros(line.jackpot_wins):>13}")
    t = report.total
    lines.append(f"{c} pool: {_euros(report.pool_start)} -> {_euros(report.pool_end)}; "
                 f"contributions {_euros(t.contributions)}, won {_euros(t.jackpot_wins)} "
                 f"({t.jackpot_hits} hits), operator refills {_euros(t.refills)}")
    lines.append(f"cashier: deposits {_euros(report.deposits)}, "
                 f"withdrawals {_euros(report.withdrawals)}")
    if by != "brand" and any(brand is not None for brand, _ in report.by_brand):
        for brand, line in report.by_brand:
            lines.append(f"brand {brand or '(none)'}: {line.rounds:,} rounds, bets "
                         f"{_euros(line.bets)}, wins {_euros(line.wins)}, GGR "
                         f"{_euros(line.ggr)} {c}")
    if len(report.by_market) > 1:  # one line each where the period's rounds were in several
        for market, line in report.by_market:
            lines.append(f"market {market or UNRECORDED}: {line.rounds:,} rounds, bets "
                         f"{_euros(line.bets)}, wins {_euros(line.wins)}, GGR "
                         f"{_euros(line.ggr)} {c}")
    for cost in report.free_round_costs:
        lines.append(f"free rounds of {cost.campaign or 'grants made alone'}: "
                     f"{cost.rounds_played} rounds, cost {_euros(cost.cost)} (winnings "
                     f"{_euros(cost.winnings)}, €€€ funding {_euros(cost.jackpot_funding)}; "
                     f"{_euros(cost.withheld)} above caps not paid)")
    if t.unpaid_rounds:
        lines.append(f"UNPAID: {t.unpaid_rounds} wins of {_euros(t.unpaid_wins)} {c} refused by "
                     "the operator's wallet (not in wins or GGR until paid)")
    if t.settled_rounds:
        lines.append(f"SETTLED MANUALLY: {t.settled_rounds} refused wins of "
                     f"{_euros(t.settled_wins)} {c} settled outside the operator's wallet "
                     "(approved by a second operator; not in wins or GGR)")
    return "\n".join(lines)


def cmd_report(args: argparse.Namespace) -> int:
    period = period_of(args.period, args.date)
    url = args.database_url or os.environ.get(ENV_NAMES["database_url"]) or DEFAULT_DATABASE_URL
    db = open_existing(url)
    try:
        report = build_report(db, period, include_test=args.include_test,
                              currency=args.currency)
    finally:
        db.dispose()
    if args.format == "json":
        print(json.dumps(report.as_dict(), indent=2))
    elif args.format == "csv":
        print(as_csv(report, args.by), end="")
    else:
        print(as_text(report, args.by))
    return 0


def register(sub: Any) -> None:
    """Add ``report`` to the ``starfever`` command."""
    p = sub.add_parser("report", help="daily or monthly operator report from the database")
    p.add_argument("period", choices=PERIODS)
    p.add_argument("--date", required=True,
                   help="the UTC day (daily: YYYY-MM-DD) or month (monthly: YYYY-MM)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--by", choices=BREAKDOWNS, default="line-bet",
                   help="a row per bet class (default) or per brand the operator's launches "
                        "named (operator mode; text and csv: the JSON has both)")
    p.add_argument("--database-url", help=f"database URL (default: ${ENV_NAMES['database_url']}"
                                          f" or {DEFAULT_DATABASE_URL})")
    p.add_argument("--currency", default="EUR", type=str.upper, metavar="CODE",
                   help="the currency reported (its rounds, pool and wallets; default EUR)")
    p.add_argument("--include-test", action="store_true",
                   help="count rounds played with test draws too")
    p.set_defaults(handler=cmd_report)


__all__ = ["BREAKDOWNS", "NO_BRAND", "TOTAL_BRAND", "CampaignCost", "Line", "Period", "Report",
           "as_csv", "as_text", "build_report", "period_of"]
