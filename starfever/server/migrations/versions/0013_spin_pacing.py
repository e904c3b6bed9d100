"""The market's minimum round duration: when each player's last round began (spin_pacing).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "spin_pacing",
        sa.Column("account_id", _ID, sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("last_spin_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_key", sa.String(128), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("spin_pacing")
