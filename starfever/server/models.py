"""The tables. Money columns are integer cents (BIGINT); a wallet's balance and the pool can
never go negative (CHECK constraints back the services' checks). The schema itself is created
by the Alembic migrations in ``migrations/versions``; these classes must match them."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from starfever.server import books

Id = BigInteger().with_variant(Integer(), "sqlite")
"""A 64-bit key that SQLite also auto-increments (it needs ``INTEGER PRIMARY KEY``)."""

PLAYER = "player"
OPERATOR = "operator"
ROLES = (PLAYER, OPERATOR)

# Ledger books: every movement of money is a set of entries that sum to zero. Named in
# ``books`` (no database there, for the pure settlement rule) and here for the tables' users.
WALLET, POOL, HOUSE, CASHIER = books.WALLET, books.POOL, books.HOUSE, books.CASHIER
OPERATOR_BOOK = books.OPERATOR_BOOK
RoundRow = books.RoundRow


class UtcDateTime(TypeDecorator[datetime]):
    """A UTC instant stored as a naive UTC timestamp, read back timezone-aware, with the
    microseconds intact on every database (the round hash covers it)."""

    impl = DateTime(timezone=False)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored; use datetime.now(UTC)")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    """Base of every table."""


class Account(Base):
    """A player or an operator."""

    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    username: Mapped[str] = mapped_column(String(32), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    birth_date: Mapped[date | None] = mapped_column(Date)
    excluded_until: Mapped[datetime | None] = mapped_column(UtcDateTime)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    play_started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    """When the player's current play period began (the reality check's elapsed time); one
    clock per player, across all of their sessions."""
    reality_check_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    """When the reality-check interval last started (period start or last acknowledgement)."""
    net_result: Mapped[int] = mapped_column(BigInteger, default=0)
    """Wins minus bets of the rounds of the current play period, in cents."""
    totp_secret: Mapped[str | None] = mapped_column(String(64))
    """An operator's TOTP secret (base32): the second factor of an operator log-in."""
    totp_last_step: Mapped[int | None] = mapped_column(BigInteger)
    """The 30-second step of the last code accepted (a code is good once)."""
    external_id: Mapped[str | None] = mapped_column(String(128))
    """Operator mode: the operator's ``player_id`` of this player (``None`` otherwise)."""
    reality_check_seconds: Mapped[int | None] = mapped_column(Integer)
    """Operator mode: the reality-check interval the launch of the player's newest session set
    (``None``: the server's ``STARFEVER_REALITY_CHECK_SECONDS``)."""
    __table_args__ = (CheckConstraint("role IN ('player', 'operator')", name="ck_accounts_role"),
                      Index("uq_accounts_external_id", "external_id", unique=True))


class SessionToken(Base):
    """A log-in: the HMAC of the bearer token, never the token itself."""

    __tablename__ = "sessions"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    ended_because: Mapped[str | None] = mapped_column(String(16))
    """Why the session ended before its expiry, where not by a log-out: ``replaced`` (a later
    session of the player, in a market with one session per player) or ``panic`` (the panic
    button); ``None`` otherwise (migration 0026, ADR 0075)."""
    reality_check_at: Mapped[datetime] = mapped_column(UtcDateTime)
    """Its log-in time (kept for old rows; the reality check's clock is the account's)."""
    net_result: Mapped[int] = mapped_column(BigInteger, default=0)
    """Unused since the clock moved to the account (migration 0004)."""
    operator_session: Mapped[str | None] = mapped_column(String(256))
    """Operator mode: the operator's own session token from the launch, sent back unchanged
    in every ``balance``, ``debit`` and ``credit`` (wallet protocol v2; ``None`` before it)."""
    brand: Mapped[str | None] = mapped_column(String(64))
    """Operator mode: the launch's ``brand`` (the operator's site the player came from)."""
    play_ends_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    """Operator mode: when the launch's ``session_time_limit_seconds`` runs out; from then no
    new spin is taken in this session (``None``: no time limit)."""
    terminated_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    """When the operator ended the session (``services.controls``): from then no new spin is
    taken (``401 session_terminated``); a spin whose debit was recorded before still settles."""
    terminated_reason: Mapped[str | None] = mapped_column(String(200))
    """The operator's reason for ending it."""
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    """The session's currency: its wallet's (ledger mode) or its launch's (operator mode); every
    wallet call of the session carries it
    (ISO 4217; migration 0027, ADR 0076)."""


