"""The significant-events log (issue 16): operator log-ins and their failures, limit changes,
self-exclusions, settings and model changes, €€€ refills, audit results. One row per event,
written in the transaction of what it records.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "significant_events",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(64), nullable=True),
        sa.Column("client", sa.String(64), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
    )
    op.create_index("ix_significant_events_kind", "significant_events", ["kind", "id"])
    op.create_index("ix_significant_events_created", "significant_events", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_significant_events_created", "significant_events")
    op.drop_index("ix_significant_events_kind", "significant_events")
    op.drop_table("significant_events")
