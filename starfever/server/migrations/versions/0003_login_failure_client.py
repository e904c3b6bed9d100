"""The address of each failed log-in: the lock-out counts per username and address.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("login_failures") as batch:
        batch.add_column(sa.Column("client", sa.String(64), nullable=True))
    op.create_index("ix_login_failures_client", "login_failures", ["client", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_login_failures_client", "login_failures")
    with op.batch_alter_table("login_failures") as batch:
        batch.drop_column("client")