class Wallet(Base):
    """A player's balance; always the sum of the player's wallet ledger entries."""

    __tablename__ = "wallets"
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    balance: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    """The one currency the wallet holds, in minor units of which ``balance`` is
    (ISO 4217; migration 0027, ADR 0076)."""
    __table_args__ = (CheckConstraint("balance >= 0", name="ck_wallets_balance"),)


class LedgerEntry(Base):
    """One booking on one book (wallet, pool, house or cashier)."""

    __tablename__ = "ledger_entries"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    book: Mapped[str] = mapped_column(String(16))
    account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"))
    kind: Mapped[str] = mapped_column(String(24))
    amount: Mapped[int] = mapped_column(BigInteger)
    balance_after: Mapped[int | None] = mapped_column(BigInteger)
    round_id: Mapped[int | None] = mapped_column(ForeignKey("rounds.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    chain_prev: Mapped[str | None] = mapped_column(String(64))
    """A deposit's or withdrawal's wallet entry: the cashier chain's previous hash."""
    chain_hash: Mapped[str | None] = mapped_column(String(64))
    """... and its own (``services.chain.cashier_hash``)."""
    __table_args__ = (Index("ix_ledger_entries_account", "account_id", "id"),)


class JackpotPool(Base):
    """The €€€ pool of one currency, shared by every player who plays in it, with its
    meters."""

    __tablename__ = "jackpot_pool"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    amount: Mapped[int] = mapped_column(BigInteger)
    seed: Mapped[int] = mapped_column(BigInteger)
    carry: Mapped[str] = mapped_column(String(64))
    """The fraction of a cent contributed but not yet booked, as ``"n/d"``."""
    contributions: Mapped[int] = mapped_column(BigInteger)
    wins: Mapped[int] = mapped_column(BigInteger)
    refills: Mapped[int] = mapped_column(BigInteger)
    """Operator funding, the initial seed included."""
    hits: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    """The currency of the stakes that feed it and the rounds it pays; one pool per currency
    (ISO 4217; migration 0027, ADR 0076)."""
    __table_args__ = (CheckConstraint("amount >= 0", name="ck_jackpot_pool_amount"),
                      Index("uq_jackpot_pool_currency", "currency", unique=True))


class ChainHead(Base):
    """The head of a hash chain: row 1 the rounds' (with the keyed boundary), row 2 the
    cashier's (deposits and withdrawals)."""

    __tablename__ = "chain_head"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last_round_id: Mapped[int] = mapped_column(BigInteger)
    """Row 1: the newest round's id; row 2: the newest cashier wallet entry's id."""
    last_hash: Mapped[str] = mapped_column(String(64))
    keyed_from: Mapped[int | None] = mapped_column(BigInteger)
    """Row 1: the first round id hashed with the key (HMAC); earlier ones are SHA-256."""
    ledger_keyed_from: Mapped[int | None] = mapped_column(BigInteger)
    """Row 1: the first ledger entry id from which cashier entries are chained."""
    keyed_mac: Mapped[str | None] = mapped_column(String(64))
    """Row 1: HMAC of the boundary under the key (so it cannot be moved without the key),
    and from migration 0016 on of the ledger entries stored before it
    (``services.chain.sealed_boundary_mac``)."""
    head_mac: Mapped[str | None] = mapped_column(String(64))
    """HMAC of the row's id, last id and last hash (``services.chain.head_mac``), written with
    every move of the head: the chain's end cannot be cut off without the key (migration
    0016; ``None`` only at genesis, or before the first start with that version)."""


class Round(Base):
    """One played round: what was bet, drawn, shown and paid, chained by hash."""

    __tablename__ = "rounds"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    """The round's position in the hash chain (1, 2, ...)."""
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    session_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id"), index=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    request_hash: Mapped[str] = mapped_column(String(64))
    model_name: Mapped[str] = mapped_column(String(64))
    model_version: Mapped[str] = mapped_column(String(32))
    line_bet: Mapped[int] = mapped_column(BigInteger)
    total_bet: Mapped[int] = mapped_column(BigInteger)
    contribution: Mapped[int] = mapped_column(BigInteger)
    base_win: Mapped[int] = mapped_column(BigInteger)
    star_wild_win: Mapped[int] = mapped_column(BigInteger)
    hold_and_cash_win: Mapped[int] = mapped_column(BigInteger)
    progressive_win: Mapped[int] = mapped_column(BigInteger)
    total_win: Mapped[int] = mapped_column(BigInteger)
    feature: Mapped[str | None] = mapped_column(String(16))
    pool_before: Mapped[int] = mapped_column(BigInteger)
    pool_after: Mapped[int] = mapped_column(BigInteger)
    pool_refill: Mapped[int] = mapped_column(BigInteger)
    balance_before: Mapped[int] = mapped_column(BigInteger)
    balance_after: Mapped[int] = mapped_column(BigInteger)
    draws: Mapped[str] = mapped_column(Text)
    """JSON array of every random draw, in order."""
    events: Mapped[str] = mapped_column(Text)
    """The engine's event log as canonical JSON."""
    test: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
    hash_scheme: Mapped[int] = mapped_column(SmallInteger, default=1)
    """1: SHA-256 (rounds stored before the key); 2: HMAC-SHA256 under the audit key; 3: the
    same with the two hashes below (``services.chain``)."""
    build_sha256: Mapped[str | None] = mapped_column(String(64))
    """The build that played it: SHA-256 of the running package's software manifest
    (``starfever.certify.software``); ``None`` for rounds stored before migration 0012."""
    model_sha256: Mapped[str | None] = mapped_column(String(64))
    """The model's canonical SHA-256; ``None`` for rounds stored before migration 0012."""
    grant_id: Mapped[int | None] = mapped_column(BigInteger)
    """A free round: the grant it was played on (``free_round_grants.id``); ``None`` for a
    paid round (migration 0023; hashed under scheme 4)."""
    paid_win: Mapped[int | None] = mapped_column(BigInteger)
    """A free round: what was paid of ``total_win`` (less where the grant's cap cut it)."""
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    """The currency the round was staked and paid in; hashed when it is not EUR
    (ISO 4217; migration 0027, ADR 0076)."""
    market: Mapped[str | None] = mapped_column(String(32))
    """The market profile the settling server ran (``at``, ``de``, ``uk``, ...); hashed when
    set. ``None``: a round from before migration 0028 (or settled by an older release during a
    rolling upgrade), whose market is not known (ADR 0078)."""

    @property
    def paid(self) -> int:
        """What the round paid the player: ``total_win``, or a free round's ``paid_win``."""
        return self.total_win if self.paid_win is None else self.paid_win

    @property
    def staked(self) -> int:
        """What the player staked: ``total_bet``, or nothing for a free round."""
        return self.total_bet if self.grant_id is None else 0
    __table_args__ = (
        UniqueConstraint("account_id", "idempotency_key", name="uq_rounds_idempotency"),
        Index("ix_rounds_account", "account_id", "id"),
        Index("ix_rounds_grant", "grant_id"),
    )


class LoginFailure(Base):
    """A failed (or not yet verified) log-in attempt for a username from an address: the
    brute-force limits count these in the database, so they hold across worker processes and
    machines."""

    __tablename__ = "login_failures"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    username: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    client: Mapped[str | None] = mapped_column(String(64))
    """The address the attempt came from (``None`` for rows from before it was recorded)."""
    __table_args__ = (Index("ix_login_failures_username", "username", "created_at"),
                      Index("ix_login_failures_client", "client", "created_at"))


class DepositLimit(Base):
    """A player's own weekly deposit limit, and a pending increase."""

    __tablename__ = "deposit_limits"
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    amount: Mapped[int] = mapped_column(BigInteger)
    pending_amount: Mapped[int | None] = mapped_column(BigInteger)
    pending_effective_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


class WriteProbe(Base):
    """One row per server process: the readiness check's committed write."""

    __tablename__ = "write_probes"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    """``host:pid`` of the process that wrote it."""
    checked_at: Mapped[datetime] = mapped_column(UtcDateTime)


class Lease(Base):
    """A task that one server process of the installation runs at a time (the wallet's
    resender, ADR 0062): who holds it and until when (renewed while held; a holder that died
    leaves it to expire, one that stops hands it over at once)."""

    __tablename__ = "leases"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    holder: Mapped[str] = mapped_column(String(128))
    """``host:pid:nonce`` of the process holding it."""
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)


class RegistrationAttempt(Base):
    """A registration from an address, counted by the registration throttle."""

    __tablename__ = "registration_attempts"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    client: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    __table_args__ = (Index("ix_registration_attempts_client", "client", "created_at"),)


class LaunchToken(Base):
    """A single-use launch token (operator mode), stored only as an HMAC."""

    __tablename__ = "launch_tokens"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    language: Mapped[str] = mapped_column(String(2))
    market: Mapped[str] = mapped_column(String(32))
    return_url: Mapped[str] = mapped_column(String(512))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    launch_id: Mapped[str | None] = mapped_column(String(128))
    """The operator's ``launch_id`` (wallet protocol v2), unique: a second launch with it is
    refused, in every worker and after any restart (``None`` for launches before v2)."""
    operator_session: Mapped[str | None] = mapped_column(String(256))
    """The launch's ``operator_session``, handed to the session the token opens."""
    brand: Mapped[str | None] = mapped_column(String(64))
    """The launch's optional fields, handed to the session (and the player) it opens."""
    reality_check_seconds: Mapped[int | None] = mapped_column(Integer)
    session_time_limit_seconds: Mapped[int | None] = mapped_column(Integer)
    birth_date: Mapped[date | None] = mapped_column(Date)
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    """The launch's currency, handed to the session it opens (migration 0027)."""
    __table_args__ = (Index("uq_launch_tokens_launch_id", "launch_id", unique=True),)


UNPLAYED_DEBIT = ("kind = 'debit' AND round_id IS NULL "
                  "AND status IN ('pending', 'acknowledged')")
"""A debit whose spin is in flight, or was left without its round (the stale-debit search)."""


class WalletCall(Base):
    """One debit, credit or rollback of the operator's wallet (operator mode), recorded before
    it is sent and kept with the operator's answer: ``pending`` until answered (a credit or a
    rollback is resent until it is ``acknowledged``), ``refused`` (a 4xx, final), or for a debit
    ``rolled_back`` (its rollback was recorded). A round is ``pending_credit`` while its credit
    is pending."""

    __tablename__ = "wallet_calls"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    transaction_id: Mapped[str] = mapped_column(String(64), unique=True)
    """Star Fever's id of the call (deterministic, see ``services.operator_wallet``)."""
    kind: Mapped[str] = mapped_column(String(8))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    session_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id"))
    round_ref: Mapped[str] = mapped_column(String(64))
    """The ``round_id`` the operator is sent (known before the round has its chain id)."""
    round_id: Mapped[int | None] = mapped_column(ForeignKey("rounds.id"), index=True)
    """The stored round: a credit's, and a played debit's (set with the round, ADR 0024);
    ``None`` for a rollback and for a debit without a round."""
    idempotency_key: Mapped[str | None] = mapped_column(String(128))
    request_hash: Mapped[str | None] = mapped_column(String(64))
    debit_transaction_id: Mapped[str | None] = mapped_column(String(64), index=True)
    amount: Mapped[int] = mapped_column(BigInteger)
    jackpot_amount: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str | None] = mapped_column(String(32))
    operator_transaction_id: Mapped[str | None] = mapped_column(String(128))
    balance: Mapped[int | None] = mapped_column(BigInteger)
    """The operator's balance in its answer."""
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcDateTime)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    free_round: Mapped[str | None] = mapped_column(Text)
    """A free round's call: its ``free_round`` block as JSON (migration 0023)."""
    currency: Mapped[str] = mapped_column(String(3), default="EUR", server_default="EUR")
    """The currency of the call (its session's), sent with every resend
    (ISO 4217; migration 0027, ADR 0076)."""
    __table_args__ = (
        CheckConstraint("kind IN ('debit', 'credit', 'rollback')", name="ck_wallet_calls_kind"),
        Index("ix_wallet_calls_due", "status", "next_attempt_at"),
        # support finds a call by the operator's id (migration 0020)
        Index("ix_wallet_calls_operator_transaction_id", "operator_transaction_id"),
        # the retrier's stale-debit search: only the debits of spins in flight (migration 0015)
        Index("ix_wallet_calls_unplayed_debits", "updated_at",
              postgresql_where=text(UNPLAYED_DEBIT), sqlite_where=text(UNPLAYED_DEBIT)),
    )


