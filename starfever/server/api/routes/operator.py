"""The operators' API, ``/operator`` (operators only; the schemas are ``schemas``'): their own
log-in (password and TOTP code), the pool meters, RTP, the player list; the back office's
player in full, round search and recall across players, the meters, the audit's last result
with a signed chain-head statement, the significant-events log, and the reports as CSV or JSON
downloads. The back-office page at ``/operator`` (``starfever.web.backoffice``) is its client;
the cashier is the existing ``POST /players/{username}/deposits`` and ``/withdrawals``."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response, status

from starfever.engine.errors import InputError
from starfever.server import reports
from starfever.server.api.convert import details_url, round_public
from starfever.server.api.deps import ContextDep, OperatorDep
from starfever.server.api.retry import RetryOnDisconnect
from starfever.server.api.routes.sessions import remember_device
from starfever.server.db import Database
from starfever.server.schemas import (
    MAX_ID,
    USERNAME_PATTERN,
    AuditPublic,
    CashierLinePublic,
    DayLinePublic,
    EventPublic,
    EventsPublic,
    LimitsPublic,
    MetersPublic,
    OperatorCredentials,
    PendingCreditPublic,
    PendingCreditsPublic,
    PlayerFilePublic,
    PlayerLinePublic,
    PlayerRowPublic,
    PlayerSearchPublic,
    PlayersPublic,
    PlayerTotalsPublic,
    PoolMetersPublic,
    PoolPublic,
    RecalledRoundPublic,
    RefillPublic,
    RoundLinePublic,
    RoundSearchPublic,
    RtpPublic,
    RtpRowPublic,
    SelfExclusionCreate,
    SelfExclusionPublic,
    TokenPublic,
    UnpaidWinPublic,
    UnpaidWinsPublic,
    WalletCallPublic,
    WalletCallsPublic,
    WalletCapabilitiesPublic,
)
from starfever.server.services import (
    backoffice,
    devices,
    events,
    free_rounds,
    jackpot,
    operator_accounts,
    players,
    protection,
    rtp_meters,
    support,
    unpaid,
)
from starfever.server.services.anchor import statement
from starfever.server.services.auth import Principal
from starfever.server.services.currency import served_currency
from starfever.server.services.errors import Unprocessable
from starfever.server.services.rtp_meters import RtpRow

router = APIRouter(prefix="/operator", tags=["operator"], route_class=RetryOnDisconnect)
UsernamePath = Path(pattern=USERNAME_PATTERN)


DAY_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
INSTANT_PATTERN = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}:\d{2})?$"
"""ISO 8601 only: pydantic's lax parsing would also take ``0.0`` for a date (1970-01-01)."""


