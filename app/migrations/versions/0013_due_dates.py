"""Due dates: an exercise policy's due date and late policy, the LMS's due date, students'
extensions, and each submission's lateness as decided when it was received. Existing
submissions were received with no due date: on time (0 days late).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("exercise_policies") as batch:
        batch.add_column(sa.Column("due_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("late_policy", sa.String(length=16), nullable=False, server_default="accept")
        )
        batch.add_column(sa.Column("penalty_per_day", sa.Float(), nullable=True))
        batch.add_column(sa.Column("lms_due_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("days_late", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "due_extensions",
        sa.Column("course_id", sa.Integer(), nullable=False),
        sa.Column("exercise", sa.String(length=100), nullable=False),
        sa.Column("student_id", sa.String(length=200), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("granted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["courses.id"],
            name=op.f("fk_due_extensions_course_id_courses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "course_id", "exercise", "student_id", name=op.f("pk_due_extensions")
        ),
    )


def downgrade() -> None:
    op.drop_table("due_extensions")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("days_late")
    with op.batch_alter_table("exercise_policies") as batch:
        batch.drop_column("lms_due_at")
        batch.drop_column("penalty_per_day")
        batch.drop_column("late_policy")
        batch.drop_column("due_at")
