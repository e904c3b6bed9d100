"""Every round names its market (issue 37 item 3, ADR 0078): ``rounds.market``, the market
profile (``at``, ``de``, ``uk``, ...) the server that settled the round ran. ``NULL``: a round
stored before this column, or settled by a server of an older release during a rolling upgrade;
which market such a server ran is not in the database, so it is not guessed. Expand-only: a
nullable column.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a nullable column only: neither database rewrites the table
    op.add_column("rounds", sa.Column("market", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rounds") as batch:
        batch.drop_column("market")
