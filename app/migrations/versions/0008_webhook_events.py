"""Each webhook delivery names its event: a first report (`submission.done`) or a regrade's new
one (`submission.regraded`). Deliveries recorded before were all first reports.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_EVENT = sa.String(length=32)


def upgrade() -> None:
    with op.batch_alter_table("webhook_deliveries") as table:
        table.add_column(
            sa.Column("event", _EVENT, nullable=False, server_default="submission.done")
        )
    with op.batch_alter_table("webhook_deliveries") as table:
        table.alter_column("event", existing_type=_EVENT, server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("webhook_deliveries") as table:
        table.drop_column("event")