SETTLEMENT_STATES = ("proposed", "approved", "withdrawn")


class WinSettlement(Base):
    """A manual settlement of an unpaid win (operator mode, ADR 0061): the win the operator's
    wallet refused to credit was settled outside the wallet. One operator account proposes it
    with a reason; it settles the round only once *another* account approved it (the CHECK
    backs the service's refusal of a proposer's own approval). One row per round, the state of
    its latest proposal; each step is also a significant event."""

    __tablename__ = "win_settlements"
    round_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("rounds.id"), primary_key=True,
                                          autoincrement=False)
    transaction_id: Mapped[str] = mapped_column(String(64))
    """The refused credit's id (``wallet_calls.transaction_id``)."""
    amount: Mapped[int] = mapped_column(BigInteger)
    """The credit's amount, as it was when proposed."""
    reason: Mapped[str] = mapped_column(String(500))
    status: Mapped[str] = mapped_column(String(16))
    proposed_by: Mapped[str] = mapped_column(String(32))
    proposed_at: Mapped[datetime] = mapped_column(UtcDateTime)
    approved_by: Mapped[str | None] = mapped_column(String(32))
    approved_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    __table_args__ = (
        CheckConstraint("status IN ('proposed', 'approved', 'withdrawn')",
                        name="ck_win_settlements_status"),
        CheckConstraint("approved_by IS NULL OR approved_by <> proposed_by",
                        name="ck_win_settlements_four_eyes"),
        CheckConstraint("status <> 'approved' OR approved_by IS NOT NULL",
                        name="ck_win_settlements_approver"),
    )


