"""Free rounds (issue 36, ADR 0064), three doors onto ``services.free_rounds``:

- the player's: ``GET /free-rounds``, the grants they may play now (rounds left, winnings);
  a free round is then a spin naming its grant (``POST /spins {"line_bet", "grant_id"}``);
- the operator's signed API (operator mode; signed like the launch, ``X-Operator-Signature``),
  ``POST /operator-api/free-rounds/grants``, ``.../grants/query``, ``.../grants/cancel`` and the
  same three for ``campaigns``: made idempotently by the operator's own id;
- the back office's (an operator account's token): ``GET /operator/free-rounds`` (grants,
  campaigns, cost), cancel, and in ledger mode create.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypeVar

from fastapi import APIRouter, Header, Path, Request, Response, status
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from starfever.seamless import protocol as p
from starfever.server.api.deps import ContextDep, OperatorDep, PlayerDep
from starfever.server.api.operator_calls import check_timestamp, json_object, signed_bytes
from starfever.server.db import Database
from starfever.server.models import PLAYER, Account, FreeRoundGrant, Wallet
from starfever.server.schemas import MAX_ID
from starfever.server.services import free_rounds as service
from starfever.server.services.errors import (
    NotFound,
    Unprocessable,
    utcnow,
)
from starfever.server.services.launch import _account_of

OPERATOR_REF = r"^[A-Za-z0-9_.:-]{1,128}$"
OperatorRef = Annotated[str, StringConstraints(pattern=OPERATOR_REF)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Signed(_Body):
    timestamp: str


_T = TypeVar("_T", bound=_Signed)


class GrantTerms(_Body):
    rounds: Annotated[int, Field(ge=1, le=1000)]
    line_bet: int
    max_win: Annotated[int, Field(ge=1, le=10**12)] | None = None


class GrantCreate(GrantTerms):
    """A grant: the operator's ``grant_id``, its ``player_id``, N ``rounds`` at ``line_bet``,
    optionally ``expires_at`` (ISO 8601, at most 90 days ahead; default 30) and ``max_win``."""

    grant_id: OperatorRef
    player_id: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    expires_at: str | None = None


class SignedGrantCreate(GrantCreate, _Signed):
    pass


class GrantRef(_Signed):
    grant_id: OperatorRef | None = None
    player_id: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = None


class CampaignCreate(GrantTerms):
    """A campaign: the operator's ``campaign_id``, ``players`` (a list, or ``null``: every
    player who opens the game between ``starts_at`` and ``ends_at``), each grant valid
    ``valid_days`` (1..90, default 30)."""

    campaign_id: OperatorRef
    players: list[Annotated[str, StringConstraints(min_length=1, max_length=128)]] | None
    starts_at: str
    ends_at: str
    valid_days: Annotated[int, Field(ge=1, le=90)] | None = None


class SignedCampaignCreate(CampaignCreate, _Signed):
    pass


class CampaignRef(_Signed):
    campaign_id: OperatorRef


class GrantPublic(BaseModel):
    id: int
    """Star Fever's id: the one a spin names (``grant_id`` of ``POST /spins``)."""
    grant_id: str
    campaign_id: str | None
    player_id: str
    rounds: int
    rounds_played: int
    rounds_left: int
    line_bet: int
    expires_at: datetime
    max_win: int | None
    winnings: int
    withheld: int
    state: str
    created_at: datetime
    cancelled_at: datetime | None


class GrantsPublic(BaseModel):
    grants: list[GrantPublic]


class CostPublic(BaseModel):
    rounds_played: int
    winnings: int
    jackpot_funding: int
    withheld: int
    total: int


class CurrencyCostPublic(CostPublic):
    currency: str


class CampaignPublic(BaseModel):
    campaign_id: str
    every_player: bool
    starts_at: datetime
    ends_at: datetime
    rounds: int
    line_bet: int
    valid_days: int
    max_win: int | None
    state: str
    grants: int
    cost: CostPublic
    """Every currency's free rounds of the campaign together (as before currencies): one
    currency's figures only where ``costs`` has one entry."""
    created_at: datetime
    cancelled_at: datetime | None
    costs: list[CurrencyCostPublic] = []
    """What it cost per currency its rounds were played in, never a sum of two (ADR 0078)."""


