"""Every cent is chained (issue 34, ADR 0048): each chain head carries a MAC of itself
(``chain_head.head_mac``), so a chain's end cannot be cut off without the audit key.

The MACs need the key, which migrations never see: the first server start with this version
writes them (``services.anchor.ensure_boundary``), with the boundary's new MAC that also seals
the ledger entries stored before the boundary. Until then the audit says the database is not
sealed yet; nothing else changes for an old database.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chain_head") as batch:
        batch.add_column(sa.Column("head_mac", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chain_head") as batch:
        batch.drop_column("head_mac")
