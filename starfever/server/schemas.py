"""Request and response bodies. Requests are strict: exact JSON types (no "5" for 5, no true
for 1), bounded numbers and strings, and unknown fields refused."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

MAX_AMOUNT = 10**9
MAX_ID = 2**62
"""The largest row id a request may name (ids are 64-bit signed integers in both databases)."""
USERNAME_CHARS = r"[a-z0-9][a-z0-9_.-]{2,31}"
"""3-32 characters: lower-case letters, digits, ``_ . -``; starting with a letter or digit."""
USERNAME_PATTERN = f"^{USERNAME_CHARS}$"
"""For pydantic and OpenAPI, whose (Rust) regex ``$`` matches only at the very end. In Python,
``$`` also matches before a final newline: Python code checks with :func:`is_username`."""
IDEMPOTENCY_KEY_CHARS = r"[A-Za-z0-9_.:-]{1,128}"
IDEMPOTENCY_KEY_PATTERN = f"^{IDEMPOTENCY_KEY_CHARS}$"
MAX_TEST_DRAWS = 4096



def is_username(text: str) -> bool:
    """Whether ``text`` is a valid username, the whole of it (``re.fullmatch``: ``'boss\\n'``
    is not)."""
    return re.fullmatch(USERNAME_CHARS, text) is not None


def is_idempotency_key(text: str) -> bool:
    """Whether ``text`` is a valid Idempotency-Key, the whole of it."""
    return re.fullmatch(IDEMPOTENCY_KEY_CHARS, text) is not None


Username = Annotated[str, StringConstraints(pattern=USERNAME_PATTERN)]
Password = Annotated[str, StringConstraints(min_length=8, max_length=128)]
Amount = Annotated[int, Field(ge=1, le=MAX_AMOUNT, description="cents, 1..10^9")]


class Request(BaseModel):
    """Base of every request body."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Credentials(Request):
    """Log in."""

    username: Username
    password: Password


class LaunchTokenCreate(Request):
    """Operator mode: open the session of a launch token."""

    launch_token: Annotated[str, StringConstraints(min_length=1, max_length=128)]


class OperatorCredentials(Credentials):
    """An operator logs in with the code of their authenticator app as well (TOTP)."""

    otp: Annotated[str, StringConstraints(pattern=r"^[0-9]{6}$")]


class PlayerCreate(Credentials):
    """Register a player; the birth date (``YYYY-MM-DD``) is required: players must be 18."""

    birth_date: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] | None = None
    """The wallet's currency, one the installation serves (default: its first; ADR 0076)."""

    @field_validator("birth_date")
    @classmethod
    def _real_date(cls, value: str) -> str:
        day = date.fromisoformat(value)
        if day.year < 1900 or day > date.today():
            raise ValueError("birth_date must be a past date after 1900")
        return value

    def birth(self) -> date:
        """The birth date as a date."""
        return date.fromisoformat(self.birth_date)


class DepositCreate(Request):
    """A cashier deposit or withdrawal."""

    amount: Amount


class SpinCreate(Request):
    """A spin at one line bet class (cents)."""

    line_bet: Annotated[int, Field(ge=1, le=MAX_AMOUNT)]
    test_draws: Annotated[list[Annotated[int, Field(ge=0, le=MAX_AMOUNT)]],
                          Field(min_length=1, max_length=MAX_TEST_DRAWS)] | None = None
    grant_id: Annotated[int, Field(ge=1, le=MAX_AMOUNT)] | None = None
    """A free round: the grant to play it on (``GET /free-rounds``); the bet must be its."""


class LimitUpdate(Request):
    """Set the weekly deposit limit (cents)."""

    weekly_deposit_limit: Amount


class SelfExclusionCreate(Request):
    """Exclude oneself for a number of days."""

    days: Annotated[int, Field(ge=1, le=3650)]


class PanicButtonPress(Request):
    """The panic button: ``{"confirmed": true}`` once the player confirmed it on the page."""

    confirmed: bool


class Public(BaseModel):
    """Base of every response body."""


class FieldProblem(Public):
    """One invalid field of a request (validation errors)."""

    field: str
    problem: str


class ErrorBody(Public):
    """A machine-readable ``code`` (docs/server.md lists them) and a message for people."""

    code: str
    message: str
    fields: list[FieldProblem] | None = None
    """Only for ``validation_error``: what was wrong where."""


class ErrorPublic(Public):
    """Every error response: ``{"error": {"code", "message"[, "fields"]}}``."""

    error: ErrorBody