class BackOfficeGrantPublic(GrantPublic):
    currency: str | None
    """The currency of its line bet and winnings: the one its rounds were played in, else
    its player's wallet's (ledger mode); ``None`` where none is known yet (operator mode: the
    launch it is played in names it) or its rounds are of several (see ``costs``)."""
    costs: list[CurrencyCostPublic]
    """Its rounds' figures per currency."""


class BackOfficePublic(BaseModel):
    grants: list[BackOfficeGrantPublic]
    campaigns: list[CampaignPublic]
    direct_cost: CostPublic
    """What the grants made alone cost, every currency together (see ``direct_costs``)."""
    direct_costs: list[CurrencyCostPublic] = []
    """What the grants made alone cost, per currency (ADR 0078)."""


def _grant(view: service.GrantView) -> GrantPublic:
    return GrantPublic(**{name: getattr(view, name) for name in GrantPublic.model_fields})


def _cost(cost: service.Cost) -> CostPublic:
    return CostPublic(rounds_played=cost.rounds_played, winnings=cost.winnings,
                      jackpot_funding=cost.jackpot_funding, withheld=cost.withheld,
                      total=cost.total)


def _costs(by_currency: dict[str, service.Cost]) -> list[CurrencyCostPublic]:
    return [CurrencyCostPublic(currency=code, **_cost(cost).model_dump())
            for code, cost in sorted(by_currency.items())]


def _campaign(view: service.CampaignView) -> CampaignPublic:
    fields = {name: getattr(view, name) for name in CampaignPublic.model_fields
              if name not in ("cost", "costs")}
    return CampaignPublic(**fields, cost=_cost(view.cost), costs=_costs(view.costs))


def _instant(value: str, name: str, code: str) -> datetime:
    try:
        found = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise Unprocessable(f"{name} must be ISO 8601", code=code) from None
    if found.tzinfo is None:
        raise Unprocessable(f"{name} must name its zone (UTC: ...Z)", code=code)
    return found


# --- the player's -----------------------------------------------------------------------------
player = APIRouter(prefix="/free-rounds", tags=["free rounds"])


@player.get("")
def my_free_rounds(context: ContextDep, principal: PlayerDep) -> GrantsPublic:
    """The player's grants they may play now (rounds left, winnings so far), soonest to
    expire first; a campaign for every player open now is granted on this call."""
    return GrantsPublic(grants=[_grant(g) for g in service.playable(
        context.db, principal.account_id, utcnow())])


# --- the operator's signed API ----------------------------------------------------------------
operator_api = APIRouter(prefix="/operator-api/free-rounds", tags=["operator mode"])
Signature = Annotated[str | None, Header(alias=p.OPERATOR_SIGNATURE)]


async def _signed(context: ContextDep, request: Request, signature: str | None,
                  model: type[_T]) -> _T:
    """The body, checked: the operator's signature (``api.operator_calls``: ``404
    not_operator_mode`` in ledger mode, ``401 bad_signature``), ``400``/``422`` for a body that
    is not the call's, ``409 stale_request`` outside the launch's timestamp window."""
    raw = await signed_bytes(context, request, signature)
    json_object(raw)
    try:
        body = model.model_validate_json(raw)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise Unprocessable(f"{where}: {problem['msg']}", code="invalid_free_rounds") from None
    check_timestamp(body.timestamp, invalid_code="invalid_free_rounds")
    return body


def _terms_of(body: GrantTerms) -> service.Terms:
    return service.check_terms(body.rounds, body.line_bet, body.max_win)


def _make_grant(db: Database, body: GrantCreate, account_id: int, created_by: str,
                ) -> tuple[service.GrantView, bool]:
    now = utcnow()
    expires = service.check_expiry(None if body.expires_at is None else _instant(
        body.expires_at, "expires_at", "invalid_grant"), now)
    return service.create_grant(db, account_id, body.grant_id, _terms_of(body), expires,
                                created_by, now, asked_expiry=body.expires_at)


def _campaign_terms(body: CampaignCreate, players: list[int] | None) -> service.CampaignTerms:
    return service.check_campaign(
        body.campaign_id, players, _instant(body.starts_at, "starts_at", "invalid_campaign"),
        _instant(body.ends_at, "ends_at", "invalid_campaign"), _terms_of(body),
        body.valid_days)


