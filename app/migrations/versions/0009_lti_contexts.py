"""LMS courses (LTI contexts) bound to ours: a launch goes to its context's course, never to the
platform's by default. Platforms get a context policy (`bound`: contexts bound by hand), launches
record their context.

Nothing stored before says which LMS course a launch came from (launches kept the deployment,
the user and the line item, not the context), so no binding can be recovered: every existing
platform is `bound` with no context bound, and its launches are refused until an operator binds
its LMS course's context to the platform's course (docs/lms.md, "After upgrading"). Nothing
graded moves: submissions keep their course and student ids, launches their line items.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)
_POLICY = sa.Enum(
    "bound", "own", name="contextpolicy", native_enum=False, create_constraint=False, length=16
)


def upgrade() -> None:
    # Columns added in place, the server default kept: on SQLite, altering a column recreates
    # its table, and dropping lti_platforms would delete its launches and score posts (cascade).
    op.add_column(
        "lti_platforms",
        sa.Column("context_policy", _POLICY, nullable=False, server_default="bound"),
    )
    op.add_column("lti_launches", sa.Column("context_id", sa.String(length=255), nullable=True))
    op.create_table(
        "lti_contexts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.String(length=255), nullable=False),
        sa.Column("context_id", sa.String(length=255), nullable=False),
        sa.Column("course_id", sa.Integer(), nullable=True),
        sa.Column("title", sa.String(length=255), nullable=False),
        sa.Column("label", sa.String(length=255), nullable=False),
        sa.Column("refused_launches", sa.Integer(), nullable=False),
        sa.Column("last_seen_at", _WHEN, nullable=True),
        sa.Column("bound_at", _WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["courses.id"],
            name=op.f("fk_lti_contexts_course_id_courses"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["lti_platforms.id"],
            name=op.f("fk_lti_contexts_platform_id_lti_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_contexts")),
        sa.UniqueConstraint(
            "platform_id",
            "deployment_id",
            "context_id",
            name=op.f("uq_lti_contexts_platform_id_deployment_id_context_id"),
        ),
    )


def downgrade() -> None:
    op.drop_table("lti_contexts")
    with op.batch_alter_table("lti_launches") as table:
        table.drop_column("context_id")
    with op.batch_alter_table("lti_platforms") as table:
        table.drop_column("context_policy")
