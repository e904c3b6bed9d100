"""The operator's controls over the game and a player's sessions (ADR 0067): maintenance (the
game closed to new launches, sessions and rounds; rounds under way finish) and the termination
of a player's sessions. Both are state in the database, so every worker and machine sees a
change at once; the spin path reads them in its own transaction (``spin.sql``,
``spin.call_book``), elsewhere :func:`maintenance` is one primary-key read. Each change is a
significant event (``services.events``) in the transaction that makes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from starfever.server.db import Database
from starfever.server.models import Account, GameControl, SessionToken, SignificantEvent
from starfever.server.services import events
from starfever.server.services.control_rules import Maintenance, check_open
from starfever.server.services.errors import NotFound, Unprocessable, utcnow

CONTROLS_ID = 1
DEFAULT_RETRY_AFTER_S = 300
MAX_RETRY_AFTER_S = 24 * 3600
MAX_REASON = 200


@dataclass(frozen=True, slots=True)
class MaintenanceState:
    """The switch as the API shows it."""

    maintenance: bool
    since: datetime | None
    retry_after_seconds: int
    reason: str | None


def maintenance(db: Database) -> Maintenance:
    """The switch as it stands (one read of one row)."""
    with db.read() as session:
        row = session.execute(select(GameControl.maintenance_since,
                                     GameControl.retry_after_seconds)
                              .where(GameControl.id == CONTROLS_ID)).first()
    return Maintenance(None) if row is None else Maintenance(row[0], row[1])


def check_game_open(db: Database) -> None:
    """``503 maintenance`` (with ``Retry-After``) while the game is closed."""
    check_open(maintenance(db))


def state(db: Database) -> MaintenanceState:
    """The switch with its reason, for the operator."""
    with db.read() as session:
        row = session.get(GameControl, CONTROLS_ID)
    if row is None:
        return MaintenanceState(False, None, DEFAULT_RETRY_AFTER_S, None)
    return MaintenanceState(row.maintenance_since is not None, row.maintenance_since,
                            row.retry_after_seconds, row.reason)


def check_reason(reason: object) -> str:
    """A reason of 1..200 characters; ``422 invalid_reason`` otherwise."""
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
        raise Unprocessable(f"reason must be 1-{MAX_REASON} characters", code="invalid_reason")
    return reason.strip()


def check_retry_after(value: object) -> int:
    """Seconds for ``Retry-After``: a whole number 1..86400 (``None``: the default)."""
    if value is None:
        return DEFAULT_RETRY_AFTER_S
    if isinstance(value, bool) or not isinstance(value, int) \
            or not 1 <= value <= MAX_RETRY_AFTER_S:
        raise Unprocessable(f"retry_after_seconds must be a whole number 1..{MAX_RETRY_AFTER_S}",
                            code="invalid_retry_after")
    return value


def set_maintenance(db: Database, *, on: bool, reason: str, actor: str,
                    retry_after_seconds: int = DEFAULT_RETRY_AFTER_S,
                    client: str | None = None) -> MaintenanceState:
    """Close the game (``on``) or open it again; the event ``maintenance_started`` or
    ``maintenance_ended`` is recorded with the change, and only when the switch moves (a
    repeated call changes nothing and records nothing). The state after."""
    now = utcnow()
    for _ in range(2):
        try:
            with db.write() as session:
                row = session.scalar(select(GameControl).where(GameControl.id == CONTROLS_ID)
                                     .with_for_update())
                if row is None:
                    row = GameControl(id=CONTROLS_ID, maintenance_since=None,
                                      retry_after_seconds=retry_after_seconds, updated_at=now)
                    session.add(row)
                was = row.maintenance_since is not None
                if on and not was:
                    row.maintenance_since = now
                elif not on and was:
                    row.maintenance_since = None
                if on:
                    row.retry_after_seconds = retry_after_seconds
                if on != was:
                    row.reason, row.updated_at, row.updated_by = reason, now, actor[:64]
                    events.record(session, "maintenance_started" if on else "maintenance_ended",
                                  actor=actor, client=client,
                                  detail={"reason": reason,
                                          "retry_after_seconds": row.retry_after_seconds})
            break
        except IntegrityError:  # another worker made the row first: take it again
            continue
    return state(db)


def terminate(db: Database, *, reason: str, actor: str, player_id: str | None = None,
              operator_session: str | None = None, account_id: int | None = None,
              client: str | None = None) -> int:
    """End the live sessions of a player (by the operator's ``player_id``, by the launch's
    ``operator_session``, or by account); how many ended. The next spin of each is ``401
    session_terminated``; a spin whose debit was recorded before finishes and is credited (the
    settlement does not look at the termination of an operator debit's session). One
    ``session_terminated`` event, also when nothing was live (the operator asked)."""
    now = utcnow()
    with db.write() as session:
        where = [SessionToken.terminated_at.is_(None), SessionToken.revoked_at.is_(None),
                 SessionToken.expires_at > now]
        if account_id is not None:
            where.append(SessionToken.account_id == account_id)
        elif player_id is not None:
            found = session.scalar(select(Account.id).where(Account.external_id == player_id))
            if found is None:
                raise NotFound(f"no player {player_id!r} ever launched the game",
                               code="player_not_found")
            where.append(SessionToken.account_id == found)
        elif operator_session is not None:
            where.append(SessionToken.operator_session == operator_session)
        else:
            raise Unprocessable("name the player_id or the operator_session",
                                code="invalid_terminate")
        ended = session.execute(update(SessionToken).where(*where)
                                .values(terminated_at=now, terminated_reason=reason)
                                .returning(SessionToken.id)).all()
        events.record(session, "session_terminated", actor=actor, client=client, at=now,
                      detail={"player_id": player_id, "account_id": account_id,
                              "by_operator_session": operator_session is not None,
                              "sessions": len(ended), "reason": reason,
                              "session_ids": sorted(row[0] for row in ended)})
    return len(ended)


@dataclass(frozen=True, slots=True)
class TerminatedSession:
    """A session the operator ended, for the back office."""

    session_id: int
    username: str
    player_id: str | None
    """The operator's id of the player (operator mode)."""
    operator_session: str | None
    brand: str | None
    started_at: datetime
    terminated_at: datetime
    reason: str | None
    terminated_by: str | None
    """Who ended it (an operator account, or ``operator-api`` for the signed call), from the
    ``session_terminated`` event that names the session; ``None`` for an event from before
    events named their sessions."""


def terminated_sessions(db: Database, *, username: str | None = None,
                        player_id: str | None = None, operator_session: str | None = None,
                        limit: int = 50) -> list[TerminatedSession]:
    """The last ``limit`` sessions the operator ended, the latest first, of the player
    ``username``, of the operator's ``player_id`` or of one launch's ``operator_session``
    (every filter given must hold). Each with who ended it, read from its
    event: one ``session_terminated`` event per termination, stamped with the sessions' own
    ``terminated_at`` and listing their ids. With no player named this reads the sessions table
    through (no index on ``terminated_at``): a back-office page, not a hot path."""
    statement = (select(SessionToken, Account.username, Account.external_id)
                 .join(Account, Account.id == SessionToken.account_id)
                 .where(SessionToken.terminated_at.is_not(None)))
    if username is not None:
        statement = statement.where(Account.username == username)
    if player_id is not None:
        statement = statement.where(Account.external_id == player_id)
    if operator_session is not None:
        statement = statement.where(SessionToken.operator_session == operator_session)
    with db.read() as session:
        rows = session.execute(statement.order_by(SessionToken.terminated_at.desc(),
                                                  SessionToken.id.desc()).limit(limit)).all()
        times = {row[0].terminated_at for row in rows if row[0].terminated_at is not None}
        actors: dict[int, str | None] = {}
        if times:
            for event in session.scalars(select(SignificantEvent).where(
                    SignificantEvent.kind == "session_terminated",
                    SignificantEvent.created_at.in_(times))):
                for ended in json.loads(event.detail).get("session_ids", ()):
                    actors[int(ended)] = event.actor
    return [TerminatedSession(
        session_id=token.id, username=name, player_id=external, brand=token.brand,
        operator_session=token.operator_session, started_at=token.created_at,
        terminated_at=token.terminated_at, reason=token.terminated_reason,
        terminated_by=actors.get(token.id)) for token, name, external in rows
        if token.terminated_at is not None]  # (all: the query's; for the type checker)


__all__ = ["MaintenanceState", "TerminatedSession", "check_game_open", "check_reason",
           "check_retry_after", "maintenance", "set_maintenance", "state", "terminate",
           "terminated_sessions"]
