"""Submissions, API keys, webhook deliveries.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _status(*values: str, name: str) -> sa.Enum:
    # Plain strings, no native enum: adding a value later needs no type migration.
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=False, length=16)


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(length=26), nullable=False),
        sa.Column("exercise", sa.String(length=100), nullable=False),
        sa.Column("student_id", sa.String(length=200), nullable=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column(
            "status",
            _status("queued", "running", "done", name="submissionstatus"),
            nullable=False,
        ),
        sa.Column("report", _JSON, nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("idempotency_scope", sa.String(length=64), nullable=True),
        sa.Column("idempotency_key", sa.String(length=255), nullable=True),
        sa.Column("request_hash", sa.String(length=64), nullable=True),
        sa.Column("callback_url", sa.String(length=2048), nullable=True),
        sa.ForeignKeyConstraint(
            ["api_key_id"],
            ["api_keys.id"],
            name=op.f("fk_submissions_api_key_id_api_keys"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submissions")),
        sa.UniqueConstraint(
            "idempotency_scope",
            "idempotency_key",
            name=op.f("uq_submissions_idempotency_scope_idempotency_key"),
        ),
    )
    op.create_index("ix_submissions_exercise_id", "submissions", ["exercise", "id"])
    op.create_index(op.f("ix_submissions_status"), "submissions", ["status"])
    op.create_index(
        "ix_submissions_student_exercise", "submissions", ["student_id", "exercise", "id"]
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("submission_id", sa.String(length=26), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column(
            "status",
            _status("pending", "delivered", "failed", name="deliverystatus"),
            nullable=False,
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_webhook_deliveries_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    op.create_index(op.f("ix_webhook_deliveries_status"), "webhook_deliveries", ["status"])
    op.create_index(
        op.f("ix_webhook_deliveries_submission_id"), "webhook_deliveries", ["submission_id"]
    )


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
    op.drop_table("submissions")
    op.drop_table("api_keys")
