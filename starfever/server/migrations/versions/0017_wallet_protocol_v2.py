"""Wallet protocol version 2: the operator's ``launch_id`` of every launch (unique, so a
launch cannot be replayed, whatever worker or restart it reaches) and its ``operator_session``,
kept on the launch token and on the session it opens, to be sent back in every wallet call.
Rows from before stay as they were (``NULL``): rounds settled under version 1 stay readable.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # columns and a unique index, not table constraints: SQLite would rebuild the tables
    op.add_column("launch_tokens", sa.Column("launch_id", sa.String(128), nullable=True))
    op.add_column("launch_tokens", sa.Column("operator_session", sa.String(256), nullable=True))
    op.create_index("uq_launch_tokens_launch_id", "launch_tokens", ["launch_id"], unique=True)
    op.add_column("sessions", sa.Column("operator_session", sa.String(256), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("operator_session")
    op.drop_index("uq_launch_tokens_launch_id", table_name="launch_tokens")
    with op.batch_alter_table("launch_tokens") as batch:
        batch.drop_column("operator_session")
        batch.drop_column("launch_id")