class KnownClient(Base):
    """An address an account logged in from: the per-address log-in limit spares it."""

    __tablename__ = "known_clients"
    username: Mapped[str] = mapped_column(String(32), primary_key=True)
    client: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_login_at: Mapped[datetime] = mapped_column(UtcDateTime)


class SignificantEvent(Base):
    """One entry of the significant-events log (``services.events``): what happened, who did
    it, from where, and its particulars as JSON (never a secret)."""

    __tablename__ = "significant_events"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    kind: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str | None] = mapped_column(String(64))
    """The operator or player who acted (``None`` for the server itself)."""
    client: Mapped[str | None] = mapped_column(String(64))
    """The address the request came from, where there was one."""
    detail: Mapped[str] = mapped_column(Text)
    """Canonical JSON object."""
    __table_args__ = (Index("ix_significant_events_kind", "kind", "id"),
                      Index("ix_significant_events_created", "created_at"))


class SpinPacing(Base):
    """When a player's last round began (and its key), for a market with a minimum round
    duration (``services.pacing``): in the database, so every worker and machine sees it."""

    __tablename__ = "spin_pacing"
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    last_spin_ms: Mapped[int] = mapped_column(BigInteger)
    """Milliseconds since the epoch (UTC) of the last spin the pacing let through."""
    last_key: Mapped[str] = mapped_column(String(128))
    """Its Idempotency-Key: a retry of that very spin is never paced (it replays its round)."""