class PlayerPublic(Public):
    username: str
    role: str
    birth_date: date | None
    created_at: datetime
    currency: str | None = None
    """A player's wallet currency."""


class TokenPublic(Public):
    token: str
    token_type: str = "bearer"
    expires_at: datetime


class LaunchPublic(Public):
    """Operator mode: the game's address with its single-use launch token, and the market
    profile it is played under (as ``GET /game`` serves it)."""

    url: str
    expires_at: datetime
    market: dict[str, Any]


class RealityCheckPublic(Public):
    due: bool
    elapsed_seconds: int
    net_result: int
    interval_seconds: int
    next_due_at: datetime


class WalletPublic(Public):
    balance: int
    currency: str = "EUR"
    """The session's currency: ``balance`` is in its minor units (ADR 0076)."""
    line_bets: list[int] | None = None
    """The currency's ladder of line bets (minor units) this player may choose from."""
    exponent: int = 2
    """The currency's minor-unit exponent."""
    reality_check: RealityCheckPublic
    session_time_left_seconds: int | None = None
    """Operator mode: seconds left of the session's time limit from its launch (0: reached,
    no more spins in this session); ``None`` when the session has no time limit."""
    max_stake_cents: int | None = None
    """The largest total bet of one round this player may place in the market (its cap, or the
    young adults' cap of a market with an age band: ADR 0077); the client's bet ladder stops
    there."""


class LedgerEntryPublic(Public):
    id: int
    kind: str
    amount: int
    balance_after: int | None
    round_id: int | None
    created_at: datetime


class LedgerPagePublic(Public):
    entries: list[LedgerEntryPublic]
    next_before: int | None


class CashierPublic(Public):
    """A booked deposit or withdrawal."""

    username: str
    kind: str
    """``deposit`` or ``withdrawal``."""
    amount: int
    balance: int
    """The player's balance right after this booking (the same in every retry's answer)."""
    transaction_id: int
    """The id of its wallet ledger entry (``GET /wallet/entries`` shows it to the player)."""
    idempotency_key: str | None
    """The key it was booked under, ``None`` if it was sent without one."""
    created_at: datetime
    replayed: bool
    """``True`` in the answer to a retry: the first booking's result, nothing moved now."""


class RoundGrantPublic(Public):
    """The grant a free round was played on, as recall shows it (no stake was taken)."""

    id: int
    """Star Fever's id of the grant."""
    grant_id: str
    """The operator's id of the grant (``sfg-<id>`` for a campaign's grant)."""
    campaign_id: str | None
    paid_win: int
    """What the round paid the player (its win up to the grant's cap)."""
    withheld: int
    """What it won above the cap and did not pay."""


class RoundSummary(Public):
    id: int
    created_at: datetime
    line_bet: int
    total_bet: int
    total_win: int
    feature: str | None
    test: bool
    payment: str = "paid"
    """Whether the win reached the player's account: ``paid``; in operator mode ``pending``
    (the credit is resent until the operator's wallet answers) or ``unpaid`` (the operator's
    wallet refused the credit: the win is pending payment by the operator, rule 5)."""
    details_url: str | None = None
    """The round's signed, never-expiring details page (no log-in; ADR 0060)."""
    free_round: RoundGrantPublic | None = None
    """A free round (ADR 0064): its grant, campaign, what it paid and what the cap withheld;
    ``None`` for a paid round."""
    currency: str = "EUR"
    """The currency of its amounts (minor units; ADR 0076)."""
    market: str | None = None
    """The market profile it was played in (``at``, ``de``, ``uk``, ...); ``None`` for a
    round stored before the market was recorded (migration 0028, ADR 0078)."""


class RoundPublic(RoundSummary):
    model_name: str
    model_version: str
    contribution: int
    base_win: int
    star_wild_win: int
    hold_and_cash_win: int
    progressive_win: int
    pool_before: int
    pool_after: int
    pool_refill: int
    balance_before: int
    balance_after: int
    draws: list[int]
    events: list[dict[str, Any]]
    prev_hash: str
    hash: str
    build_sha256: str | None = None
    """The build that played it (SHA-256 of its software manifest); null before migration
    0012."""
    model_sha256: str | None = None
    """The model's canonical SHA-256; null before migration 0012."""


class RoundPagePublic(Public):
    rounds: list[RoundSummary]
    next_before: int | None


