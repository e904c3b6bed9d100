"""Free rounds (issue 36, ADR 0064): the operator's campaigns and grants, a free round's grant
and paid win on its round (chained under round hash scheme 4), and the ``free_round`` block a
free round's wallet calls carry (OPERATOR-WALLET.md v2). Expand-only: two new tables and
nullable columns.

Revision ID: 0023
Revises: 0026 (numbered before it, merged after it)
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0026"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "free_round_campaigns",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("operator_id", sa.String(128), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("every_player", sa.Boolean(), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("line_bet", sa.Integer(), nullable=False),
        sa.Column("valid_days", sa.Integer(), nullable=False),
        sa.Column("max_win", sa.BigInteger(), nullable=True),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("cancelled_at", sa.DateTime(timezone=False), nullable=True),
        sa.UniqueConstraint("operator_id", name="uq_free_round_campaigns_operator_id"),
    )
    op.create_table(
        "free_round_grants",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("operator_id", sa.String(128), nullable=True),
        sa.Column("request_hash", sa.String(64), nullable=True),
        sa.Column("campaign_id", sa.BigInteger(), sa.ForeignKey("free_round_campaigns.id"),
                  nullable=True),
        sa.Column("account_id", sa.BigInteger(), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("line_bet", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("max_win", sa.BigInteger(), nullable=True),
        sa.Column("rounds_played", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("winnings", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("withheld", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("cancelled_at", sa.DateTime(timezone=False), nullable=True),
        sa.CheckConstraint("rounds_played >= 0 AND rounds_played <= rounds",
                           name="ck_free_round_grants_rounds"),
        sa.UniqueConstraint("operator_id", name="uq_free_round_grants_operator_id"),
        sa.UniqueConstraint("campaign_id", "account_id", name="uq_free_round_grants_campaign"),
    )
    op.create_index("ix_free_round_grants_account", "free_round_grants", ["account_id", "id"])
    # nullable columns only: SQLite adds them without rebuilding a table
    op.add_column("rounds", sa.Column("grant_id", sa.BigInteger(), nullable=True))
    op.add_column("rounds", sa.Column("paid_win", sa.BigInteger(), nullable=True))
    op.create_index("ix_rounds_grant", "rounds", ["grant_id"])
    op.add_column("wallet_calls", sa.Column("free_round", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("wallet_calls") as batch:
        batch.drop_column("free_round")
    op.drop_index("ix_rounds_grant", table_name="rounds")
    with op.batch_alter_table("rounds") as batch:
        batch.drop_column("paid_win")
        batch.drop_column("grant_id")
    op.drop_index("ix_free_round_grants_account", table_name="free_round_grants")
    op.drop_table("free_round_grants")
    op.drop_table("free_round_campaigns")
