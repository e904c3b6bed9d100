"""The launch's optional fields (OPERATOR-WALLET.md, "Launching the game"): the launch token
keeps the ``brand``, ``reality_check_seconds``, ``session_time_limit_seconds`` and
``birth_date`` it was signed with; the session it opens keeps the ``brand`` and the instant its
time limit is reached (``play_ends_at``); the player's account keeps the reality-check interval
the operator set (``NULL``: the server's ``STARFEVER_REALITY_CHECK_SECONDS``). Rows from before
stay ``NULL``: no brand, no time limit, the server's interval.

Revision ID: 0019
Revises: 0017
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # nullable columns only: SQLite adds them without rebuilding a table
    op.add_column("launch_tokens", sa.Column("brand", sa.String(64), nullable=True))
    op.add_column("launch_tokens", sa.Column("reality_check_seconds", sa.Integer(),
                                             nullable=True))
    op.add_column("launch_tokens", sa.Column("session_time_limit_seconds", sa.Integer(),
                                             nullable=True))
    op.add_column("launch_tokens", sa.Column("birth_date", sa.Date(), nullable=True))
    op.add_column("sessions", sa.Column("brand", sa.String(64), nullable=True))
    op.add_column("sessions", sa.Column("play_ends_at", sa.DateTime(timezone=False),
                                        nullable=True))
    op.add_column("accounts", sa.Column("reality_check_seconds", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("reality_check_seconds")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("play_ends_at")
        batch.drop_column("brand")
    with op.batch_alter_table("launch_tokens") as batch:
        batch.drop_column("birth_date")
        batch.drop_column("session_time_limit_seconds")
        batch.drop_column("reality_check_seconds")
        batch.drop_column("brand")