class FreeRoundPublic(Public):
    """A free round's grant after the round."""

    grant_id: int
    rounds_left: int
    winnings: int
    """What the grant's rounds paid so far (cents)."""
    paid_win: int
    """What this round paid."""
    withheld: int
    """What this round won above the grant's cap and did not pay (the player is told)."""


class SpinPublic(Public):
    round: RoundPublic
    balance: int
    replayed: bool
    reality_check: RealityCheckPublic
    session_time_left_seconds: int | None = None
    """Operator mode: seconds left of the session's time limit from its launch (0: reached,
    no more spins in this session); ``None`` when the session has no time limit."""
    free_round: FreeRoundPublic | None = None
    """A free round (the spin named a grant): its grant after it."""


class JackpotPublic(Public):
    pool: int
    seed: int
    currency: str = "EUR"
    contribution_rate: str
    updated_at: datetime | None


class LimitsPublic(Public):
    currency: str = "EUR"
    """The wallet's currency: every amount here is in its minor units. The default limits
    (``STARFEVER_WEEKLY_DEPOSIT_LIMIT``, ...) are the same number of minor units in every
    currency (EUR 400 or GBP 400; ADR 0078)."""
    weekly_deposit_limit: int
    default_limit: int
    deposited_last_7_days: int
    remaining: int
    pending_limit: int | None
    pending_effective_at: datetime | None


class SelfExclusionPublic(Public):
    excluded: bool
    excluded_until: datetime | None


class HealthPublic(Public):
    status: str
    database: str
    model: str
    model_version: str
    test_mode: bool


class ReadyPublic(Public):
    status: str
    database: str


class ReadyzPublic(ReadyPublic):
    wallet: str
    """Operator mode: the last background probe of the operator's wallet (``answers``,
    ``down``, ``unknown`` before the first; never a reason for 503); ``none`` (the ledger)."""


class LivePublic(Public):
    status: str


class PoolMetersPublic(Public):
    pool: int
    seed: int
    contributions: int
    wins: int
    refills: int
    hits: int
    carry: str
    updated_at: datetime | None
    currency: str = "EUR"


class RtpRowPublic(Public):
    model_name: str
    model_version: str
    line_bet: int | None
    rounds: int
    total_bet: int
    total_win: int
    progressive_win: int
    actual_rtp: float | None
    actual_game_rtp: float | None
    interval_99: tuple[float, float] | None
    theoretical_rtp: float | None
    theoretical_game_rtp: float | None


class RtpPublic(Public):
    by_model: list[RtpRowPublic]
    by_bet_class: list[RtpRowPublic]
    note: str
    free_by_bet_class: list[RtpRowPublic] = []
    """Free rounds alone, per model and bet class, at their grants' stakes (ADR 0064); the
    other rows are of paid rounds only."""
    currency: str = "EUR"
    """The currency of every row's rounds and sums (minor units; ADR 0078)."""


class PlayerRowPublic(Public):
    username: str
    balance: int | None = Field(description="None for an operator-mode player: the operator "
                                            "keeps the balance")
    created_at: datetime
    excluded_until: datetime | None


class PlayersPublic(Public):
    players: list[PlayerRowPublic]


class SoftwareCheckPublic(Public):
    ok: bool
    manifest: str
    manifest_sha256: str | None
    build_sha256: str
    version: str
    files_checked: int
    differences: list[str]


class RuntimeCheckPublic(Public):
    ok: bool
    manifest: str
    manifest_sha256: str | None
    environment_sha256: str
    differences: list[str]


class ModelIdentityPublic(Public):
    name: str
    version: str
    sha256: str
    approved: bool


class SoftwarePublic(Public):
    software: SoftwareCheckPublic
    environment: str
    runtime: RuntimeCheckPublic
    running_sha256: str
    model: ModelIdentityPublic
    approved_models: list[str]
    warnings: list[str]


# The back office (``/operator``): a player in full, searches, meters, events, the audit.
class PlayerLinePublic(Public):
    username: str
    balance: int | None
    created_at: datetime
    excluded_until: datetime | None
    external_id: str | None
    currency: str | None = None
    """The wallet's currency: of the balance, the deposit limits and the cashier lines (ADR
    0076, 0078); ``None`` in operator mode."""


class CashierLinePublic(Public):
    id: int
    kind: str
    amount: int
    balance_after: int | None
    created_at: datetime


class PlayerTotalsPublic(Public):
    currency: str
    rounds: int
    total_bet: int
    total_win: int