@operator_api.post("/grants", status_code=status.HTTP_201_CREATED)
async def create_grant(context: ContextDep, request: Request, response: Response,
                       signature: Signature = None) -> GrantPublic:
    """Grant a player free rounds (``201``; the same ``grant_id`` again with the same terms:
    ``200`` and the first answer; with other terms ``409 grant_id_reused``)."""
    body = await _signed(context, request, signature, SignedGrantCreate)
    _terms_of(body)
    account_id = await run_in_threadpool(_account_of, context.db, body.player_id, utcnow())
    view, made = await run_in_threadpool(_make_grant, context.db, body, account_id,
                                         "operator-api")
    if not made:
        response.status_code = status.HTTP_200_OK
    return _grant(view)


@operator_api.post("/grants/query")
async def query_grants(context: ContextDep, request: Request,
                       signature: Signature = None) -> GrantsPublic:
    """A grant by ``grant_id``, or every grant of a ``player_id``."""
    body = await _signed(context, request, signature, GrantRef)
    now = utcnow()
    if body.grant_id is not None:
        return GrantsPublic(grants=[_grant(await run_in_threadpool(
            service.find_grant, context.db, body.grant_id, now))])
    if body.player_id is None:
        raise Unprocessable("send grant_id or player_id", code="invalid_free_rounds")
    account_id = await run_in_threadpool(_external_account, context.db, body.player_id)
    return GrantsPublic(grants=[] if account_id is None else [
        _grant(g) for g in await run_in_threadpool(service.grants_of, context.db, account_id,
                                                   now)])


@operator_api.post("/grants/cancel")
async def cancel_grant(context: ContextDep, request: Request,
                       signature: Signature = None) -> GrantPublic:
    """Cancel a grant: its unplayed rounds lapse, its winnings stay paid."""
    body = await _signed(context, request, signature, GrantRef)
    if body.grant_id is None:
        raise Unprocessable("send grant_id", code="invalid_free_rounds")
    return _grant(await run_in_threadpool(service.cancel_grant, context.db, body.grant_id,
                                          utcnow(), "operator-api"))


@operator_api.post("/campaigns", status_code=status.HTTP_201_CREATED)
async def create_campaign(context: ContextDep, request: Request, response: Response,
                          signature: Signature = None) -> CampaignPublic:
    """A campaign for a list of players or for every player who opens the game in its
    window (idempotent by ``campaign_id`` as a grant is by ``grant_id``)."""
    body = await _signed(context, request, signature, SignedCampaignCreate)
    _campaign_terms(body, None)  # its terms checked before any player is made
    players = None if body.players is None else [
        await run_in_threadpool(_account_of, context.db, player_id, utcnow())
        for player_id in body.players]
    view, made = await run_in_threadpool(service.create_campaign, context.db,
                                         _campaign_terms(body, players), "operator-api",
                                         utcnow())
    if not made:
        response.status_code = status.HTTP_200_OK
    return _campaign(view)


@operator_api.post("/campaigns/query")
async def query_campaign(context: ContextDep, request: Request,
                         signature: Signature = None) -> CampaignPublic:
    """A campaign with its cost so far."""
    body = await _signed(context, request, signature, CampaignRef)
    return _campaign(await run_in_threadpool(service.find_campaign, context.db,
                                             body.campaign_id, utcnow()))


@operator_api.post("/campaigns/cancel")
async def cancel_campaign(context: ContextDep, request: Request,
                          signature: Signature = None) -> CampaignPublic:
    """Cancel a campaign and its grants (unplayed rounds lapse, winnings stay paid)."""
    body = await _signed(context, request, signature, CampaignRef)
    return _campaign(await run_in_threadpool(service.cancel_campaign, context.db,
                                             body.campaign_id, utcnow(), "operator-api"))


def _external_account(db: Database, player_id: str) -> int | None:
    with db.read() as session:
        return session.scalar(select(Account.id).where(Account.external_id == player_id))


# --- the back office's ------------------------------------------------------------------------
backoffice = APIRouter(prefix="/operator/free-rounds", tags=["operator"])


class BackOfficeGrantCreate(GrantCreate):
    """As the signed API's, ``player_id`` being the player's username."""


