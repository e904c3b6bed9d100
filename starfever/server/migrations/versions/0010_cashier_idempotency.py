"""Cashier idempotency (issue 14, point 6): a deposit or withdrawal sent with an
``Idempotency-Key`` is recorded under that key, unique over the installation, so a retried
request returns its first answer and moves the money once (ADR 0017).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "cashier_transactions",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("account_id", _ID, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("operator_id", _ID, sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("entry_id", _ID, sa.ForeignKey("ledger_entries.id"), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
        sa.CheckConstraint("kind IN ('deposit', 'withdrawal')",
                           name="ck_cashier_transactions_kind"),
    )
    op.create_index("uq_cashier_transactions_key", "cashier_transactions",
                    ["idempotency_key"], unique=True)
    op.create_index("uq_cashier_transactions_entry", "cashier_transactions", ["entry_id"],
                    unique=True)


def downgrade() -> None:
    op.drop_table("cashier_transactions")
