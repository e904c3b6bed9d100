"""An index of the debits without a round that may still be rolled back (pending or
acknowledged): the retrier's stale-debit search, every few seconds in every worker, reads
those and not the refused and rolled-back debits that build up for ever.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

UNPLAYED_DEBIT = ("kind = 'debit' AND round_id IS NULL "
                  "AND status IN ('pending', 'acknowledged')")
"""As ``models.UNPLAYED_DEBIT`` on the day of this revision."""

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_wallet_calls_unplayed_debits", "wallet_calls", ["updated_at"],
                    postgresql_where=sa.text(UNPLAYED_DEBIT), sqlite_where=sa.text(UNPLAYED_DEBIT))


def downgrade() -> None:
    op.drop_index("ix_wallet_calls_unplayed_debits", table_name="wallet_calls")
