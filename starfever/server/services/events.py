"""The significant-events log: what an operator, a regulator or an auditor must be able to
look up afterwards, one row per event in ``significant_events``.

Every event is written in the transaction of what it records (:func:`record` adds the row to
the caller's session), so a refused or rolled-back change leaves no event, and a committed one
always has its event. The kinds are fixed (:data:`KINDS`); an unknown kind is a bug and
raises. A detail is a JSON object of particulars; names that would carry a secret
(:data:`SECRET_NAMES`) are refused at any depth, so no password, code or token can reach the
log by mistake.

Kinds and who writes them:

- ``operator_login``, ``operator_login_failed``: ``services.operator_accounts`` (the failure's
  reason in the detail: wrong credentials, a reused code, throttled);
- ``limit_changed``, ``self_exclusion``: ``services.protection``;
- ``settings_changed``, ``model_changed``: ``starfever serve`` at start, when the settings or
  the live model differ from the last recorded (:func:`record_start`);
- ``approved_models_changed``: the certification's approved models;
- ``pool_refill``: the settler, in the batch that refilled the €€€ pool (:func:`refill_rows`);
- ``audit_passed``, ``audit_failed``: ``starfever audit`` (:func:`record_audit`).
- ``software_changed``: ``starfever serve`` at start, when the running build hash (package
  and environment, ADR 0051) differs from the last recorded (``identity.record_running_build``).
- ``credit_refused``, ``unpaid_win_paid``: the operator's wallet refused a round's credit (its
  win is unpaid), or acknowledged one it had refused before; ``unpaid_win_resent``,
  ``settlement_proposed``, ``settlement_approved``, ``settlement_withdrawn``: an operator's
  handling of an unpaid win (``services.unpaid_actions``, ADR 0061).
- ``maintenance_started``, ``maintenance_ended``, ``session_terminated``: the operator's
  controls (``services.controls``, ADR 0067), from its signed API or the back office.
- ``free_round_grant_created``, ``free_round_grant_cancelled``, ``free_round_campaign_created``,
  ``free_round_campaign_cancelled``: ``services.free_rounds`` (ADR 0064; a campaign's own
  grants are not logged one by one: its event names its terms).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from fractions import Fraction
from typing import Any

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import SignificantEvent
from starfever.server.services.errors import utcnow

KINDS: tuple[str, ...] = (
    "operator_login", "operator_login_failed", "limit_changed", "self_exclusion",
    "settings_changed", "model_changed", "approved_models_changed", "pool_refill",
    "audit_passed", "audit_failed",
    "software_changed",
    "credit_refused", "unpaid_win_resent", "unpaid_win_paid", "settlement_proposed",
    "settlement_approved", "settlement_withdrawn",
    "maintenance_started", "maintenance_ended", "session_terminated",
    "panic_button",
    "free_round_grant_created", "free_round_grant_cancelled", "free_round_campaign_created",
    "free_round_campaign_cancelled",
)
"""Every kind of event the log takes."""
SECRET_NAMES = frozenset(("password", "passwd", "otp", "token", "secret", "secret_key",
                          "totp_secret", "authorization", "launch_token", "signature"))
"""Detail keys refused at any depth: a secret must never be written to the log."""
MAX_LIMIT = 500

TABLE: Table = SignificantEvent.__table__  # type: ignore[assignment]
"""The log's table, for a batch's insert (``batch.Batch.insert``)."""


@dataclass(frozen=True, slots=True)
class Event:
    """One logged event."""

    id: int
    created_at: datetime
    kind: str
    actor: str | None
    client: str | None
    detail: dict[str, Any]


def _jsonable(value: object) -> object:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Fraction):
        return str(value)
    raise TypeError(f"an event detail cannot hold {type(value).__name__}")


def _check_names(value: object, path: str = "detail") -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path}: keys must be strings")
            if key.lower() in SECRET_NAMES:
                raise ValueError(f"{path}.{key}: an event detail must not carry a secret")
            _check_names(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for item in value:
            _check_names(item, path)


def encode(kind: str, detail: Mapping[str, object]) -> str:
    """The detail as canonical JSON, after checking the kind and the names."""
    if kind not in KINDS:
        raise ValueError(f"unknown event kind {kind!r} (known: {', '.join(KINDS)})")
    _check_names(detail)
    return json.dumps(dict(detail), sort_keys=True, separators=(",", ":"), default=_jsonable,
                      ensure_ascii=False)


def _row(kind: str, actor: str | None, detail: Mapping[str, object], client: str | None,
         at: datetime | None) -> SignificantEvent:
    return SignificantEvent(created_at=at or utcnow(), kind=kind,
                            actor=actor[:64] if actor else None,
                            client=client[:64] if client else None,
                            detail=encode(kind, detail))


def record(session: Session, kind: str, *, actor: str | None, detail: Mapping[str, object],
           client: str | None = None, at: datetime | None = None) -> None:
    """Add an event to the caller's transaction (``actor``: who acted, ``None`` for the server
    itself; ``client``: the request's address, where there is one; ``at``: the time of the
    change it records, where the caller stamped that change too; now otherwise)."""
    session.add(_row(kind, actor, detail, client, at))


def write(db: Database, kind: str, *, actor: str | None, detail: Mapping[str, object],
          client: str | None = None) -> None:
    """:func:`record` in a transaction of its own (for events that change nothing else: a
    refused log-in, an audit's result)."""
    with db.write() as session:
        record(session, kind, actor=actor, detail=detail, client=client)


def refill_rows(rounds: Sequence[Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """``pool_refill`` rows for the rounds of a settled batch that refilled the pool, for a
    insert in the batch's own transaction (into :data:`TABLE`)."""
    return [{"created_at": now, "kind": "pool_refill", "actor": None, "client": None,
             "detail": encode("pool_refill", {"round_id": r["id"], "amount": r["pool_refill"],
                                              "pool_after": r["pool_after"]})}
            for r in rounds if r.get("pool_refill")]


def _event(row: SignificantEvent) -> Event:
    return Event(id=row.id, created_at=row.created_at, kind=row.kind, actor=row.actor,
                 client=row.client, detail=json.loads(row.detail))


def query(db: Database, *, kinds: Sequence[str] = (), actor: str | None = None,
          since: datetime | None = None, until: datetime | None = None,
          before: int | None = None, limit: int = 100) -> list[Event]:
    """Events, newest first: of ``kinds`` (all if empty), by ``actor``, in ``[since, until)``,
    with ids below ``before`` (paging); at most ``limit`` (1..:data:`MAX_LIMIT`)."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown event kind {unknown[0]!r}")
    statement = select(SignificantEvent)
    if kinds:
        statement = statement.where(SignificantEvent.kind.in_(list(kinds)))
    if actor is not None:
        statement = statement.where(SignificantEvent.actor == actor)
    if since is not None:
        statement = statement.where(SignificantEvent.created_at >= since)
    if until is not None:
        statement = statement.where(SignificantEvent.created_at < until)
    if before is not None:
        statement = statement.where(SignificantEvent.id < before)
    statement = statement.order_by(SignificantEvent.id.desc()).limit(
        max(1, min(limit, MAX_LIMIT)))
    with db.read() as session:
        return [_event(row) for row in session.scalars(statement)]


def last(session: Session, kinds: Sequence[str]) -> Event | None:
    """The newest event of one of ``kinds`` (in the caller's transaction)."""
    row = session.scalar(select(SignificantEvent).where(SignificantEvent.kind.in_(list(kinds)))
                         .order_by(SignificantEvent.id.desc()).limit(1))
    return None if row is None else _event(row)


def record_start(db: Database, *, model: Mapping[str, object],
                 settings: Mapping[str, object]) -> list[str]:
    """At server start: a ``model_changed`` event when the live model (name, version, hash)
    differs from the last recorded, a ``settings_changed`` one when the settings (no secrets:
    the caller leaves them out) do, each with what it was before. Returns the kinds recorded."""
    recorded: list[str] = []
    with db.write() as session:
        before = last(session, ("model_changed",))
        previous = before.detail.get("model") if before else None
        if previous != dict(model):
            record(session, "model_changed", actor=None,
                   detail={"model": dict(model), "previous": previous})
            recorded.append("model_changed")
        before = last(session, ("settings_changed",))
        old = before.detail.get("settings") if before else None
        new = dict(settings)
        if old != new:
            old_map = old if isinstance(old, dict) else {}
            changed = {name: {"from": old_map.get(name), "to": new.get(name)}
                       for name in sorted(set(old_map) | set(new))
                       if old_map.get(name) != new.get(name)}
            record(session, "settings_changed", actor=None,
                   detail={"settings": new, "changed": changed if old is not None else None})
            recorded.append("settings_changed")
    return recorded


def record_audit(db: Database, *, ok: bool, checked: Mapping[str, int],
                 problems: Sequence[str]) -> None:
    """The result of an audit run: ``audit_passed`` or ``audit_failed`` with the counts and
    the first problems found."""
    write(db, "audit_passed" if ok else "audit_failed", actor=None,
          detail={"checked": dict(checked), "problems": len(problems),
                  "first_problems": [p[:300] for p in problems[:10]]})


__all__ = ["KINDS", "TABLE", "Event", "encode", "last", "query", "record",
           "record_audit", "record_start", "refill_rows", "write"]
