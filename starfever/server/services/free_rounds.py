"""Free-round grants and campaigns (issue 36, ADR 0064): made by the operator's signed API (or,
in ledger mode, in the back office), idempotent by the operator's own id, queried, cancelled;
the player's list of what is left to play; the early check of a free spin; the cost of each
campaign.

A grant's rounds are counted only where a round is settled (``spin.rule``, under the grant's
lock, in the round's transaction); everything here reads, makes or cancels grants and never
moves money. Cancelling a grant lets its unplayed rounds lapse; what its rounds paid stays
paid. A campaign for every player grants itself to a player who opens the game (asks for their
free rounds) between its start and end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.engine.symbols import BET_CLASSES
from starfever.server.db import Database
from starfever.server.models import Account, FreeRoundCampaign, FreeRoundGrant, Round
from starfever.server.services import events
from starfever.server.services.chain import canonical_json
from starfever.server.services.errors import Conflict, NotFound, Unprocessable
from starfever.server.services.free_round_rules import (
    ACTIVE,
    DEFAULT_VALID,
    MAX_ROUNDS,
    MAX_VALID,
    GrantState,
    check_playable,
    grant_ref,
    state_of,
)

MAX_PLAYERS = 10_000
"""The most players one campaign may list."""
MAX_CAMPAIGN = timedelta(days=366)
"""The longest window a campaign may have."""


@dataclass(frozen=True, slots=True)
class Terms:
    """What a grant gives (checked by :func:`check_terms`)."""

    rounds: int
    line_bet: int
    max_win: int | None


@dataclass(frozen=True, slots=True)
class GrantView:
    """A grant as the APIs show it."""

    id: int
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


@dataclass(frozen=True, slots=True)
class CampaignView:
    """A campaign with what it cost so far."""

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
    cost: Cost
    """Every currency's rounds together: one currency's figures where ``costs`` has one."""
    created_at: datetime
    cancelled_at: datetime | None
    costs: dict[str, Cost] = field(default_factory=dict)
    """What it cost per currency its rounds were played in (ADR 0078)."""


@dataclass(frozen=True, slots=True)
class Cost:
    """What free rounds cost the operator: their paid winnings and the €€€ contributions it
    funded; ``withheld`` was won above a cap and not paid."""

    rounds_played: int = 0
    winnings: int = 0
    jackpot_funding: int = 0
    withheld: int = 0

    @property
    def total(self) -> int:
        return self.winnings + self.jackpot_funding


def check_terms(rounds: int, line_bet: int, max_win: int | None) -> Terms:
    """``422 invalid_grant`` unless 1..1000 rounds at a served bet class, a cap above 0."""
    if not 1 <= rounds <= MAX_ROUNDS:
        raise Unprocessable(f"rounds must be 1 to {MAX_ROUNDS}, not {rounds!r}",
                            code="invalid_grant")
    if line_bet not in BET_CLASSES:
        raise Unprocessable(f"line_bet {line_bet!r} is not a served bet class "
                            f"{list(BET_CLASSES)}", code="invalid_grant")
    if max_win is not None and max_win <= 0:
        raise Unprocessable("max_win must be positive cents (or left out)",
                            code="invalid_grant")
    return Terms(rounds, line_bet, max_win)


def check_expiry(expires_at: datetime | None, now: datetime) -> datetime:
    """A grant's expiry: 30 days from now when not given, at most 90 days ahead."""
    if expires_at is None:
        return now + DEFAULT_VALID
    if expires_at.tzinfo is None:
        raise Unprocessable("expires_at must name its zone (UTC: ...Z)", code="invalid_grant")
    if not now < expires_at <= now + MAX_VALID:
        raise Unprocessable(f"expires_at must lie after now and at most {MAX_VALID.days} days "
                            "ahead", code="invalid_grant")
    return expires_at


