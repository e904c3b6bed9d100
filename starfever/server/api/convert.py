"""Stored rows and service results -> response bodies."""

from __future__ import annotations

import json

from starfever.server.api.deps import Context
from starfever.server.models import Round, RoundRow
from starfever.server.schemas import (
    RealityCheckPublic,
    RoundGrantPublic,
    RoundPublic,
    RoundSummary,
)
from starfever.server.services import round_details
from starfever.server.services.free_rounds import RoundGrant
from starfever.server.services.protection_rules import RealityCheck


def reality_check(check: RealityCheck) -> RealityCheckPublic:
    """The reality check as sent with wallet and spin responses."""
    return RealityCheckPublic(due=check.due, elapsed_seconds=check.elapsed_seconds,
                              net_result=check.net_result,
                              interval_seconds=check.interval_seconds,
                              next_due_at=check.next_due_at)


def round_grant(free: RoundGrant | None) -> RoundGrantPublic | None:
    """A free round's grant as recall shows it (``None``: a paid round)."""
    if free is None:
        return None
    return RoundGrantPublic(id=free.id, grant_id=free.grant_id, campaign_id=free.campaign_id,
                            paid_win=free.paid_win, withheld=free.withheld)


def round_summary(r: Round, details_url: str | None = None, *,
                  payment: str = "paid", free: RoundGrant | None = None) -> RoundSummary:
    """A line of the round history (``payment``: ``services.unpaid``'s; ``free``: a free
    round's grant)."""
    return RoundSummary(id=r.id, created_at=r.created_at, line_bet=r.line_bet,
                        total_bet=r.total_bet, total_win=r.total_win, feature=r.feature,
                        test=r.test, details_url=details_url, payment=payment,
                        free_round=round_grant(free), currency=r.currency,
                        market=r.market)


def round_public(r: Round | RoundRow, details_url: str | None = None, *,
                 payment: str = "paid", free: RoundGrant | None = None) -> RoundPublic:
    """Everything about a round (game recall), with its details page's address, whether
    its win was paid (``payment``: ``services.unpaid``'s) and a free round's grant."""
    return RoundPublic(payment=payment, free_round=round_grant(free),
        id=r.id, created_at=r.created_at, line_bet=r.line_bet, total_bet=r.total_bet,
        total_win=r.total_win, feature=r.feature, test=r.test, model_name=r.model_name,
        model_version=r.model_version, contribution=r.contribution, base_win=r.base_win,
        star_wild_win=r.star_wild_win, hold_and_cash_win=r.hold_and_cash_win,
        progressive_win=r.progressive_win, pool_before=r.pool_before, pool_after=r.pool_after,
        pool_refill=r.pool_refill, balance_before=r.balance_before,
        balance_after=r.balance_after, draws=json.loads(r.draws), events=json.loads(r.events),
        prev_hash=r.prev_hash, hash=r.hash, build_sha256=r.build_sha256,
        model_sha256=r.model_sha256, details_url=details_url, currency=r.currency,
        market=r.market)


def details_url(context: Context, round_id: int) -> str:
    """The signed address of a round's details page, on the public origin where one is
    configured (operator mode), else the bare path."""
    return round_details.url_of(context.wallet.public_url,
                                round_details.details_key(context.settings.secret_key), round_id)
