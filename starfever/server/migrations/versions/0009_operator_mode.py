"""Operator mode: the operator's player id of an account, launch tokens, and every call of the
operator's wallet (debit, credit, rollback) with its state.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_AT = sa.DateTime(timezone=False)


def upgrade() -> None:
    # a column and a unique index, not a table constraint: on SQLite a constraint means
    # rebuilding accounts, which the other tables' foreign keys forbid once it holds players
    op.add_column("accounts", sa.Column("external_id", sa.String(128), nullable=True))
    op.create_index("uq_accounts_external_id", "accounts", ["external_id"], unique=True)
    op.create_table(
        "launch_tokens",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("account_id", _ID, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("language", sa.String(2), nullable=False),
        sa.Column("market", sa.String(32), nullable=False),
        sa.Column("return_url", sa.String(512), nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("expires_at", _AT, nullable=False),
        sa.Column("used_at", _AT, nullable=True),
    )
    op.create_table(
        "wallet_calls",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("transaction_id", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("account_id", _ID, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("session_id", _ID, sa.ForeignKey("sessions.id"), nullable=True),
        sa.Column("round_ref", sa.String(64), nullable=False),
        sa.Column("round_id", sa.BigInteger(), sa.ForeignKey("rounds.id"), nullable=True),
        sa.Column("idempotency_key", sa.String(128), nullable=True),
        sa.Column("request_hash", sa.String(64), nullable=True),
        sa.Column("debit_transaction_id", sa.String(64), nullable=True),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("jackpot_amount", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.String(32), nullable=True),
        sa.Column("operator_transaction_id", sa.String(128), nullable=True),
        sa.Column("balance", sa.BigInteger(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _AT, nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("updated_at", _AT, nullable=False),
        sa.CheckConstraint("kind IN ('debit', 'credit', 'rollback')",
                           name="ck_wallet_calls_kind"),
    )
    op.create_index("ix_wallet_calls_due", "wallet_calls", ["status", "next_attempt_at"])
    op.create_index("ix_wallet_calls_round_id", "wallet_calls", ["round_id"])
    op.create_index("ix_wallet_calls_debit_transaction_id", "wallet_calls",
                    ["debit_transaction_id"])


def downgrade() -> None:
    op.drop_table("wallet_calls")
    op.drop_table("launch_tokens")
    op.drop_index("uq_accounts_external_id", table_name="accounts")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("external_id")