def _day(text: str | None, name: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise Unprocessable(f"{name} {text!r} is not a calendar date", code="bad_period") \
            from None


def _instant(text: str | None, name: str) -> datetime | None:
    """An ISO 8601 time in UTC (one without a zone is taken as UTC)."""
    from datetime import UTC

    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise Unprocessable(f"{name} {text!r} is not a time", code="bad_period") from None
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise Unprocessable(f"{name} {text!r} is out of range", code="bad_period") from None


def _line(p: backoffice.PlayerLine) -> PlayerLinePublic:
    return PlayerLinePublic(username=p.username, balance=p.balance, created_at=p.created_at,
                            excluded_until=p.excluded_until, external_id=p.external_id,
                            currency=p.currency)


@router.get("/search/players")
def search_players(context: ContextDep, _operator: OperatorDep,
                   q: Annotated[str, Query(max_length=64)] = "",
                   limit: Annotated[int, Query(ge=1, le=200)] = 50,
                   offset: Annotated[int, Query(ge=0, le=10**9)] = 0) -> PlayerSearchPublic:
    """Players whose name (or operator player id) contains ``q``, by name."""
    found = backoffice.find_players(context.db, q.strip(), limit, offset)
    return PlayerSearchPublic(players=[_line(p) for p in found])


@router.get("/players/{username}")
def player_file(context: ContextDep, _operator: OperatorDep,
                username: str = UsernamePath) -> PlayerFilePublic:
    """One player: status, balance, limits, exclusion, play period, totals, cashier."""
    f = backoffice.player_file(context.db, context.settings, username,
                               operator_mode=not context.wallet.keeps_balances)
    limits = None if f.limits is None else LimitsPublic(
        currency=f.line.currency or "EUR", weekly_deposit_limit=f.limits.weekly_deposit_limit,
        default_limit=f.limits.default_limit,
        deposited_last_7_days=f.limits.deposited_last_7_days, remaining=f.limits.remaining,
        pending_limit=f.limits.pending_limit, pending_effective_at=f.limits.pending_effective_at)
    return PlayerFilePublic(
        **_line(f.line).model_dump(), birth_date=f.birth_date, limits=limits,
        play_started_at=f.play_started_at, net_result=f.net_result, rounds=f.rounds,
        total_bet=f.total_bet, total_win=f.total_win,
        totals=[PlayerTotalsPublic(currency=t.currency, rounds=t.rounds, total_bet=t.total_bet,
                                   total_win=t.total_win) for t in f.totals],
        cashier=[CashierLinePublic(id=c.id, kind=c.kind, amount=c.amount,
                                   balance_after=c.balance_after, created_at=c.created_at)
                 for c in f.cashier])


@router.post("/players/{username}/exclusion", status_code=201)
def exclude_player(body: SelfExclusionCreate, context: ContextDep, operator_: OperatorDep,
                   username: str = UsernamePath) -> SelfExclusionPublic:
    """Record a self-exclusion the player asked for by another channel (ledger mode): as the
    player's own, it can be extended, never shortened; the event log names the operator."""
    context.wallet.ledger("self-exclusion")  # refused where the operator keeps it
    player = Principal(account_id=backoffice.account_id(context.db, username),
                       username=username, role="player", session_id=0)
    until = protection.self_exclude(context.db, player, body.days, actor=operator_.username)
    return SelfExclusionPublic(excluded=True, excluded_until=until)


def _round_line(r: Any, username: str, player_id: str | None) -> RoundLinePublic:
    return RoundLinePublic(id=r.id, username=username, created_at=r.created_at,
                           line_bet=r.line_bet, total_bet=r.total_bet, total_win=r.total_win,
                           feature=r.feature, test=r.test, model_name=r.model_name,
                           model_version=r.model_version, player_id=player_id,
                           grant_id=r.grant_id, currency=r.currency, market=r.market)


PlayerIdQuery = Query(min_length=1, max_length=128)
"""The operator's player id, as its launch gave it (``accounts.external_id``)."""
CallIdQuery = Query(min_length=1, max_length=128)
"""A transaction id: Star Fever's (64 characters at most) or the operator's (128)."""


@router.get("/rounds")
def search_rounds(context: ContextDep, _operator: OperatorDep,
                  player: Annotated[str | None, Query(pattern=USERNAME_PATTERN)] = None,
                  round_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
                  since: Annotated[str | None, Query(pattern=INSTANT_PATTERN)] = None,
                  until: Annotated[str | None, Query(pattern=INSTANT_PATTERN)] = None,
                  line_bet: Annotated[int | None, Query(ge=1, le=100)] = None,
                  feature: Annotated[str | None, Query(
                      pattern="^(none|star_wild|hold_and_cash)$")] = None,
                  min_win: Annotated[int | None, Query(ge=0, le=10**12)] = None,
                  before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
                  limit: Annotated[int, Query(ge=1, le=200)] = 50,
                  player_id: Annotated[str | None, PlayerIdQuery] = None,
                  transaction_id: Annotated[str | None, CallIdQuery] = None,
                  operator_transaction_id: Annotated[str | None, CallIdQuery] = None,
                  currency: Annotated[str | None, Query(pattern=r"^[A-Z]{3}$")] = None,
                  ) -> RoundSearchPublic:
    """Rounds of every player, newest first, by player (Star Fever's name, or the operator's
    ``player_id``), round id, the id of one of its wallet calls (Star Fever's
    ``transaction_id`` or the ``operator_transaction_id`` of a debit, credit or rollback),
    time (``since`` inclusive, ``until`` exclusive; ISO 8601, UTC without a zone), bet class,
    feature (``none`` for a plain spin), currency or smallest win; page on with ``before`` =
    ``next_before``. Every filter given must hold; an unknown parameter is 422. ``min_win`` is
    in minor units of ``currency`` and keeps to its rounds: where several currencies are
    served it needs one (``422 currency_needed``: a number of minor units means nothing
    across currencies), where one is, that one (ADR 0078)."""
    code = None if currency is None else served_currency(context.settings, currency)
    if min_win is not None and code is None:
        served = context.settings.served_currencies
        if len(served) > 1:
            raise Unprocessable(f"min_win is in minor units of one currency: name it with "
                                f"currency= ({', '.join(served)})", code="currency_needed")
        code = served[0]
    wanted = backoffice.RoundFilter(username=player, round_id=round_id,
                                    since=_instant(since, "since"),
                                    until=_instant(until, "until"), line_bet=line_bet,
                                    feature=feature,
                                    min_win=min_win, before=before, player_id=player_id,
                                    transaction_id=transaction_id,
                                    operator_transaction_id=operator_transaction_id,
                                    currency=code)
    found = backoffice.search_rounds(context.db, wanted, limit)
    return RoundSearchPublic(rounds=[_round_line(r, u, x) for r, u, x in found],
                             next_before=found[-1][0].id if len(found) == limit else None)


@router.get("/rounds/{round_id}")
def recall_round(context: ContextDep, _operator: OperatorDep,
                 round_id: Annotated[int, Path(ge=1, le=MAX_ID)]) -> RecalledRoundPublic:
    """Any player's round in full, as the player's own recall shows it (the back office
    replays it with the player client's renderer), with the ``brand`` its session's launch
    named, the operator's ``player_id`` and its ``wallet_calls`` with both sides' ids,
    statuses, attempts and times (operator mode; ``null`` and none otherwise)."""
    found, username, brand = backoffice.get_round(context.db, round_id)
    payment = unpaid.payments_of(context.db, [round_id])[round_id]
    return RecalledRoundPublic(username=username,
                               round=round_public(found, details_url(context, round_id),
                                                  payment=payment, free=free_rounds
                                                  .grants_of_rounds(context.db, [found])
                                                  .get(round_id)),
                               brand=brand,
                               player_id=support.player_id_of_round(context.db, round_id),
                               wallet_calls=[_call(c)
                                             for c in support.round_calls(context.db, round_id)])


def _call(c: support.CallLine) -> WalletCallPublic:
    return WalletCallPublic(**c.as_dict())


@router.get("/wallet-calls")
def wallet_calls(context: ContextDep, _operator: OperatorDep,
                 transaction_id: Annotated[str | None, CallIdQuery] = None,
                 operator_transaction_id: Annotated[str | None, CallIdQuery] = None,
                 player_id: Annotated[str | None, PlayerIdQuery] = None,
                 round_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
                 limit: Annotated[int, Query(ge=1, le=support.MAX_CALLS)] = 50,
                 ) -> WalletCallsPublic:
    """Operator mode's wallet calls by Star Fever's ``transaction_id``, the operator's
    ``operator_transaction_id``, the operator's ``player_id`` or the stored ``round_id``
    (every filter given must hold; at least one), oldest first: a spin that played no round
    (a refused or rolled-back debit) is found here. 422 ``no_filter`` without one."""
    wanted = support.CallFilter(transaction_id=transaction_id,
                                operator_transaction_id=operator_transaction_id,
                                player_id=player_id, round_id=round_id)
    if wanted.empty:
        raise Unprocessable("name a transaction_id, operator_transaction_id, player_id or "
                            "round_id", code="no_filter")
    return WalletCallsPublic(calls=[_call(c) for c in support.find_calls(context.db, wanted,
                                                                          limit)])


@router.get("/meters")
def meters(context: ContextDep, _operator: OperatorDep,
           since: Annotated[str | None, Query(pattern=DAY_PATTERN)] = None,
           until: Annotated[str | None, Query(pattern=DAY_PATTERN)] = None,
           currency: Annotated[str | None, Query(pattern=r"^[A-Z]{3}$")] = None,
           ) -> MetersPublic:
    """Bets, wins and GGR per UTC day and bet class (default the last 30 days), actual against
    theoretical RTP per class with 99 % intervals, the €€€ pool with its refills, and in
    operator mode the credits still pending. The daily lines and refills are of ``currency``
    (default the first served; ``422 currency_not_served`` for another), ``pools`` lists every
    currency's pool; the RTP rows, the pending credits and the unpaid wins are of ``currency``
    too: no figure adds minor units of two currencies (ADR 0076, 0078)."""
    code = served_currency(context.settings, currency)
    first, last = backoffice.day_range(_day(since, "since"), _day(until, "until"))
    by_model, by_class = rtp_meters.rtp(context.db, currency=code)
    _, free_by_class = rtp_meters.rtp(context.db, free=True, currency=code)
    seed = context.model.seed_cents
    refills = [RefillPublic(round_id=r.round_id, created_at=r.created_at, amount=r.amount,
                            pool_after=r.pool_after)
               for r in backoffice.refills(context.db, currency=code)]
    pools: list[PoolPublic] = []
    for served in context.settings.served_currencies:  # one pool per currency (ADR 0076)
        view = jackpot.read(context.db, served)
        pools.append(PoolPublic(
            pool=view.pool if view else seed, seed=view.seed if view else seed,
            contributions=view.contributions if view else 0, wins=view.wins if view else 0,
            refills=view.refills if view else 0, hits=view.hits if view else 0,
            recent_refills=refills if served == code else [], currency=served))
    pool = next(p for p in pools if p.currency == code)
    pending = None
    if context.wallet.calls_operator:
        found = backoffice.pending_credits(context.db, currency=code)
        pending = PendingCreditsPublic(count=found.count, amount=found.amount,
                                       oldest=found.oldest,
                                       calls=[PendingCreditPublic(**c) for c in found.calls])
    return MetersPublic(
        since=first, until=last, pools=pools,
        unpaid_wins=_unpaid(context.db, currency=code) if context.wallet.calls_operator
        else None, currency=code, currencies=list(context.settings.served_currencies),
        daily=[DayLinePublic(day=d.day, line_bet=d.line_bet, rounds=d.rounds, bets=d.bets,
                             wins=d.wins, ggr=d.ggr)
               for d in backoffice.daily(context.db, first, last, code)],
        by_bet_class=[rtp_row(r) for r in by_class], by_model=[rtp_row(r) for r in by_model],
        free_by_bet_class=[rtp_row(r) for r in free_by_class],
        pool=pool, pending_credits=pending)


def _unpaid(db: Database, limit: int = 50, currency: str | None = None) -> UnpaidWinsPublic:
    found = unpaid.unpaid_wins(db, limit, currency)
    return UnpaidWinsPublic(count=found.count, amount=found.amount, oldest=found.oldest,
                            currency=currency,
                            settled_count=found.settled_count,
                            settled_amount=found.settled_amount,
                            wins=[UnpaidWinPublic(**w) for w in found.wins])


@router.get("/unpaid-wins")
def unpaid_wins(context: ContextDep, _operator: OperatorDep,
                limit: Annotated[int, Query(ge=1, le=200)] = 50,
                currency: Annotated[str | None, Query(pattern=r"^[A-Z]{3}$")] = None,
                ) -> UnpaidWinsPublic:
    """Operator mode: the wins whose credit the operator's wallet refused with a final
    ``4xx`` (OPERATOR-WALLET.md rule 5), oldest first, with both sides' ids, the amount,
    since when and the operator's answer, and their count and cents in all (none in ledger
    mode: the ledger pays a win in its round's own transaction). A manual settlement proposed
    for one is in its ``settlement``; settled ones are counted in ``settled_count`` and
    ``settled_amount``. Resend or settle one under ``/operator/unpaid-wins/{round_id}/``. Of
    ``currency`` (default the first served; ADR 0078)."""
    return _unpaid(context.db, limit, served_currency(context.settings, currency))


@router.get("/wallet")
def wallet_capabilities(context: ContextDep, _operator: OperatorDep) -> WalletCapabilitiesPublic:
    """What this server's wallet can do (the back office offers only what works): whether it
    keeps the balances (cashier, deposit limits, self-exclusion; false in operator mode,
    where the operator keeps them), calls the operator's wallet, launches players."""
    return WalletCapabilitiesPublic(keeps_balances=context.wallet.keeps_balances,
                                    calls_operator=context.wallet.calls_operator,
                                    launches_players=context.wallet.launches_players)


def _event(e: events.Event) -> EventPublic:
    return EventPublic(id=e.id, created_at=e.created_at, kind=e.kind, actor=e.actor,
                       client=e.client, detail=e.detail)


@router.get("/events")
def significant_events(context: ContextDep, _operator: OperatorDep,
                       kind: Annotated[list[str] | None, Query(max_length=20)] = None,
                       actor: Annotated[str | None, Query(max_length=64)] = None,
                       before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
                       limit: Annotated[int, Query(ge=1, le=events.MAX_LIMIT)] = 100,
                       ) -> EventsPublic:
    """The significant-events log, newest first: ``kind`` (repeatable) of
    :data:`events.KINDS`, ``actor``; page on with ``before`` = ``next_before``."""
    unknown = [k for k in kind or () if k not in events.KINDS]
    if unknown:
        raise Unprocessable(f"unknown event kind {unknown[0][:40]!r}; known: "
                            f"{', '.join(events.KINDS)}", code="unknown_event_kind")
    found = events.query(context.db, kinds=kind or (), actor=actor, before=before, limit=limit)
    return EventsPublic(events=[_event(e) for e in found],
                        next_before=found[-1].id if len(found) == limit else None,
                        kinds=list(events.KINDS))


@router.get("/audit")
def audit(context: ContextDep, _operator: OperatorDep) -> AuditPublic:
    """The last audit's result (``starfever audit`` logs each) and the chain heads now,
    signed under the audit key."""
    with context.db.read() as session:
        last = events.last(session, ("audit_passed", "audit_failed"))
    return AuditPublic(last=_event(last) if last else None,
                       statement=statement(context.db, context.settings.chain_key()))


REPORT_TYPES: dict[int | str, dict[str, Any]] = {200: {
    "description": "The report as a download: text/csv (one row per bet class and a total "
                   "row) or application/json (as starfever report --format json)",
    "content": {"text/csv": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "object"}}}}}


