"""Every round records the build and the model that played it (issue 18, ADR 0020):
``rounds.build_sha256`` (the SHA-256 of the software manifest of the running package) and
``rounds.model_sha256`` (the model's canonical SHA-256), both covered by the round's hash
under scheme 3 (``starfever-round-v3``).

Rounds stored before keep both empty and their scheme (1 or 2), and still audit.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rounds") as batch:
        batch.add_column(sa.Column("build_sha256", sa.String(64), nullable=True))
        batch.add_column(sa.Column("model_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rounds") as batch:
        batch.drop_column("model_sha256")
        batch.drop_column("build_sha256")
