"""The hash chain is keyed (HMAC under a key kept outside the database) and the cashier's
deposits and withdrawals get a chain of their own (issue 13, ADR 0011).

Rounds stored before keep ``hash_scheme`` 1 (plain SHA-256) and still audit; the boundary
from which rounds and cashier entries are keyed is written, with a MAC, when a server first
starts with its key (``services.chain.ensure_boundary``).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rounds") as batch:
        batch.add_column(sa.Column("hash_scheme", sa.SmallInteger(), nullable=False,
                                   server_default="1"))
    with op.batch_alter_table("ledger_entries") as batch:
        batch.add_column(sa.Column("chain_prev", sa.String(64), nullable=True))
        batch.add_column(sa.Column("chain_hash", sa.String(64), nullable=True))
    with op.batch_alter_table("chain_head") as batch:
        batch.add_column(sa.Column("keyed_from", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("ledger_keyed_from", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("keyed_mac", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chain_head") as batch:
        batch.drop_column("keyed_mac")
        batch.drop_column("ledger_keyed_from")
        batch.drop_column("keyed_from")
    with op.batch_alter_table("ledger_entries") as batch:
        batch.drop_column("chain_hash")
        batch.drop_column("chain_prev")
    with op.batch_alter_table("rounds") as batch:
        batch.drop_column("hash_scheme")
