"""LTI 1.3: platform registrations, the tool's key, logins in flight, launches, score posts.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "lti_platforms",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("deployment_ids", _JSON, nullable=False),
        sa.Column("auth_login_url", sa.String(length=2048), nullable=False),
        sa.Column("auth_token_url", sa.String(length=2048), nullable=False),
        sa.Column("key_set_url", sa.String(length=2048), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_platforms")),
        sa.UniqueConstraint("issuer", "client_id", name=op.f("uq_lti_platforms_issuer_client_id")),
    )
    op.create_table(
        "lti_tool_keys",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("private_pem", sa.Text(), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_tool_keys")),
    )
    op.create_table(
        "lti_logins",
        sa.Column("state", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.String(length=128), nullable=False),
        sa.Column("login_params", _JSON, nullable=False),
        sa.Column("expires_at", _WHEN, nullable=False),
        sa.Column("used_at", _WHEN, nullable=True),
        sa.PrimaryKeyConstraint("state", name=op.f("pk_lti_logins")),
        sa.UniqueConstraint("nonce", name=op.f("uq_lti_logins_nonce")),
    )
    op.create_index(op.f("ix_lti_logins_expires_at"), "lti_logins", ["expires_at"])
    op.create_table(
        "lti_launches",
        sa.Column("id", sa.String(length=26), nullable=False),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("exercise", sa.String(length=100), nullable=False),
        sa.Column("lineitem_url", sa.String(length=2048), nullable=True),
        sa.Column("ags_scopes", _JSON, nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["lti_platforms.id"],
            name=op.f("fk_lti_launches_platform_id_lti_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_launches")),
    )
    op.create_table(
        "lti_score_posts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("submission_id", sa.String(length=26), nullable=False),
        sa.Column("launch_id", sa.String(length=26), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "waiting",
                "pending",
                "delivered",
                "skipped",
                "failed",
                name="scorepoststatus",
                native_enum=False,
                create_constraint=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _WHEN, nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("updated_at", _WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["launch_id"],
            ["lti_launches.id"],
            name=op.f("fk_lti_score_posts_launch_id_lti_launches"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_lti_score_posts_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_score_posts")),
        sa.UniqueConstraint("submission_id", name=op.f("uq_lti_score_posts_submission_id")),
    )
    op.create_index(op.f("ix_lti_score_posts_status"), "lti_score_posts", ["status"])


def downgrade() -> None:
    op.drop_table("lti_score_posts")
    op.drop_table("lti_launches")
    op.drop_table("lti_logins")
    op.drop_table("lti_tool_keys")
    op.drop_table("lti_platforms")