class CashierTransaction(Base):
    """A deposit or withdrawal sent with an ``Idempotency-Key`` (ADR 0017): the key, unique
    over the installation, names the request's one booking, so a retry finds it and books
    nothing."""

    __tablename__ = "cashier_transactions"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(16))
    """``deposit`` or ``withdrawal``."""
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    operator_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"))
    """The operator account that sent it."""
    amount: Mapped[int] = mapped_column(BigInteger)
    entry_id: Mapped[int] = mapped_column(ForeignKey("ledger_entries.id"))
    """The wallet's ledger entry it booked."""
    balance_after: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    __table_args__ = (
        CheckConstraint("kind IN ('deposit', 'withdrawal')", name="ck_cashier_transactions_kind"),
        Index("uq_cashier_transactions_key", "idempotency_key", unique=True),
        Index("uq_cashier_transactions_entry", "entry_id", unique=True),
    )


class FreeRoundCampaign(Base):
    """An operator's free-round campaign (ADR 0064): the same grant for the players listed
    (granted when it is made) or for every player who opens the game between ``starts_at``
    and ``ends_at`` (granted then)."""

    __tablename__ = "free_round_campaigns"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    operator_id: Mapped[str] = mapped_column(String(128), unique=True)
    """The operator's own id of the campaign: the same id twice is one campaign."""
    request_hash: Mapped[str] = mapped_column(String(64))
    """The fingerprint of the terms it was made with (the same id with other terms: 409)."""
    every_player: Mapped[bool] = mapped_column(Boolean)
    starts_at: Mapped[datetime] = mapped_column(UtcDateTime)
    ends_at: Mapped[datetime] = mapped_column(UtcDateTime)
    rounds: Mapped[int] = mapped_column(Integer)
    line_bet: Mapped[int] = mapped_column(Integer)
    valid_days: Mapped[int] = mapped_column(Integer)
    """Each of its grants expires this many days after it is given."""
    max_win: Mapped[int | None] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    cancelled_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


