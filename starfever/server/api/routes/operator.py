"""Operators: their own log-in (password and TOTP code), and their views: pool meters, RTP,
players."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from starfever.server.api.deps import ContextDep, OperatorDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import (
    OperatorCredentials,
    PlayerRowPublic,
    PlayersPublic,
    PoolMetersPublic,
    RtpPublic,
    RtpRowPublic,
    TokenPublic,
)
from starfever.server.services import jackpot, operator_accounts, players, rtp_meters
from starfever.server.services.rtp_meters import RtpRow

router = APIRouter(prefix="/operator", tags=["operator"], route_class=RetryOnDisconnect)


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
def log_in(body: OperatorCredentials, context: ContextDep, request: Request) -> TokenPublic:
    """An operator's log-in: username, password and the 6-digit code of the authenticator
    app (``starfever operator create`` printed its secret). Throttled apart from players:
    ``STARFEVER_OPERATOR_LOGIN_MAX_FAILURES`` failures per operator from any address, then 429.
    """
    client = request.client.host if request.client else None
    token, expires = operator_accounts.login_operator(context.db, context.settings, body.username,
                                              body.password, body.otp, client)
    return TokenPublic(token=token, expires_at=expires)


@router.get("/jackpot")
def pool_meters(context: ContextDep, _operator: OperatorDep) -> PoolMetersPublic:
    """The pool and its meters: contributions, wins, refills (the seed included), hits."""
    view = jackpot.read(context.db)
    if view is None:
        seed = context.model.seed_cents
        return PoolMetersPublic(pool=seed, seed=seed, contributions=0, wins=0, refills=0,
                                hits=0, carry="0", updated_at=None)
    return PoolMetersPublic(pool=view.pool, seed=view.seed, contributions=view.contributions,
                            wins=view.wins, refills=view.refills, hits=view.hits,
                            carry=str(view.carry), updated_at=view.updated_at)


def _row(row: RtpRow) -> RtpRowPublic:
    theory = rtp_meters.theoretical(row.model_name, row.model_version)
    return RtpRowPublic(
        model_name=row.model_name, model_version=row.model_version, line_bet=row.line_bet,
        rounds=row.rounds, total_bet=row.total_bet, total_win=row.total_win,
        progressive_win=row.progressive_win, actual_rtp=row.actual_rtp,
        actual_game_rtp=row.actual_game_rtp, interval_99=row.interval_99,
        theoretical_rtp=float(theory.total) if theory else None,
        theoretical_game_rtp=float(theory.game) if theory else None)


@router.get("/rtp")
def rtp(context: ContextDep, _operator: OperatorDep) -> RtpPublic:
    """Actual against theoretical RTP per model and per bet class (test rounds left out)."""
    by_model, by_class = rtp_meters.rtp(context.db)
    return RtpPublic(by_model=[_row(r) for r in by_model],
                     by_bet_class=[_row(r) for r in by_class],
                     note="interval_99 is the 99 % interval of the game RTP (without €€€ "
                          "shares), its lower end never below 0; compare it with "
                          "theoretical_game_rtp")


@router.get("/players")
def list_players(context: ContextDep, _operator: OperatorDep,
                 limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                 offset: Annotated[int, Query(ge=0, le=10**9)] = 0) -> PlayersPublic:
    """Players and their balances, by name."""
    rows = players.list_players(context.db, limit, offset)
    return PlayersPublic(players=[PlayerRowPublic(username=p.username, balance=p.balance,
                                                  created_at=p.created_at,
                                                  excluded_until=p.excluded_until)
                                  for p in rows])
