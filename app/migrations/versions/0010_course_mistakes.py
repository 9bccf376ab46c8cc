"""Mistakes a course's staff named: a table of them. A report's behaviour is a report_outcomes
row of kind "behaviour" (its name the behaviour's key), found through its submission as the
other rows are: no new index.

Reports graded before have no behaviour (the grader did not compute one), so nothing is
backfilled: their wrong answers stay unexplained until they are regraded.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "course_mistakes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("course_id", sa.Integer(), nullable=False),
        sa.Column("exercise", sa.String(length=100), nullable=False),
        sa.Column("behaviour_key", sa.String(length=200), nullable=False),
        sa.Column("code", sa.String(length=64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("fix", sa.Text(), nullable=False),
        sa.Column("concepts", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["courses.id"],
            name=op.f("fk_course_mistakes_course_id_courses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_course_mistakes")),
        sa.UniqueConstraint(
            "course_id",
            "exercise",
            "behaviour_key",
            name=op.f("uq_course_mistakes_course_id_exercise_behaviour_key"),
        ),
        sa.UniqueConstraint(
            "course_id", "exercise", "code", name=op.f("uq_course_mistakes_course_id_exercise_code")
        ),
    )


def downgrade() -> None:
    op.drop_table("course_mistakes")