def _fingerprint(body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def _campaign_ref(session: Session, campaign_id: int | None) -> str | None:
    if campaign_id is None:
        return None
    return session.scalar(select(FreeRoundCampaign.operator_id)
                          .where(FreeRoundCampaign.id == campaign_id))


def _player_of(session: Session, account_id: int) -> str:
    account = session.get(Account, account_id)
    if account is None:
        return str(account_id)
    return account.external_id or account.username


def view(session: Session, grant: FreeRoundGrant, now: datetime) -> GrantView:
    """The grant as the APIs show it."""
    return GrantView(
        id=grant.id, grant_id=grant_ref(grant.id, grant.operator_id),
        campaign_id=_campaign_ref(session, grant.campaign_id),
        player_id=_player_of(session, grant.account_id), rounds=grant.rounds,
        rounds_played=grant.rounds_played, rounds_left=grant.rounds - grant.rounds_played,
        line_bet=grant.line_bet, expires_at=grant.expires_at, max_win=grant.max_win,
        winnings=grant.winnings, withheld=grant.withheld,
        state=state_of(grant.rounds, grant.rounds_played, grant.expires_at,
                       grant.cancelled_at, now),
        created_at=grant.created_at, cancelled_at=grant.cancelled_at)


def state(session: Session, grant_id: int) -> GrantState | None:
    """A grant as the settlement's rule reads it (not locked)."""
    grant = session.get(FreeRoundGrant, grant_id)
    if grant is None:
        return None
    return GrantState(id=grant.id, account_id=grant.account_id, line_bet=grant.line_bet,
                      rounds=grant.rounds, rounds_played=grant.rounds_played,
                      winnings=grant.winnings, withheld=grant.withheld, max_win=grant.max_win,
                      expires_at=grant.expires_at, cancelled_at=grant.cancelled_at,
                      grant_ref=grant_ref(grant.id, grant.operator_id),
                      campaign_ref=_campaign_ref(session, grant.campaign_id))


def check_before_spin(db: Database, account_id: int, grant_id: int, line_bet: int,
                      now: datetime) -> GrantState:
    """The early check of a free spin, before any money moves (the settlement checks again
    under the grant's lock): each refusal its own code (``free_round_rules``)."""
    with db.read() as session:
        return check_playable(state(session, grant_id), account_id, line_bet, now)


@dataclass(frozen=True, slots=True)
class RoundGrant:
    """The grant a free round was played on, for recall and the round's details page."""

    id: int
    grant_id: str
    campaign_id: str | None
    paid_win: int
    withheld: int


def grants_of_rounds(db: Database, rounds: Sequence[Round]) -> dict[int, RoundGrant]:
    """By round id, the grant of each free round among ``rounds`` (paid rounds are left out)."""
    free = {r.id: (r.grant_id, r.total_win, r.total_win if r.paid_win is None else r.paid_win)
            for r in rounds if r.grant_id is not None}  # round id: grant, win, paid win
    if not free:
        return {}
    with db.read() as session:
        rows = session.execute(
            select(FreeRoundGrant.id, FreeRoundGrant.operator_id, FreeRoundCampaign.operator_id)
            .outerjoin(FreeRoundCampaign, FreeRoundCampaign.id == FreeRoundGrant.campaign_id)
            .where(FreeRoundGrant.id.in_({grant for grant, _, _ in free.values()})))
        refs = {gid: (grant_ref(gid, own), campaign) for gid, own, campaign in rows}
    found: dict[int, RoundGrant] = {}
    for round_id, (grant, won, paid) in free.items():
        ref, campaign = refs.get(grant, (grant_ref(grant, None), None))
        found[round_id] = RoundGrant(grant, ref, campaign, paid, won - paid)
    return found


# --- grants ---------------------------------------------------------------------------------
def create_grant(db: Database, account_id: int, operator_id: str, terms: Terms,
                 expires_at: datetime, created_by: str, now: datetime, *,
                 asked_expiry: str | None = None) -> tuple[GrantView, bool]:
    """Make the grant, or find the one made before under ``operator_id`` (the same terms: the
    first answer; other terms: ``409 grant_id_reused``); whether it was made now. The terms
    compared are those asked for (``asked_expiry``: the expiry as sent, ``None`` for the
    default), so a repeat sent a minute later is still the same request."""
    fingerprint = _fingerprint({"account_id": account_id, "rounds": terms.rounds,
                                "line_bet": terms.line_bet, "max_win": terms.max_win,
                                "expires_at": asked_expiry})
    for _ in range(2):
        with db.write() as session:
            found = session.scalar(select(FreeRoundGrant)
                                   .where(FreeRoundGrant.operator_id == operator_id))
            if found is not None:
                if found.request_hash != fingerprint:
                    raise Conflict(f"grant id {operator_id!r} was used for another grant",
                                   code="grant_id_reused")
                return view(session, found, now), False
        try:
            with db.write() as session:
                grant = FreeRoundGrant(
                    operator_id=operator_id, request_hash=fingerprint, account_id=account_id,
                    rounds=terms.rounds, line_bet=terms.line_bet, expires_at=expires_at,
                    max_win=terms.max_win, rounds_played=0, winnings=0, withheld=0,
                    created_by=created_by, created_at=now)
                session.add(grant)
                session.flush()
                events.record(session, "free_round_grant_created", actor=created_by, detail={
                    "grant_id": grant_ref(grant.id, operator_id), "account_id": account_id,
                    "rounds": terms.rounds, "line_bet": terms.line_bet,
                    "max_win": terms.max_win, "expires_at": expires_at})
                return view(session, grant, now), True
        except IntegrityError:  # the same id made concurrently: read it again
            continue
    raise RuntimeError(f"grant {operator_id!r} could not be made or found")


def _grant_by_ref(session: Session, ref: str, *, lock: bool = False) -> FreeRoundGrant | None:
    query = select(FreeRoundGrant).where(FreeRoundGrant.operator_id == ref)
    if ref.startswith("sfg-") and ref[4:].isdigit():
        query = select(FreeRoundGrant).where(or_(
            FreeRoundGrant.operator_id == ref,
            and_(FreeRoundGrant.id == int(ref[4:]), FreeRoundGrant.operator_id.is_(None))))
    return session.scalar(query.with_for_update() if lock else query)


def find_grant(db: Database, ref: str, now: datetime) -> GrantView:
    """A grant by the operator's id (or ``sfg-<id>``); ``404 grant_not_found``."""
    with db.read() as session:
        grant = _grant_by_ref(session, ref)
        if grant is None:
            raise NotFound(f"no free-round grant {ref!r}", code="grant_not_found")
        return view(session, grant, now)


def grants_of(db: Database, account_id: int, now: datetime) -> list[GrantView]:
    """Every grant of a player, newest first."""
    with db.read() as session:
        rows = session.scalars(select(FreeRoundGrant)
                               .where(FreeRoundGrant.account_id == account_id)
                               .order_by(FreeRoundGrant.id.desc()))
        return [view(session, grant, now) for grant in rows]


def cancel_grant(db: Database, ref: str, now: datetime, actor: str) -> GrantView:
    """Cancel a grant: its unplayed rounds lapse, its paid winnings stay (cancelling twice is
    the first cancel's answer). Locked, so a round settling at that moment is either before
    the cancel (and counts) or after it (and is refused ``grant_cancelled``)."""
    with db.write() as session:
        grant = _grant_by_ref(session, ref, lock=True)
        if grant is None:
            raise NotFound(f"no free-round grant {ref!r}", code="grant_not_found")
        if grant.cancelled_at is None:
            grant.cancelled_at = now
            events.record(session, "free_round_grant_cancelled", actor=actor, detail={
                "grant_id": grant_ref(grant.id, grant.operator_id),
                "account_id": grant.account_id, "rounds_played": grant.rounds_played,
                "rounds_lapsed": grant.rounds - grant.rounds_played,
                "winnings": grant.winnings})
        return view(session, grant, now)


def cancel_by_id(db: Database, grant_id: int, now: datetime, actor: str) -> GrantView:
    """Cancel a grant by Star Fever's id (the back office)."""
    with db.read() as session:
        grant = session.get(FreeRoundGrant, grant_id)
        if grant is None:
            raise NotFound(f"no free-round grant {grant_id}", code="grant_not_found")
        ref = grant_ref(grant.id, grant.operator_id)
    return cancel_grant(db, ref, now, actor)


def playable(db: Database, account_id: int, now: datetime) -> list[GrantView]:
    """What the player may play now: their active grants, soonest to expire first, after
    granting them every campaign for every player open now that they do not have yet."""
    join_open_campaigns(db, account_id, now)
    return sorted((g for g in grants_of(db, account_id, now) if g.state == ACTIVE),
                  key=lambda g: (g.expires_at, g.id))


def join_open_campaigns(db: Database, account_id: int, now: datetime) -> None:
    """Grant the player every campaign for every player open now that they do not have yet
    (on a launch, and when they ask for their free rounds)."""
    with db.read() as session:
        have = select(FreeRoundGrant.campaign_id).where(
            FreeRoundGrant.account_id == account_id,
            FreeRoundGrant.campaign_id.is_not(None))
        open_ids = list(session.scalars(select(FreeRoundCampaign.id).where(
            FreeRoundCampaign.every_player.is_(True), FreeRoundCampaign.cancelled_at.is_(None),
            FreeRoundCampaign.starts_at <= now, FreeRoundCampaign.ends_at > now,
            FreeRoundCampaign.id.not_in(have))))
    for campaign_id in open_ids:
        _grant_campaign(db, campaign_id, [account_id], now)


def _grant_campaign(db: Database, campaign_id: int, account_ids: list[int],
                    now: datetime) -> None:
    """Give the campaign's grant to each player who has not got it (a concurrent grant of the
    same is found by the unique (campaign, player) pair and skipped)."""
    for account_id in account_ids:
        try:
            with db.write() as session:
                campaign = session.get(FreeRoundCampaign, campaign_id)
                if campaign is None:
                    return
                exists = session.scalar(select(FreeRoundGrant.id).where(
                    FreeRoundGrant.campaign_id == campaign_id,
                    FreeRoundGrant.account_id == account_id))
                if exists is None:
                    session.add(FreeRoundGrant(
                        campaign_id=campaign_id, account_id=account_id,
                        rounds=campaign.rounds, line_bet=campaign.line_bet,
                        expires_at=now + timedelta(days=campaign.valid_days),
                        max_win=campaign.max_win, rounds_played=0, winnings=0, withheld=0,
                        created_by=campaign.created_by, created_at=now))
        except IntegrityError:
            continue


# --- campaigns ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CampaignTerms:
    """A campaign as asked for (checked)."""

    operator_id: str
    players: list[int] | None
    """Account ids; ``None``: every player who opens the game in the window."""
    starts_at: datetime
    ends_at: datetime
    terms: Terms
    valid_days: int


def check_campaign(operator_id: str, players: list[int] | None, starts_at: datetime,
                   ends_at: datetime, terms: Terms, valid_days: int | None) -> CampaignTerms:
    """``422 invalid_campaign`` for a window that ends before it starts or lasts over a year,
    a list of no players or too many, or a validity outside 1..90 days."""
    if starts_at.tzinfo is None or ends_at.tzinfo is None:
        raise Unprocessable("starts_at and ends_at must name their zone (UTC: ...Z)",
                            code="invalid_campaign")
    if not starts_at < ends_at <= starts_at + MAX_CAMPAIGN:
        raise Unprocessable("the campaign must end after it starts, within a year",
                            code="invalid_campaign")
    if players is not None and not 1 <= len(players) <= MAX_PLAYERS:
        raise Unprocessable(f"players must list 1 to {MAX_PLAYERS} players (or be left out: "
                            "every player who opens the game in the window)",
                            code="invalid_campaign")
    days = DEFAULT_VALID.days if valid_days is None else valid_days
    if not 1 <= days <= MAX_VALID.days:
        raise Unprocessable(f"valid_days must be 1 to {MAX_VALID.days}", code="invalid_campaign")
    return CampaignTerms(operator_id, None if players is None else sorted(set(players)),
                         starts_at, ends_at, terms, days)


def create_campaign(db: Database, asked: CampaignTerms, created_by: str, now: datetime,
                    ) -> tuple[CampaignView, bool]:
    """Make the campaign (and the grants of the players it lists, if it is open now), or find
    the one made before under its id (other terms: ``409 campaign_id_reused``)."""
    t = asked.terms
    fingerprint = _fingerprint({"players": asked.players, "rounds": t.rounds,
                                "line_bet": t.line_bet, "max_win": t.max_win,
                                "starts_at": asked.starts_at.isoformat(),
                                "ends_at": asked.ends_at.isoformat(),
                                "valid_days": asked.valid_days})
    made = False
    try:
        with db.write() as session:
            found = session.scalar(select(FreeRoundCampaign).where(
                FreeRoundCampaign.operator_id == asked.operator_id))
            if found is None:
                found = FreeRoundCampaign(
                    operator_id=asked.operator_id, request_hash=fingerprint,
                    every_player=asked.players is None, starts_at=asked.starts_at,
                    ends_at=asked.ends_at, rounds=t.rounds, line_bet=t.line_bet,
                    valid_days=asked.valid_days, max_win=t.max_win, created_by=created_by,
                    created_at=now)
                session.add(found)
                session.flush()
                made = True
                events.record(session, "free_round_campaign_created", actor=created_by,
                              detail={"campaign_id": asked.operator_id,
                                      "players": None if asked.players is None
                                      else len(asked.players),
                                      "rounds": t.rounds, "line_bet": t.line_bet,
                                      "max_win": t.max_win, "starts_at": asked.starts_at,
                                      "ends_at": asked.ends_at,
                                      "valid_days": asked.valid_days})
            elif found.request_hash != fingerprint:
                raise Conflict(f"campaign id {asked.operator_id!r} was used for another "
                               "campaign", code="campaign_id_reused")
            campaign_id = found.id
    except IntegrityError:  # made concurrently: that one answers
        return find_campaign(db, asked.operator_id, now), False
    if made and asked.players is not None:
        _grant_campaign(db, campaign_id, asked.players, now)
    return find_campaign(db, asked.operator_id, now), made


def _campaign_view(session: Session, c: FreeRoundCampaign, now: datetime) -> CampaignView:
    grants = int(session.scalar(select(func.count()).select_from(FreeRoundGrant)
                                .where(FreeRoundGrant.campaign_id == c.id)) or 0)
    state = "cancelled" if c.cancelled_at is not None else (
        "scheduled" if now < c.starts_at else "ended" if now >= c.ends_at else "open")
    return CampaignView(campaign_id=c.operator_id, every_player=c.every_player,
                        starts_at=c.starts_at, ends_at=c.ends_at, rounds=c.rounds,
                        line_bet=c.line_bet, valid_days=c.valid_days, max_win=c.max_win,
                        state=state, grants=grants,
                        cost=costs(session).get(c.id, Cost()), created_at=c.created_at,
                        cancelled_at=c.cancelled_at,
                        costs=costs_by_currency(session, ())[0].get(c.id, {}))


def find_campaign(db: Database, ref: str, now: datetime) -> CampaignView:
    """A campaign by the operator's id; ``404 campaign_not_found``."""
    with db.read() as session:
        found = session.scalar(select(FreeRoundCampaign)
                               .where(FreeRoundCampaign.operator_id == ref))
        if found is None:
            raise NotFound(f"no free-round campaign {ref!r}", code="campaign_not_found")
        return _campaign_view(session, found, now)


def campaigns(db: Database, now: datetime) -> list[CampaignView]:
    """Every campaign, newest first."""
    with db.read() as session:
        return [_campaign_view(session, c, now) for c in session.scalars(
            select(FreeRoundCampaign).order_by(FreeRoundCampaign.id.desc()))]


def cancel_campaign(db: Database, ref: str, now: datetime, actor: str) -> CampaignView:
    """Cancel a campaign and every grant it gave (their unplayed rounds lapse; what they paid
    stays paid); no player gets it any more."""
    with db.write() as session:
        found = session.scalar(select(FreeRoundCampaign)
                               .where(FreeRoundCampaign.operator_id == ref).with_for_update())
        if found is None:
            raise NotFound(f"no free-round campaign {ref!r}", code="campaign_not_found")
        if found.cancelled_at is None:
            found.cancelled_at = now
            events.record(session, "free_round_campaign_cancelled", actor=actor,
                          detail={"campaign_id": ref})
        for grant in session.scalars(select(FreeRoundGrant).where(
                FreeRoundGrant.campaign_id == found.id,
                FreeRoundGrant.cancelled_at.is_(None)).order_by(FreeRoundGrant.id)
                .with_for_update()):
            grant.cancelled_at = now
    return find_campaign(db, ref, now)


# --- cost -----------------------------------------------------------------------------------
def cost_query() -> Select[int | None, int, int | None, int, int]:
    """Per campaign (``None``: grants made alone): free rounds played, winnings paid, €€€
    contributions funded, winnings withheld above a cap."""
    return (select(FreeRoundGrant.campaign_id, func.count(Round.id),
                   func.coalesce(func.sum(Round.paid_win), 0),
                   func.coalesce(func.sum(Round.contribution), 0),
                   func.coalesce(func.sum(Round.total_win - Round.paid_win), 0))
            .select_from(Round).join(FreeRoundGrant, FreeRoundGrant.id == Round.grant_id)
            .group_by(FreeRoundGrant.campaign_id))


def costs(session: Session) -> dict[int | None, Cost]:
    """:func:`cost_query`'s answer by campaign id."""
    return {campaign: Cost(int(n), int(paid or 0), int(funded), int(withheld))
            for campaign, n, paid, funded, withheld in session.execute(cost_query())}


def costs_by_currency(session: Session, grant_ids: Sequence[int]
                      ) -> tuple[dict[int | None, dict[str, Cost]], dict[int, dict[str, Cost]]]:
    """:func:`cost_query`'s figures per currency of the rounds (a free round is played in its
    session's currency: a campaign's players, or one operator-mode player's launches, may be
    in several; ADR 0078): by campaign id (``None``: grants made alone), and by grant for
    ``grant_ids``. No figure adds two currencies."""
    figures = (func.count(Round.id), func.coalesce(func.sum(Round.paid_win), 0),
               func.coalesce(func.sum(Round.contribution), 0),
               func.coalesce(func.sum(Round.total_win - Round.paid_win), 0))
    by_campaign: dict[int | None, dict[str, Cost]] = {}
    for campaign, code, n, paid, funded, withheld in session.execute(
            select(FreeRoundGrant.campaign_id, Round.currency, *figures)
            .select_from(Round).join(FreeRoundGrant, FreeRoundGrant.id == Round.grant_id)
            .group_by(FreeRoundGrant.campaign_id, Round.currency)):
        by_campaign.setdefault(campaign, {})[str(code)] = Cost(int(n), int(paid or 0),
                                                               int(funded), int(withheld))
    by_grant: dict[int, dict[str, Cost]] = {}
    if grant_ids:
        for grant, code, n, paid, funded, withheld in session.execute(
                select(Round.grant_id, Round.currency, *figures)
                .where(Round.grant_id.in_(list(grant_ids)))
                .group_by(Round.grant_id, Round.currency)):
            by_grant.setdefault(int(grant or 0), {})[str(code)] = Cost(int(n), int(paid or 0),
                                                                  int(funded), int(withheld))
    return by_campaign, by_grant


def direct_cost(db: Database) -> Cost:
    """What the grants made alone (not by a campaign) cost."""
    with db.read() as session:
        return costs(session).get(None, Cost())


__all__ = ["CampaignTerms", "CampaignView", "Cost", "GrantView", "RoundGrant", "Terms",
           "campaigns",
           "cancel_by_id", "cancel_campaign", "cancel_grant", "check_before_spin",
           "check_campaign", "check_expiry", "check_terms", "costs", "costs_by_currency",
           "create_campaign",
           "create_grant", "direct_cost", "find_campaign", "find_grant", "grants_of",
           "grants_of_rounds", "join_open_campaigns",
           "playable", "state"]