class FreeRoundGrant(Base):
    """N free rounds at one line bet for one player until ``expires_at``, optionally with a cap
    on their total winnings (ADR 0064). ``rounds_played``, ``winnings`` and ``withheld`` move
    only with a free round's settlement, under this row's lock."""

    __tablename__ = "free_round_grants"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    operator_id: Mapped[str | None] = mapped_column(String(128), unique=True)
    """The operator's own id of a grant it made alone (``None`` for a campaign's)."""
    request_hash: Mapped[str | None] = mapped_column(String(64))
    campaign_id: Mapped[int | None] = mapped_column(ForeignKey("free_round_campaigns.id"))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    rounds: Mapped[int] = mapped_column(Integer)
    line_bet: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)
    max_win: Mapped[int | None] = mapped_column(BigInteger)
    rounds_played: Mapped[int] = mapped_column(Integer, server_default="0")
    winnings: Mapped[int] = mapped_column(BigInteger, server_default="0")
    """What its rounds paid (cents)."""
    withheld: Mapped[int] = mapped_column(BigInteger, server_default="0")
    """What its rounds won above the cap, not paid (cents)."""
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    cancelled_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    __table_args__ = (
        CheckConstraint("rounds_played >= 0 AND rounds_played <= rounds",
                        name="ck_free_round_grants_rounds"),
        UniqueConstraint("campaign_id", "account_id", name="uq_free_round_grants_campaign"),
        Index("ix_free_round_grants_account", "account_id", "id"),
    )


class GameControl(Base):
    """The game's switches as one row (``id = 1``, ``services.controls``): whether it is closed
    for maintenance (no new launch, session or round: ``503 maintenance``). In the database, so
    every worker and machine sees a change at once; read in the spin's own transaction."""

    __tablename__ = "game_controls"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    maintenance_since: Mapped[datetime | None] = mapped_column(UtcDateTime)
    """Since when the game is closed (``None``: open)."""
    retry_after_seconds: Mapped[int] = mapped_column(Integer, server_default=text("300"))
    """The ``Retry-After`` a refusal for maintenance answers."""
    reason: Mapped[str | None] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_by: Mapped[str | None] = mapped_column(String(64))


class DemoSession(Base):
    """A demo player (ADR 0066): a play balance behind a demo token, no account. Apart from
    the books: a demo spin writes only this row, the demo pool and its address's rate row."""

    __tablename__ = "demo_sessions"
    id: Mapped[int] = mapped_column(Id, primary_key=True)
    token_hash: Mapped[str | None] = mapped_column(String(64))
    """The HMAC of the demo token (``None`` until an operator's demo launch is taken)."""
    launch_hash: Mapped[str | None] = mapped_column(String(64))
    """An operator's demo launch: the HMAC of its single-use launch token."""
    launch_id: Mapped[str | None] = mapped_column(String(128))
    """The operator's ``launch_id`` (unique: a replayed demo launch is refused)."""
    launch_expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    verified: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    """The operator launched it for a player it verified (``verified_only`` markets)."""
    address: Mapped[str] = mapped_column(String(64))
    balance: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)
    last_spin_ms: Mapped[int | None] = mapped_column(BigInteger)
    """The start of the last demo round (the market's minimum round time holds in demo too)."""
    last_key: Mapped[str | None] = mapped_column(String(128))
    last_answer: Mapped[str | None] = mapped_column(Text)
    """The last spin's answer (JSON): a retry under its key answers it again."""
    rounds: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    __table_args__ = (CheckConstraint("balance >= 0", name="ck_demo_sessions_balance"),
                      Index("uq_demo_sessions_token_hash", "token_hash", unique=True),
                      Index("uq_demo_sessions_launch_hash", "launch_hash", unique=True),
                      Index("uq_demo_sessions_launch_id", "launch_id", unique=True),
                      Index("ix_demo_sessions_expires_at", "expires_at"))


class DemoPool(Base):
    """The demo €€€ pool: one row, fed by demo bets only; never the real pool."""

    __tablename__ = "demo_pool"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    amount: Mapped[int] = mapped_column(BigInteger)
    carry: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    __table_args__ = (CheckConstraint("amount >= 0", name="ck_demo_pool_amount"),)


class DemoRate(Base):
    """Demo play's per-address counters (fixed windows): sessions made and spins played."""

    __tablename__ = "demo_rates"
    address: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    window_start_ms: Mapped[int] = mapped_column(BigInteger)
    count: Mapped[int] = mapped_column(Integer)
