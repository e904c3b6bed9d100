"""The operator's controls (ADR 0067): the calls its back end makes on Star Fever, signed like
the launch (``X-Operator-Signature``, OPERATOR-WALLET.md "Calls the operator makes"), under
``/operator-api``; the same controls in the back office (an operator account's bearer token)
under ``/operator``; and the public maintenance state the page reads."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from starfever.seamless import protocol as p
from starfever.server.api.deps import ContextDep, OperatorDep
from starfever.server.api.operator_calls import check_timestamp, json_object, signed_bytes
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import (
    USERNAME_PATTERN,
    MaintenancePublic,
    MaintenanceUpdate,
    TerminateCreate,
    TerminatedPublic,
)
from starfever.server.services import controls
from starfever.server.services.backoffice import account_id as account_id_of
from starfever.server.services.errors import (
    Unprocessable,
)

signed = APIRouter(prefix="/operator-api", tags=["operator mode"])
backoffice = APIRouter(prefix="/operator", tags=["operator"], route_class=RetryOnDisconnect)
public = APIRouter(tags=["game"])
OPERATOR_API = "operator-api"
"""The actor of a signed call in the significant-events log."""


def _public(state: controls.MaintenanceState, *, reason: bool) -> MaintenancePublic:
    return MaintenancePublic(maintenance=state.maintenance, since=state.since,
                             retry_after_seconds=state.retry_after_seconds,
                             reason=state.reason if reason else None)


async def _signed_body(context: ContextDep, request: Request, signature: str | None,
                       fields: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """The body of a call signed by the operator (``api.operator_calls``: the signature, and
    its timestamp in the launch's window, else ``409 stale_request``), exactly ``fields`` and
    perhaps ``optional``."""
    body = json_object(await signed_bytes(context, request, signature))
    missing = [name for name in (*fields, "timestamp") if name not in body]
    extra = sorted(set(body) - {*fields, *optional, "timestamp"})
    if missing or extra:
        raise Unprocessable(f"this call takes {', '.join((*fields, 'timestamp'))} and may "
                            f"carry {', '.join(optional) or 'nothing else'} (missing: "
                            f"{missing}, unknown: {extra})", code="invalid_request")
    check_timestamp(body["timestamp"], invalid_code="invalid_request")
    return body


@signed.post("/sessions/terminate")
async def terminate(context: ContextDep, request: Request,
                    signature: Annotated[str | None, Header(alias=p.OPERATOR_SIGNATURE)] = None,
                    ) -> TerminatedPublic:
    """End a player's game sessions at once: ``{"player_id"}`` (every live session of the
    player) or ``{"operator_session"}`` (the sessions of that launch), with ``"reason"`` and
    ``"timestamp"``. A spin under way finishes and is credited; the next is ``401
    session_terminated``. Answers how many sessions ended; a player who never launched is
    ``404 player_not_found``. A significant event (``session_terminated``)."""
    body = await _signed_body(context, request, signature, ("reason",),
                              ("player_id", "operator_session"))
    reason = controls.check_reason(body["reason"])
    player_id, operator_session = body.get("player_id"), body.get("operator_session")
    if (player_id is None) == (operator_session is None):
        raise Unprocessable("name exactly one of player_id and operator_session",
                            code="invalid_terminate")
    if player_id is not None and not p.is_id(player_id):
        raise Unprocessable("player_id must be 1-128 characters of A-Z a-z 0-9 _ . : -",
                            code="invalid_terminate")
    if operator_session is not None and not p.is_operator_session(operator_session):
        raise Unprocessable("operator_session must be 1-256 visible ASCII characters",
                            code="invalid_terminate")
    client = request.client.host if request.client else None
    ended = await run_in_threadpool(lambda: controls.terminate(
        context.db, reason=reason, actor=OPERATOR_API, player_id=player_id,
        operator_session=operator_session, client=client))
    return TerminatedPublic(terminated=ended)


@signed.post("/maintenance")
async def maintenance(context: ContextDep, request: Request,
                      signature: Annotated[str | None, Header(alias=p.OPERATOR_SIGNATURE)] = None,
                      ) -> MaintenancePublic:
    """Close the game (``{"maintenance": true, "reason", "retry_after_seconds"?}``) or open
    it again (``false``), with ``"timestamp"``. Closed: new launches, sessions and rounds are
    ``503 maintenance`` with ``Retry-After`` (default 300 s); rounds under way finish. Each
    change is a significant event (``maintenance_started`` / ``maintenance_ended``); a
    repeated call changes nothing. Answers the state after."""
    body = await _signed_body(context, request, signature, ("maintenance", "reason"),
                              ("retry_after_seconds",))
    if not isinstance(body["maintenance"], bool):
        raise Unprocessable("maintenance must be true or false", code="invalid_request")
    reason = controls.check_reason(body["reason"])
    retry_after = controls.check_retry_after(body.get("retry_after_seconds"))
    client = request.client.host if request.client else None
    state = await run_in_threadpool(lambda: controls.set_maintenance(
        context.db, on=body["maintenance"], reason=reason, actor=OPERATOR_API,
        retry_after_seconds=retry_after, client=client))
    return _public(state, reason=True)


@public.get("/maintenance")
def maintenance_state(context: ContextDep) -> MaintenancePublic:
    """Whether the game is closed for maintenance (the page tells the player); no reason."""
    return _public(controls.state(context.db), reason=False)


@backoffice.get("/maintenance")
def backoffice_state(context: ContextDep, operator_: OperatorDep) -> MaintenancePublic:
    """The maintenance switch with its reason."""
    return _public(controls.state(context.db), reason=True)


@backoffice.put("/maintenance")
def backoffice_maintenance(body: MaintenanceUpdate, context: ContextDep,
                           operator_: OperatorDep, request: Request) -> MaintenancePublic:
    """Close the game for maintenance or open it again, as the signed call does (both wallet
    modes); a significant event with the operator as its actor."""
    client = request.client.host if request.client else None
    state = controls.set_maintenance(
        context.db, on=body.maintenance, reason=controls.check_reason(body.reason),
        actor=operator_.username, client=client,
        retry_after_seconds=controls.check_retry_after(body.retry_after_seconds))
    return _public(state, reason=True)


class TerminatedSessionPublic(BaseModel):
    """A session the operator ended: whose, when, why and by whom."""

    session_id: int
    username: str
    player_id: str | None
    """The operator's id of the player (operator mode)."""
    operator_session: str | None
    """The launch's ``operator_session`` (operator mode)."""
    brand: str | None
    started_at: datetime
    terminated_at: datetime
    reason: str | None
    terminated_by: str | None
    """The operator account, or ``operator-api`` (the signed call); ``null`` where the event
    of an older termination did not name its sessions."""


