"""The reality check's clock moves from the log-in session to the player (issue 13): one clock
per player across all of their sessions, so a fresh log-in does not restart it.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("accounts") as batch:
        batch.add_column(sa.Column("play_started_at", sa.DateTime(timezone=False),
                                   nullable=True))
        batch.add_column(sa.Column("reality_check_at", sa.DateTime(timezone=False),
                                   nullable=True))
        batch.add_column(sa.Column("net_result", sa.BigInteger(), nullable=False,
                                   server_default="0"))
    # a player who is logged in now keeps the clock of their newest session
    op.execute("UPDATE accounts SET "
               "play_started_at = (SELECT MAX(s.created_at) FROM sessions s "
               "WHERE s.account_id = accounts.id), "
               "reality_check_at = (SELECT MAX(s.reality_check_at) FROM sessions s "
               "WHERE s.account_id = accounts.id)")


def downgrade() -> None:
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("net_result")
        batch.drop_column("reality_check_at")
        batch.drop_column("play_started_at")
