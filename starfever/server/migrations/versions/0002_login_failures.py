"""Failed log-in attempts, counted for the brute-force limit across worker processes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-02-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "login_failures",
        sa.Column("id", Id, primary_key=True),
        sa.Column("username", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_login_failures_username", "login_failures", ["username", "created_at"])


def downgrade() -> None:
    op.drop_table("login_failures")
