"""A played debit names its round (wallet_calls.round_id, ADR 0024): filled in for the debits
recorded before, so the retrier's search for debits without a round reads only those.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "UPDATE wallet_calls SET round_id = (SELECT rounds.id FROM rounds "
        "WHERE rounds.account_id = wallet_calls.account_id "
        "AND rounds.idempotency_key = wallet_calls.idempotency_key) "
        "WHERE kind = 'debit' AND round_id IS NULL AND idempotency_key IS NOT NULL")


def downgrade() -> None:
    op.execute("UPDATE wallet_calls SET round_id = NULL WHERE kind = 'debit'")
