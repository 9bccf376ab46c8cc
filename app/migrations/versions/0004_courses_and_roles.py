"""Courses: every API key, submission and LMS platform belongs to one; a key has a role and may
be revoked.

What existed belongs to the course `default` (id 1), and existing keys keep what they could do
(`admin`).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)
_ROLE = sa.Enum(
    "admin", "instructor", "submitter", name="role", native_enum=False,
    create_constraint=False, length=16,
)  # fmt: skip


def upgrade() -> None:
    courses = op.create_table(
        "courses",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("slug", sa.String(length=100), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_courses")),
        sa.UniqueConstraint("slug", name=op.f("uq_courses_slug")),
    )
    op.bulk_insert(courses, [{"id": 1, "slug": "default", "created_at": datetime.now(UTC)}])
    _belongs_to_a_course("api_keys")
    with op.batch_alter_table("api_keys") as table:
        table.add_column(sa.Column("role", _ROLE, nullable=False, server_default="admin"))
        table.add_column(sa.Column("revoked_at", _WHEN, nullable=True))
    with op.batch_alter_table("api_keys") as table:
        table.alter_column("role", existing_type=_ROLE, server_default=None)
    _belongs_to_a_course("submissions")
    _belongs_to_a_course("lti_platforms")
    op.create_index(op.f("ix_submissions_course_id"), "submissions", ["course_id"])


def _belongs_to_a_course(table_name: str) -> None:
    """A course_id column, 1 for the rows there are, then no default (the models give one)."""
    with op.batch_alter_table(table_name) as table:
        table.add_column(sa.Column("course_id", sa.Integer(), nullable=False, server_default="1"))
        table.create_foreign_key(
            op.f(f"fk_{table_name}_course_id_courses"),
            "courses",
            ["course_id"],
            ["id"],
            ondelete="CASCADE",
        )
    with op.batch_alter_table(table_name) as table:
        table.alter_column("course_id", existing_type=sa.Integer(), server_default=None)


def downgrade() -> None:
    op.drop_index(op.f("ix_submissions_course_id"), table_name="submissions")
    for table_name in ("lti_platforms", "submissions", "api_keys"):
        with op.batch_alter_table(table_name) as table:
            table.drop_constraint(op.f(f"fk_{table_name}_course_id_courses"), type_="foreignkey")
            table.drop_column("course_id")
    with op.batch_alter_table("api_keys") as table:
        table.drop_column("revoked_at")
        table.drop_column("role")
    op.drop_table("courses")