class TerminatedSessionsPublic(BaseModel):
    sessions: list[TerminatedSessionPublic]


@backoffice.get("/terminated-sessions")
def terminated_sessions(
        context: ContextDep, operator_: OperatorDep,
        player: Annotated[str | None, Query(pattern=USERNAME_PATTERN)] = None,
        player_id: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
        operator_session: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50) -> TerminatedSessionsPublic:
    """The sessions ended by the operator (its signed call or the back office), the latest
    first: of a ``player`` (Star Fever's name), of the operator's ``player_id``, or of one
    launch's ``operator_session``; every filter given must hold, an unknown one is 422."""
    found = controls.terminated_sessions(context.db, username=player, player_id=player_id,
                                         operator_session=operator_session, limit=limit)
    return TerminatedSessionsPublic(sessions=[TerminatedSessionPublic(
        **{name: getattr(s, name) for name in TerminatedSessionPublic.model_fields})
        for s in found])


@backoffice.post("/players/{username}/terminate")
def backoffice_terminate(body: TerminateCreate, context: ContextDep, operator_: OperatorDep,
                         request: Request,
                         username: Annotated[str, Path(pattern=USERNAME_PATTERN)],
                         ) -> TerminatedPublic:
    """End every live session of the player (as the signed call does); a significant
    event with the operator as its actor."""
    account_id = account_id_of(context.db, username)
    client = request.client.host if request.client else None
    ended = controls.terminate(context.db, reason=controls.check_reason(body.reason),
                               actor=operator_.username, account_id=account_id, client=client)
    return TerminatedPublic(terminated=ended)
