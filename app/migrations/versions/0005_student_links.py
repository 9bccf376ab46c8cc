"""Student links: a course's way in for students without an LMS (app.access.student_links). And on
PostgreSQL, the courses' id sequence moves past the default course, which 0004 inserted with its
id given: until then the first course made after it collided with it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "SELECT setval(pg_get_serial_sequence('courses', 'id'), "
            "(SELECT coalesce(max(id), 1) FROM courses))"
        )
    op.create_table(
        "student_links",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("course_id", sa.Integer(), nullable=False),
        sa.Column("student_id", sa.String(length=200), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("expires_at", _WHEN, nullable=False),
        sa.Column("revoked_at", _WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["courses.id"],
            name=op.f("fk_student_links_course_id_courses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_student_links")),
    )
    op.create_index("ix_student_links_course_student", "student_links", ["course_id", "student_id"])


def downgrade() -> None:
    op.drop_index("ix_student_links_course_student", table_name="student_links")
    op.drop_table("student_links")
