"""The LMS courses' rosters (LTI Names and Role Provisioning): where each is read (the launch's
NRPS claim), its members, and the syncs that read it (outbox messages).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_WHEN = sa.DateTime(timezone=True)


def _enum(name: str, *values: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=False, length=16)


def _context_key(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["context_row"],
        ["lti_contexts.id"],
        name=op.f(f"fk_{table}_context_row_lti_contexts"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.add_column("lti_contexts", sa.Column("memberships_url", sa.String(2048), nullable=True))
    op.create_table(
        "lti_roster_members",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("context_row", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("roles", _JSON, nullable=False),
        sa.Column("status", _enum("memberstatus", "Active", "Inactive", "Deleted"), nullable=False),
        sa.Column("synced_at", _WHEN, nullable=False),
        _context_key("lti_roster_members"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_roster_members")),
        sa.UniqueConstraint(
            "context_row", "user_id", name=op.f("uq_lti_roster_members_context_row_user_id")
        ),
    )
    op.create_table(
        "lti_roster_syncs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("context_row", sa.Integer(), nullable=False),
        sa.Column("reason", _enum("syncreason", "staff", "launch"), nullable=False),
        sa.Column("members", sa.Integer(), nullable=True),
        sa.Column(
            "status",
            _enum("outboxstatus", "waiting", "pending", "delivered", "skipped", "failed"),
            nullable=False,
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _WHEN, nullable=False),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("updated_at", _WHEN, nullable=False),
        _context_key("lti_roster_syncs"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_roster_syncs")),
    )
    op.create_index(op.f("ix_lti_roster_syncs_status"), "lti_roster_syncs", ["status"])
    op.create_index(op.f("ix_lti_roster_syncs_context_row"), "lti_roster_syncs", ["context_row"])


def downgrade() -> None:
    op.drop_table("lti_roster_syncs")
    op.drop_table("lti_roster_members")
    with op.batch_alter_table("lti_contexts") as table:
        table.drop_column("memberships_url")
