"""Currencies (issue 37, ADR 0076): a ledger wallet, a session (and the launch token that opens
it), a round, an operator wallet call and a €€€ pool each name their ISO 4217 currency. Every
existing row is EUR (the one currency served before), which the default says; the EUR pool
keeps its row (``id`` ``main``), and a pool of another currency gets its own row. Expand-only:
columns with a default, and a unique index (one pool per currency).

Revision ID: 0027
Revises: 0023
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0023"
branch_labels = None
depends_on = None

TABLES = ("wallets", "sessions", "launch_tokens", "rounds", "wallet_calls", "jackpot_pool")
"""The tables whose rows name their currency."""


def upgrade() -> None:
    # a constant default: PostgreSQL adds the column without rewriting the table
    for table in TABLES:
        op.add_column(table, sa.Column("currency", sa.String(3), nullable=False,
                                       server_default="EUR"))
    op.create_index("uq_jackpot_pool_currency", "jackpot_pool", ["currency"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_jackpot_pool_currency", table_name="jackpot_pool")
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("currency")
