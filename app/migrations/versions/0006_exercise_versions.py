"""The exercise's version a submission was graded with (a hash of its folder and reference).

Submissions graded before keep none (NULL): which version graded them is not known.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("exercise_version", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.drop_column("exercise_version")
