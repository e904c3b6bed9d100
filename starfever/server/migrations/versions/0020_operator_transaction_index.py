"""Support by the operator's ids (issue 35): an index on ``wallet_calls.operator_transaction_id``,
so that a round or a call is found by the operator's transaction id (``GET /operator/rounds``
and ``/operator/wallet-calls``) without reading every call. Not unique: the reference wallet
gives every call its own id, but nothing in the protocol forbids an operator reusing one for a
call and its replay.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_wallet_calls_operator_transaction_id", "wallet_calls",
                    ["operator_transaction_id"])


def downgrade() -> None:
    op.drop_index("ix_wallet_calls_operator_transaction_id", table_name="wallet_calls")
