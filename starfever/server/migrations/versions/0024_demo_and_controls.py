"""Demo play and the operator's controls (issue 36, ADR 0066 and 0067).

- ``sessions.terminated_at`` and ``sessions.terminated_reason``: a session the operator ended
  (``POST /operator-api/sessions/terminate``); apart from ``revoked_at`` (a log-out), because a
  spin whose debit was recorded before the termination still settles and is credited.
- ``game_controls``: one row (``id = 1``) holding whether the game is closed for maintenance,
  since when, the ``Retry-After`` it answers and why; read in the spin's own transaction.
- ``demo_sessions``, ``demo_pool``, ``demo_rates``: demo play's state, apart from the books
  (no ledger entry, round, wallet call or event is ever written for a demo spin).

Expand-only: two nullable columns and three new tables.

Revision ID: 0024
Revises: 0022
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sessions", sa.Column("terminated_at", sa.DateTime(timezone=False),
                                        nullable=True))
    op.add_column("sessions", sa.Column("terminated_reason", sa.String(200), nullable=True))
    op.create_table(
        "game_controls",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("maintenance_since", sa.DateTime(timezone=False), nullable=True),
        sa.Column("retry_after_seconds", sa.Integer(), nullable=False,
                  server_default=sa.text("300")),
        sa.Column("reason", sa.String(200), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True))
    op.create_table(
        "demo_sessions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=True),
        sa.Column("launch_hash", sa.String(64), nullable=True),
        sa.Column("launch_id", sa.String(128), nullable=True),
        sa.Column("launch_expires_at", sa.DateTime(timezone=False), nullable=True),
        sa.Column("verified", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=False), nullable=False),
        sa.Column("last_spin_ms", sa.BigInteger(), nullable=True),
        sa.Column("last_key", sa.String(128), nullable=True),
        sa.Column("last_answer", sa.Text(), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.CheckConstraint("balance >= 0", name="ck_demo_sessions_balance"))
    op.create_index("uq_demo_sessions_token_hash", "demo_sessions", ["token_hash"], unique=True)
    op.create_index("uq_demo_sessions_launch_hash", "demo_sessions", ["launch_hash"],
                    unique=True)
    op.create_index("uq_demo_sessions_launch_id", "demo_sessions", ["launch_id"], unique=True)
    op.create_index("ix_demo_sessions_expires_at", "demo_sessions", ["expires_at"])
    op.create_table(
        "demo_pool",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("carry", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=False), nullable=False),
        sa.CheckConstraint("amount >= 0", name="ck_demo_pool_amount"))
    op.create_table(
        "demo_rates",
        sa.Column("address", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("window_start_ms", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False))


def downgrade() -> None:
    op.drop_table("demo_rates")
    op.drop_table("demo_pool")
    op.drop_index("ix_demo_sessions_expires_at", table_name="demo_sessions")
    op.drop_index("uq_demo_sessions_launch_id", table_name="demo_sessions")
    op.drop_index("uq_demo_sessions_launch_hash", table_name="demo_sessions")
    op.drop_index("uq_demo_sessions_token_hash", table_name="demo_sessions")
    op.drop_table("demo_sessions")
    op.drop_table("game_controls")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("terminated_reason")
        batch.drop_column("terminated_at")