class PlayerFilePublic(PlayerLinePublic):
    birth_date: date | None
    limits: LimitsPublic | None
    play_started_at: datetime | None
    net_result: int
    rounds: int
    total_bet: int | None
    """``None`` where the player's rounds are of several currencies (see ``totals``)."""
    total_win: int | None
    cashier: list[CashierLinePublic]
    totals: list[PlayerTotalsPublic] = []
    """Rounds, bets and wins per currency (ADR 0078): never a sum of two currencies."""


class PlayerSearchPublic(Public):
    players: list[PlayerLinePublic]


class RoundLinePublic(Public):
    id: int
    username: str
    created_at: datetime
    line_bet: int
    total_bet: int
    total_win: int
    feature: str | None
    test: bool
    model_name: str
    model_version: str
    player_id: str | None = None
    """Operator mode: the player's id in the operator's platform."""
    grant_id: int | None = None
    """A free round: Star Fever's id of its grant (``None``: a paid round)."""
    currency: str = "EUR"
    """The currency of its amounts (minor units; ADR 0076)."""
    market: str | None = None
    """The market it was played in (``None``: before migration 0028; ADR 0078)."""


class WalletCallPublic(Public):
    """One call to the operator's wallet with both sides' ids (operator mode)."""

    transaction_id: str
    """Star Fever's id of the call."""
    operator_transaction_id: str | None
    """The operator's id of it, from its reply (``None``: not answered yet, or refused)."""
    kind: str
    status: str
    error: str | None
    amount: int
    jackpot_amount: int
    round_ref: str
    """The ``round_id`` the operator was sent."""
    round_id: int | None
    debit_transaction_id: str | None
    attempts: int
    """The tries that failed (0: answered at the first; a pending call is sent again at
    ``next_attempt_at``)."""
    next_attempt_at: datetime
    created_at: datetime
    updated_at: datetime
    username: str
    player_id: str | None


class WalletCallsPublic(Public):
    calls: list[WalletCallPublic]


class RoundSearchPublic(Public):
    rounds: list[RoundLinePublic]
    next_before: int | None


class RecalledRoundPublic(Public):
    username: str
    round: RoundPublic
    brand: str | None = None
    """Operator mode: the brand the launch of the round's session named (``None``: none)."""
    player_id: str | None = None
    """Operator mode: the player's id in the operator's platform."""
    wallet_calls: list[WalletCallPublic] = []
    """Operator mode: the round's debit and credit, oldest first."""


class DayLinePublic(Public):
    day: str
    line_bet: int | None
    rounds: int
    bets: int
    wins: int
    ggr: int


class RefillPublic(Public):
    round_id: int
    created_at: datetime
    amount: int
    pool_after: int


class PoolPublic(Public):
    pool: int
    seed: int
    contributions: int
    wins: int
    refills: int
    hits: int
    recent_refills: list[RefillPublic]
    currency: str = "EUR"


class PendingCreditPublic(Public):
    transaction_id: str
    round_id: int | None
    amount: int
    attempts: int
    created_at: datetime
    username: str
    external_id: str | None
    """The player's id in the operator's platform (as the launch gave it)."""


class PendingCreditsPublic(Public):
    count: int
    amount: int
    oldest: datetime | None
    calls: list[PendingCreditPublic]


class SettlementProposalPublic(Public):
    status: str
    reason: str
    proposed_by: str
    proposed_at: datetime


class UnpaidWinPublic(Public):
    round_id: int | None
    round_ref: str
    """The ``round_id`` the operator's wallet was sent."""
    transaction_id: str
    """Star Fever's id of the refused credit."""
    debit_transaction_id: str | None
    operator_debit_transaction_id: str | None
    """The operator's own id of the round's debit."""
    amount: int
    jackpot_amount: int
    error: str | None
    """The operator's answer: the error code of its refusal."""
    attempts: int
    played_at: datetime
    since: datetime
    """When the refusal was recorded."""
    username: str
    external_id: str | None
    """The player's id in the operator's platform."""
    settlement: SettlementProposalPublic | None = None
    """A manual settlement proposed for it, awaiting a second operator's approval."""


class UnpaidWinsPublic(Public):
    count: int
    amount: int
    oldest: datetime | None
    wins: list[UnpaidWinPublic]
    settled_count: int = 0
    """Refused wins settled manually (approved by a second operator; ADR 0061): no longer
    unpaid, never paid by the operator's wallet."""
    settled_amount: int = 0
    currency: str | None = None
    """The currency of every win and sum here (ADR 0078)."""


