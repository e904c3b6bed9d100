"""Why a session ended before its expiry: ``sessions.ended_because`` (ADR 0075). ``replaced``:
a later log-in or launch of the same player ended it (a market with one session per player,
``de``); ``panic``: the player pressed the panic button. ``NULL``: logged out, or still live
(and every row from before). The spin's refusal names the reason, so the page can say why.

Revision ID: 0026
Revises: 0024
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a nullable column only (expand-only): SQLite adds it without rebuilding the table
    op.add_column("sessions", sa.Column("ended_because", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("ended_because")
