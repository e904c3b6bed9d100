"""Manual settlements of unpaid wins (issue 35, ADR 0061): ``win_settlements``, one row per
round whose refused credit an operator proposed to settle outside the wallet, approved by a
second operator account (a CHECK refuses the proposer as approver). Expand-only: a new table.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

def upgrade() -> None:
    op.create_table(
        "win_settlements",
        sa.Column("round_id", sa.BigInteger(), sa.ForeignKey("rounds.id"), primary_key=True,
                  autoincrement=False),
        sa.Column("transaction_id", sa.String(64), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("proposed_by", sa.String(32), nullable=False),
        sa.Column("proposed_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("approved_by", sa.String(32), nullable=True),
        sa.Column("approved_at", sa.DateTime(timezone=False), nullable=True),
        sa.CheckConstraint("status IN ('proposed', 'approved', 'withdrawn')",
                           name="ck_win_settlements_status"),
        sa.CheckConstraint("approved_by IS NULL OR approved_by <> proposed_by",
                           name="ck_win_settlements_four_eyes"),
        sa.CheckConstraint("status <> 'approved' OR approved_by IS NOT NULL",
                           name="ck_win_settlements_approver"),
    )


def downgrade() -> None:
    op.drop_table("win_settlements")
