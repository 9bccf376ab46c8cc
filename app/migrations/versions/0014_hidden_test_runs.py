"""What each hidden test of a submission did, for the course's staff: a table of its own, apart
from the report a student reads. Reports graded before have none (nothing to fill it from: the
grader kept only the one bit); a regrade records it.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "hidden_test_runs",
        sa.Column("submission_id", sa.String(length=26), nullable=False),
        sa.Column("detail", _JSON, nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_hidden_test_runs_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("submission_id", name=op.f("pk_hidden_test_runs")),
    )


def downgrade() -> None:
    op.drop_table("hidden_test_runs")
