"""A submission's rank in the line of queued submissions (fair order at a deadline), and the
index the line is read by. Existing rows rank 0: first submissions.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("queue_rank", sa.Integer(), nullable=False, server_default="0"))
        batch.create_index("ix_submissions_line", ["status", "queue_rank", "id"])


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_index("ix_submissions_line")
        batch.drop_column("queue_rank")
