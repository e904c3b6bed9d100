"""Log in and log out."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from starfever.server.api.deps import ContextDep, PrincipalDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.schemas import Credentials, LaunchTokenCreate, TokenPublic
from starfever.server.services import auth, controls, devices, launch
from starfever.server.services.errors import NotFound, utcnow
from starfever.server.settings import Settings

router = APIRouter(prefix="/sessions", tags=["sessions"], route_class=RetryOnDisconnect)


def remember_device(response: Response, settings: Settings, cookie: str,
                    username: str) -> None:
    """Give the client a fresh device token of ``username`` (``services.devices``) in an
    ``HttpOnly``, ``SameSite=Strict`` cookie (``Secure`` in production) that only the API's
    paths receive: its next log-ins there are a known client's (ADR 0052)."""
    response.set_cookie(cookie, devices.issue(settings, username, utcnow()),
                        max_age=devices.DEVICE_DAYS * 86400, path="/api/v1", httponly=True,
                        samesite="strict", secure=settings.environment == "production")


@router.post("", status_code=status.HTTP_201_CREATED)
def log_in(body: Credentials | LaunchTokenCreate, context: ContextDep,
           request: Request, response: Response) -> TokenPublic:
    """Exchange username and password for a bearer token that expires. Repeated failures
    for one username from one address answer 429 for a while (``Retry-After``), and each
    account backs off after failures from anywhere; a client that logged in to the account
    before sends back its device cookie (``starfever_device``, set here) and is throttled on
    its own failures only. In operator mode a player sends ``{"launch_token"}`` from the
    operator's launch instead (once, within 60 s; otherwise 401 ``invalid_launch_token``)."""
    if isinstance(body, LaunchTokenCreate):
        if not context.wallet.launches_players:
            raise NotFound("launch tokens exist only in operator mode", code="not_operator_mode")
        controls.check_game_open(context.db)  # no new session while closed (ADR 0067)
        token, expires = launch.exchange(context.db, context.settings, body.launch_token)
        return TokenPublic(token=token, expires_at=expires)
    if context.wallet.launches_players:
        launch.refuse_player_login(context.db, body.username)
    client = request.client.host if request.client else None
    token, expires = auth.login(context.db, context.settings, body.username, body.password,
                                client, request.cookies.get(devices.PLAYER_COOKIE))
    remember_device(response, context.settings, devices.PLAYER_COOKIE, body.username)
    return TokenPublic(token=token, expires_at=expires)


@router.delete("/current", status_code=status.HTTP_204_NO_CONTENT)
def log_out(context: ContextDep, principal: PrincipalDep) -> Response:
    """End the session of the token sent."""
    auth.logout(context.db, principal)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
