"""Leases on submissions; webhook deliveries and score posts as one kind of outbox message.

A submission records who answers for it while unfinished (a grader, or the dispatcher that
handed it over) and until when. A webhook delivery gets the `next_attempt_at` a score post has,
so one database-polled sender retries both; a score post records the last HTTP status too.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("lease_holder", sa.String(length=200), nullable=True))
        table.add_column(sa.Column("lease_expires_at", _WHEN, nullable=True))
    with op.batch_alter_table("webhook_deliveries") as table:
        table.add_column(sa.Column("next_attempt_at", _WHEN, nullable=True))
    # A pending delivery was due when it was last touched; the sender takes it at its start.
    op.execute("UPDATE webhook_deliveries SET next_attempt_at = updated_at")
    with op.batch_alter_table("webhook_deliveries") as table:
        table.alter_column("next_attempt_at", existing_type=_WHEN, nullable=False)
    with op.batch_alter_table("lti_score_posts") as table:
        table.add_column(sa.Column("last_status_code", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("lti_score_posts") as table:
        table.drop_column("last_status_code")
    with op.batch_alter_table("webhook_deliveries") as table:
        table.drop_column("next_attempt_at")
    with op.batch_alter_table("submissions") as table:
        table.drop_column("lease_expires_at")
        table.drop_column("lease_holder")