@router.get("/reports/{period}", response_class=Response, responses=REPORT_TYPES)
def report(context: ContextDep, _operator: OperatorDep,
           period: Annotated[str, Path(pattern="^(daily|monthly)$")],
           date_: Annotated[str, Query(alias="date", max_length=10)],
           format_: Annotated[str, Query(alias="format", pattern="^(csv|json)$")] = "csv",
           include_test: bool = False,
           by: Annotated[str, Query(pattern="^(line-bet|brand)$")] = "line-bet",
           currency: Annotated[str | None, Query(pattern=r"^[A-Z]{3}$")] = None) -> Response:
    """``starfever report daily|monthly --date D --currency C`` as a download: the same
    figures, sums of the stored rows, of one currency (default the first served; ADR 0078);
    ``by=brand``: the CSV's rows per brand (``--by brand``)."""
    code = served_currency(context.settings, currency)
    try:
        chosen = reports.period_of(period, date_)
    except InputError as error:
        raise Unprocessable(str(error).replace("--date", "date"), code="bad_period") from None
    built = reports.build_report(context.db, chosen, include_test=include_test, currency=code)
    name = f"starfever-{period}-{chosen.label}-{code}.{format_}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if format_ == "json":
        import json

        return Response(json.dumps(built.as_dict(), indent=2), media_type="application/json",
                        headers=headers)
    return Response(reports.as_csv(built, by), media_type="text/csv; charset=utf-8",
                    headers=headers)


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
def log_in(body: OperatorCredentials, context: ContextDep, request: Request,
           response: Response) -> TokenPublic:
    """An operator's log-in: username, password and the 6-digit code of the authenticator
    app (``starfever operator create`` printed its secret). Throttled apart from players:
    ``STARFEVER_OPERATOR_LOGIN_MAX_FAILURES`` failures per operator from unknown clients, then
    429; the operator's known device (the ``starfever_operator_device`` cookie, set here) is
    throttled on its own failures only (ADR 0052)."""
    client = request.client.host if request.client else None
    token, expires = operator_accounts.login_operator(
        context.db, context.settings, body.username, body.password, body.otp, client,
        request.cookies.get(devices.OPERATOR_COOKIE))
    remember_device(response, context.settings, devices.OPERATOR_COOKIE, body.username)
    return TokenPublic(token=token, expires_at=expires)


