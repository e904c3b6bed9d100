"""The addresses each account has logged in from (issue 13): an address that fails too often
across usernames is refused for every username except those that logged in from it before, so
the players behind a shared address (carrier NAT, an office) are not locked out.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "known_clients",
        sa.Column("username", sa.String(32), primary_key=True),
        sa.Column("client", sa.String(64), primary_key=True),
        sa.Column("last_login_at", sa.DateTime(timezone=False), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("known_clients")