class ResendPublic(Public):
    """An unpaid win's credit sent again (ADR 0061)."""

    round_id: int
    transaction_id: str
    """The credit's id: the same transaction as the refused one."""
    payment: str
    """After this attempt: ``paid`` (acknowledged), ``unpaid`` (refused again: ``error``) or
    ``pending`` (no answer: the resender sends it again until answered)."""
    error: str | None
    operator_transaction_id: str | None


class SettlementCreate(Request):
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=10,
                                             max_length=500)]
    """Why the win is settled outside the wallet (how, by whom, the operator's reference)."""


class SettlementPublic(Public):
    """A manual settlement of an unpaid win (ADR 0061)."""

    round_id: int
    transaction_id: str
    amount: int
    status: str
    """``proposed`` (awaiting another operator's approval), ``approved`` (the round is
    ``settled_manually``) or ``withdrawn``."""
    reason: str
    proposed_by: str
    proposed_at: datetime
    approved_by: str | None
    approved_at: datetime | None
    payment: str
    """The round's payment now."""


class WalletCapabilitiesPublic(Public):
    """What the wallet this server runs can do, so that a client offers only what works."""

    keeps_balances: bool
    """Balances, deposits, withdrawals, deposit limits and self-exclusion are kept here
    (false: the operator keeps them, operator mode)."""
    calls_operator: bool
    """Spins call the operator's wallet: credits can be pending, unpaid or settled."""
    launches_players: bool


class MetersPublic(Public):
    since: date
    until: date
    daily: list[DayLinePublic]
    """Per UTC day: a line per bet class, then the day's total (``line_bet`` null)."""
    by_bet_class: list[RtpRowPublic]
    """Every paid round so far (test and free rounds left out), per model and bet class."""
    by_model: list[RtpRowPublic]
    pool: PoolPublic
    """``currency``'s pool (``pools``: every currency's, ADR 0076)."""
    pending_credits: PendingCreditsPublic | None
    """Operator mode only."""
    unpaid_wins: UnpaidWinsPublic | None = None
    """Operator mode only: credits the operator's wallet refused (never counted as paid)."""
    free_by_bet_class: list[RtpRowPublic] = []
    """Free rounds alone (ADR 0064), per model and bet class, at their grants' stakes."""
    pools: list[PoolPublic] = []
    """Every served currency's pool, by currency code."""
    currency: str = "EUR"
    """The currency of ``daily``, the RTP rows, ``pool``, the pending credits and the unpaid
    wins: ``?currency=``, default the first served (ADR 0076, 0078)."""
    currencies: list[str] = []
    """The served currencies (the back office's currency picker)."""


class EventPublic(Public):
    id: int
    created_at: datetime
    kind: str
    actor: str | None
    client: str | None
    detail: dict[str, Any]


class EventsPublic(Public):
    events: list[EventPublic]
    next_before: int | None
    kinds: list[str]


class AuditPublic(Public):
    last: EventPublic | None
    """The newest ``starfever audit`` result (``audit_passed`` or ``audit_failed``)."""
    statement: dict[str, Any]
    """A signed statement of both chain heads now (as ``starfever chain-statement``)."""


# ------------------------------------------------------------- the operator's controls (0067)


class MaintenancePublic(Public):
    """The game's maintenance switch (ADR 0067)."""

    maintenance: bool
    since: datetime | None
    retry_after_seconds: int
    reason: str | None = None
    """The operator's reason (the back office and the signed API; never the public route)."""


class MaintenanceUpdate(Request):
    """The back office closes the game for maintenance or opens it again."""

    maintenance: bool
    reason: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    retry_after_seconds: Annotated[int | None, Field(ge=1, le=86400)] = None


class TerminateCreate(Request):
    """The back office ends a player's sessions."""

    reason: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class TerminatedPublic(Public):
    terminated: int
    """How many live sessions ended."""


# ------------------------------------------------------------- demo play (ADR 0066)


class DemoSessionCreate(Request):
    """Open demo play: ``{}`` from the stand-alone page ("Play for fun"), or the
    ``launch_token`` of an operator's demo launch."""

    launch_token: Annotated[str | None, StringConstraints(min_length=1, max_length=128)] = None


class DemoSessionPublic(Public):
    token: str
    expires_at: datetime
    balance: int
    currency: str = "EUR"
    """The currency its amounts are shown in: its operator launch's, else the first served."""
    demo: bool = True


class DemoWalletPublic(Public):
    balance: int
    currency: str = "EUR"
    reality_check: None = None
    demo: bool = True


class DemoPoolPublic(Public):
    pool: int
    demo: bool = True