class BackOfficeCampaignCreate(CampaignCreate):
    """As the signed API's, ``players`` being usernames."""


def _player_account(db: Database, username: str) -> int:
    with db.read() as session:
        found = session.scalar(select(Account.id).where(Account.username == username,
                                                        Account.role == PLAYER))
    if found is None:
        raise NotFound(f"no player {username!r}", code="player_not_found")
    return int(found)


@backoffice.get("")
def backoffice_list(context: ContextDep, _operator: OperatorDep) -> BackOfficePublic:
    """Every grant (newest first, at most 500) and campaign, with what each campaign and the
    grants made alone cost."""
    now = utcnow()
    with context.db.read() as session:
        rows = list(session.scalars(
            select(FreeRoundGrant).order_by(FreeRoundGrant.id.desc()).limit(500)))
        grants = [service.view(session, g, now) for g in rows]
        by_campaign, by_grant = service.costs_by_currency(session, [g.id for g in rows])
        wallets = {int(account): str(code) for account, code in session.execute(
            select(Wallet.account_id, Wallet.currency).where(
                Wallet.account_id.in_(sorted({g.account_id for g in rows}))))}
    listed = []
    for row, view in zip(rows, grants, strict=True):
        played = by_grant.get(row.id, {})
        known = set(played) or ({wallets[row.account_id]} if row.account_id in wallets
                                else set())
        listed.append(BackOfficeGrantPublic(
            **_grant(view).model_dump(), currency=known.pop() if len(known) == 1 else None,
            costs=_costs(played)))
    return BackOfficePublic(grants=listed,
                            campaigns=[_campaign(c) for c in service.campaigns(context.db, now)],
                            direct_cost=_cost(service.direct_cost(context.db)),
                            direct_costs=_costs(by_campaign.get(None, {})))


@backoffice.post("/grants", status_code=status.HTTP_201_CREATED)
def backoffice_grant(body: BackOfficeGrantCreate, context: ContextDep, operator_: OperatorDep,
                     response: Response) -> GrantPublic:
    """Ledger mode: grant a player (by username) free rounds (in operator mode the operator
    grants by its signed API: ``403 operator_mode``)."""
    context.wallet.ledger("a free-round grant made in the back office")
    _terms_of(body)
    view, made = _make_grant(context.db, body, _player_account(context.db, body.player_id),
                             f"backoffice:{operator_.username}")
    if not made:
        response.status_code = status.HTTP_200_OK
    return _grant(view)


@backoffice.post("/campaigns", status_code=status.HTTP_201_CREATED)
def backoffice_campaign(body: BackOfficeCampaignCreate, context: ContextDep,
                        operator_: OperatorDep, response: Response) -> CampaignPublic:
    """Ledger mode: a campaign for listed players (usernames) or every player."""
    context.wallet.ledger("a free-round campaign made in the back office")
    _campaign_terms(body, None)
    players = None if body.players is None else [
        _player_account(context.db, name) for name in body.players]
    view, made = service.create_campaign(context.db, _campaign_terms(body, players),
                                         f"backoffice:{operator_.username}", utcnow())
    if not made:
        response.status_code = status.HTTP_200_OK
    return _campaign(view)


@backoffice.post("/grants/{grant_id}/cancel")
def backoffice_cancel_grant(context: ContextDep, operator_: OperatorDep,
                            grant_id: Annotated[int, Path(ge=1, le=MAX_ID)]) -> GrantPublic:
    """Cancel a grant by Star Fever's id."""
    return _grant(service.cancel_by_id(context.db, grant_id, utcnow(),
                                       f"backoffice:{operator_.username}"))


@backoffice.post("/campaigns/{campaign_id}/cancel")
def backoffice_cancel_campaign(context: ContextDep, operator_: OperatorDep,
                               campaign_id: Annotated[str, Path(pattern=OPERATOR_REF)],
                               ) -> CampaignPublic:
    """Cancel a campaign by the operator's id."""
    return _campaign(service.cancel_campaign(context.db, campaign_id, utcnow(),
                                             f"backoffice:{operator_.username}"))


router = APIRouter()
router.include_router(player)
router.include_router(operator_api)
router.include_router(backoffice)

__all__ = ["router"]