@router.get("/jackpot")
def pool_meters(context: ContextDep, _operator: OperatorDep,
                currency: Annotated[str | None, Query(pattern=r"^[A-Z]{3}$")] = None,
                ) -> PoolMetersPublic:
    """A currency's pool (default: the first served) and its meters: contributions, wins,
    refills (the seed included), hits; ``422 currency_not_served`` for one not served."""
    code = served_currency(context.settings, currency)
    view = jackpot.read(context.db, code)
    if view is None:
        seed = context.model.seed_cents
        return PoolMetersPublic(pool=seed, seed=seed, contributions=0, wins=0, refills=0,
                                hits=0, carry="0", updated_at=None, currency=code)
    return PoolMetersPublic(pool=view.pool, seed=view.seed, contributions=view.contributions,
                            wins=view.wins, refills=view.refills, hits=view.hits,
                            carry=str(view.carry), updated_at=view.updated_at, currency=code)


def rtp_row(row: RtpRow) -> RtpRowPublic:
    theory = rtp_meters.theoretical(row.model_name, row.model_version)
    return RtpRowPublic(
        model_name=row.model_name, model_version=row.model_version, line_bet=row.line_bet,
        rounds=row.rounds, total_bet=row.total_bet, total_win=row.total_win,
        progressive_win=row.progressive_win, actual_rtp=row.actual_rtp,
        actual_game_rtp=row.actual_game_rtp, interval_99=row.interval_99,
        theoretical_rtp=float(theory.total) if theory else None,
        theoretical_game_rtp=float(theory.game) if theory else None)


@router.get("/rtp")
def rtp(context: ContextDep, _operator: OperatorDep,
        currency: Annotated[str | None, Query(pattern=r"^[A-Z]{3}$")] = None) -> RtpPublic:
    """Actual against theoretical RTP per model and per bet class (test rounds left out): of
    paid rounds, and of free rounds alone in rows of their own (ADR 0064); of ``currency``'s
    rounds (default the first served; ADR 0078)."""
    code = served_currency(context.settings, currency)
    by_model, by_class = rtp_meters.rtp(context.db, currency=code)
    _, free_by_class = rtp_meters.rtp(context.db, free=True, currency=code)
    return RtpPublic(currency=code,by_model=[rtp_row(r) for r in by_model],
                     by_bet_class=[rtp_row(r) for r in by_class],
                     free_by_bet_class=[rtp_row(r) for r in free_by_class],
                     note="by_model and by_bet_class are of paid rounds only; "
                          "free_by_bet_class is of free rounds alone, at their grants' "
                          "stakes. interval_99 is the 99 % interval of the game RTP (without "
                          "€€€ shares), its lower end never below 0; compare it with "
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
