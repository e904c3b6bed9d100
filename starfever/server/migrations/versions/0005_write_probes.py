"""A table the readiness check writes to (``GET /api/v1/ready`` and the start of ``serve``
prove that the database takes a write), and one of registration attempts per address (the
registration throttle counts them across worker processes) (issue 13).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "write_probes",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("checked_at", sa.DateTime(timezone=False), nullable=False),
    )
    op.create_table(
        "registration_attempts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("client", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
    )
    op.create_index("ix_registration_attempts_client", "registration_attempts",
                    ["client", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_registration_attempts_client", "registration_attempts")
    op.drop_table("registration_attempts")
    op.drop_table("write_probes")
