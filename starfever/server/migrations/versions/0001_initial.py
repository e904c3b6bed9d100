"""The initial schema: accounts, sessions, ledger wallet, pool, hash-chained rounds, limits.

Revision ID: 0001
Revises:
Create Date: 2026-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Money = sa.BigInteger
Instant = sa.DateTime


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", Id, primary_key=True),
        sa.Column("username", sa.String(32), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("birth_date", sa.Date(), nullable=True),
        sa.Column("excluded_until", Instant(), nullable=True),
        sa.Column("created_at", Instant(), nullable=False),
        sa.CheckConstraint("role IN ('player', 'operator')", name="ck_accounts_role"),
    )
    op.create_table(
        "sessions",
        sa.Column("id", Id, primary_key=True),
        sa.Column("account_id", Id, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", Instant(), nullable=False),
        sa.Column("expires_at", Instant(), nullable=False),
        sa.Column("revoked_at", Instant(), nullable=True),
        sa.Column("reality_check_at", Instant(), nullable=False),
        sa.Column("net_result", Money(), nullable=False, server_default="0"),
    )
    op.create_index("ix_sessions_account_id", "sessions", ["account_id"])
    op.create_table(
        "wallets",
        sa.Column("account_id", Id, sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("balance", Money(), nullable=False),
        sa.Column("updated_at", Instant(), nullable=False),
        sa.CheckConstraint("balance >= 0", name="ck_wallets_balance"),
    )
    op.create_table(
        "jackpot_pool",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("amount", Money(), nullable=False),
        sa.Column("seed", Money(), nullable=False),
        sa.Column("carry", sa.String(64), nullable=False),
        sa.Column("contributions", Money(), nullable=False),
        sa.Column("wins", Money(), nullable=False),
        sa.Column("refills", Money(), nullable=False),
        sa.Column("hits", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", Instant(), nullable=False),
        sa.CheckConstraint("amount >= 0", name="ck_jackpot_pool_amount"),
    )
    op.create_table(
        "chain_head",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("last_round_id", sa.BigInteger(), nullable=False),
        sa.Column("last_hash", sa.String(64), nullable=False),
    )
    op.create_table(
        "rounds",
        sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("account_id", Id, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("session_id", Id, sa.ForeignKey("sessions.id"), nullable=True),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("model_name", sa.String(64), nullable=False),
        sa.Column("model_version", sa.String(32), nullable=False),
        *(sa.Column(name, Money(), nullable=False) for name in (
            "line_bet", "total_bet", "contribution", "base_win", "star_wild_win",
            "hold_and_cash_win", "progressive_win", "total_win")),
        sa.Column("feature", sa.String(16), nullable=True),
        *(sa.Column(name, Money(), nullable=False) for name in (
            "pool_before", "pool_after", "pool_refill", "balance_before", "balance_after")),
        sa.Column("draws", sa.Text(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
        sa.Column("test", sa.Boolean(), nullable=False),
        sa.Column("created_at", Instant(), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.UniqueConstraint("account_id", "idempotency_key", name="uq_rounds_idempotency"),
    )
    op.create_index("ix_rounds_account", "rounds", ["account_id", "id"])
    op.create_index("ix_rounds_session_id", "rounds", ["session_id"])
    op.create_table(
        "ledger_entries",
        sa.Column("id", Id, primary_key=True),
        sa.Column("book", sa.String(16), nullable=False),
        sa.Column("account_id", Id, sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("amount", Money(), nullable=False),
        sa.Column("balance_after", Money(), nullable=True),
        sa.Column("round_id", sa.BigInteger(), sa.ForeignKey("rounds.id"), nullable=True),
        sa.Column("created_at", Instant(), nullable=False),
    )
    op.create_index("ix_ledger_entries_account", "ledger_entries", ["account_id", "id"])
    op.create_index("ix_ledger_entries_round_id", "ledger_entries", ["round_id"])
    op.create_table(
        "deposit_limits",
        sa.Column("account_id", Id, sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("amount", Money(), nullable=False),
        sa.Column("pending_amount", Money(), nullable=True),
        sa.Column("pending_effective_at", Instant(), nullable=True),
        sa.Column("updated_at", Instant(), nullable=False),
    )


def downgrade() -> None:
    for table in ("deposit_limits", "ledger_entries", "rounds", "chain_head", "jackpot_pool",
                  "wallets", "sessions", "accounts"):
        op.drop_table(table)
