"""The player's wallet: balance and ledger."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from starfever.markets import load_market
from starfever.server.api.convert import reality_check
from starfever.server.api.deps import ContextDep, PlayerDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import MAX_ID, LedgerEntryPublic, LedgerPagePublic, WalletPublic
from starfever.server.services import market_rules, players, protection
from starfever.server.services.errors import utcnow
from starfever.server.services.protection_rules import play_time_left
from starfever.web.routes import currency_data, offered_classes

router = APIRouter(prefix="/wallet", tags=["wallet"], route_class=RetryOnDisconnect)


@router.get("")
def wallet(context: ContextDep, player: PlayerDep) -> WalletPublic:
    """The balance in minor units of the session's currency (named, with its ladder), with the
    reality check, for a session whose launch set a time limit the seconds left of it, and the
    player's stake cap in the market (ADR 0077)."""
    balance = context.wallet.balance(player)  # the operator's, in operator mode
    check = protection.read_reality_check(context.db, context.settings, player)
    classes = offered_classes(context.model, load_market(context.settings.market))
    currency = currency_data(player.currency, classes)
    cap = market_rules.player_stake_cap(context.db, market_rules.market_of(context.settings),
                                        player.account_id)
    return WalletPublic(balance=balance, currency=player.currency,
                        line_bets=currency["line_bets"], exponent=currency["exponent"],
                        reality_check=reality_check(check),
                        session_time_left_seconds=play_time_left(player.play_ends_at,
                                                                 utcnow()),
                        max_stake_cents=cap)


@router.get("/entries")
def entries(context: ContextDep, player: PlayerDep,
            limit: Annotated[int, Query(ge=1, le=100)] = 50,
            before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> LedgerPagePublic:
    """The wallet's ledger, newest first (page with ``before`` = the last id seen)."""
    rows = players.ledger_entries(context.db, player, limit, before)
    return LedgerPagePublic(
        entries=[LedgerEntryPublic(id=e.id, kind=e.kind, amount=e.amount,
                                   balance_after=e.balance_after, round_id=e.round_id,
                                   created_at=e.created_at) for e in rows],
        next_before=rows[-1].id if len(rows) == limit else None)
