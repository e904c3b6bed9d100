"""One resender per installation (issue 35 item 4, ADR 0062): a table of leases, each a task
that one server process runs at a time (the wallet's resender), with its holder and expiry.
Expand-only (ADR 0063): a new table, which a server of the previous release never reads.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("holder", sa.String(128), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=False), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("leases")
