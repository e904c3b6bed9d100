"""Player protection: deposit limits, self-exclusion, reality check."""

from __future__ import annotations

from fastapi import APIRouter

from starfever.server.api.convert import reality_check
from starfever.server.api.deps import ContextDep, PlayerDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import (
    LimitsPublic,
    LimitUpdate,
    PanicButtonPress,
    RealityCheckPublic,
    SelfExclusionCreate,
    SelfExclusionPublic,
)
from starfever.server.services import market_rules, protection
from starfever.server.services.errors import Unprocessable
from starfever.server.services.protection import LimitState

router = APIRouter(tags=["player protection"], route_class=RetryOnDisconnect)


def _limits(state: LimitState, currency: str) -> LimitsPublic:
    return LimitsPublic(currency=currency, weekly_deposit_limit=state.weekly_deposit_limit,
                        default_limit=state.default_limit,
                        deposited_last_7_days=state.deposited_last_7_days,
                        remaining=state.remaining, pending_limit=state.pending_limit,
                        pending_effective_at=state.pending_effective_at)


@router.get("/limits")
def read_limits(context: ContextDep, player: PlayerDep) -> LimitsPublic:
    """The weekly deposit limit in force, what is left, and any pending increase. In operator
    mode the operator keeps the limits (403 ``operator_mode`` says so: none is kept here)."""
    context.wallet.ledger("the deposit limit")
    return _limits(protection.read_limits(context.db, context.settings, player),
                   player.currency)


@router.put("/limits")
def set_limits(body: LimitUpdate, context: ContextDep, player: PlayerDep) -> LimitsPublic:
    """Set the weekly deposit limit: a decrease applies now, an increase after 72 hours."""
    context.wallet.ledger("the deposit limit")  # refused where the operator keeps it
    return _limits(protection.set_limit(context.db, context.settings, player,
                                        body.weekly_deposit_limit), player.currency)


@router.get("/self-exclusion")
def read_exclusion(context: ContextDep, player: PlayerDep) -> SelfExclusionPublic:
    """Whether a self-exclusion runs, and until when (403 ``operator_mode`` where the
    operator keeps exclusions)."""
    context.wallet.ledger("self-exclusion")
    until = protection.exclusion(context.db, player)
    return SelfExclusionPublic(excluded=until is not None, excluded_until=until)


@router.post("/self-exclusion", status_code=201)
def exclude(body: SelfExclusionCreate, context: ContextDep,
            player: PlayerDep) -> SelfExclusionPublic:
    """Exclude yourself from bets and deposits for ``days`` days (cannot be shortened)."""
    context.wallet.ledger("self-exclusion")  # the operator's: its wallet says player_blocked
    until = protection.self_exclude(context.db, player, body.days)
    return SelfExclusionPublic(excluded=True, excluded_until=until)


@router.post("/panic-button", status_code=201)
def panic_button(body: PanicButtonPress, context: ContextDep,
                 player: PlayerDep) -> SelfExclusionPublic:
    """The panic button of a market that requires one (``de``): no play for 24 hours, at once.
    Ledger mode: a self-exclusion; operator mode: a ``panic_button`` event for the operator,
    this session ended, and no launch of the player until then (ADR 0075)."""
    if not body.confirmed:
        raise Unprocessable("the panic button needs the player's confirmation "
                            '({"confirmed": true})', code="panic_not_confirmed")
    until = market_rules.press_panic_button(
        context.db, context.settings, player, operator_mode=context.wallet.launches_players)
    return SelfExclusionPublic(excluded=True, excluded_until=until)


@router.get("/reality-check")
def read_reality_check(context: ContextDep, player: PlayerDep) -> RealityCheckPublic:
    """The session's reality check."""
    return reality_check(protection.read_reality_check(context.db, context.settings, player))


@router.post("/reality-check/acknowledge")
def acknowledge(context: ContextDep, player: PlayerDep) -> RealityCheckPublic:
    """The player has seen the reality check; the next is due one interval from now."""
    return reality_check(protection.acknowledge(context.db, context.settings, player))
