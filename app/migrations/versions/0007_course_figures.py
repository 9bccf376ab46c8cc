"""What course staff need: each report's figures as columns and its lines as rows (statistics by
SQL), past reports (regrades keep history), per-course exercise policies (gradebook score,
attempt budget), and regrade jobs. Reports stored before are filled in from their JSON.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_BATCH = 1000


def upgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("report_status", sa.String(length=16), nullable=True))
        table.add_column(sa.Column("score", sa.Float(), nullable=True))
        table.add_column(sa.Column("max_score", sa.Float(), nullable=True))
        table.add_column(
            sa.Column("charged", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    op.create_index(
        "ix_submissions_course_exercise_student",
        "submissions",
        ["course_id", "exercise", "student_id"],
    )
    op.create_table(
        "report_outcomes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("submission_id", sa.String(length=26), nullable=False),
        sa.Column("kind", sa.Enum(native_enum=False, length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("visibility", sa.String(length=16), nullable=True),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_report_outcomes_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_report_outcomes")),
    )
    op.create_index(op.f("ix_report_outcomes_submission_id"), "report_outcomes", ["submission_id"])
    op.create_table(
        "regrades",
        sa.Column("id", sa.String(length=26), nullable=False),
        sa.Column("course_id", sa.Integer(), nullable=False),
        sa.Column("exercise", sa.String(length=100), nullable=False),
        sa.Column("student_id", sa.String(length=200), nullable=True),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("status", sa.Enum(native_enum=False, length=16), nullable=False),
        sa.Column("last_id", sa.String(length=26), nullable=True),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("graded", sa.Integer(), nullable=False),
        sa.Column("changed", sa.Integer(), nullable=False),
        sa.Column("cursor", sa.String(length=26), nullable=True),
        sa.Column("requested_by", sa.Integer(), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("finished_at", _WHEN, nullable=True),
        sa.Column("lease_holder", sa.String(length=200), nullable=True),
        sa.Column("lease_expires_at", _WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["courses.id"],
            name=op.f("fk_regrades_course_id_courses"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["requested_by"],
            ["api_keys.id"],
            name=op.f("fk_regrades_requested_by_api_keys"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_regrades")),
    )
    op.create_index("ix_regrades_course_exercise", "regrades", ["course_id", "exercise"])
    op.create_index(op.f("ix_regrades_status"), "regrades", ["status"])
    op.create_table(
        "past_reports",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("submission_id", sa.String(length=26), nullable=False),
        sa.Column("exercise_version", sa.String(length=64), nullable=True),
        sa.Column("report", _JSON, nullable=False),
        sa.Column("report_status", sa.String(length=16), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("max_score", sa.Float(), nullable=True),
        sa.Column("graded_at", _WHEN, nullable=True),
        sa.Column("replaced_at", _WHEN, nullable=False),
        sa.Column("regrade_id", sa.String(length=26), nullable=True),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_past_reports_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["regrade_id"],
            ["regrades.id"],
            name=op.f("fk_past_reports_regrade_id_regrades"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_past_reports")),
    )
    op.create_index(op.f("ix_past_reports_submission_id"), "past_reports", ["submission_id"])
    op.create_table(
        "exercise_policies",
        sa.Column("course_id", sa.Integer(), nullable=False),
        sa.Column("exercise", sa.String(length=100), nullable=False),
        sa.Column("gradebook", sa.Enum(native_enum=False, length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=True),
        sa.Column("window_s", sa.Integer(), nullable=True),
        sa.Column("updated_at", _WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["courses.id"],
            name=op.f("fk_exercise_policies_course_id_courses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("course_id", "exercise", name=op.f("pk_exercise_policies")),
    )
    _fill_in_stored_reports()


def _fill_in_stored_reports() -> None:
    """The figures and rows of every report stored before this revision, from its JSON."""
    bind = op.get_bind()
    submissions = sa.table(
        "submissions",
        sa.column("id", sa.String),
        sa.column("report", sa.JSON),
        sa.column("report_status", sa.String),
        sa.column("score", sa.Float),
        sa.column("max_score", sa.Float),
        sa.column("charged", sa.Boolean),
    )
    outcomes = sa.table(
        "report_outcomes",
        sa.column("submission_id", sa.String),
        sa.column("kind", sa.String),
        sa.column("name", sa.String),
        sa.column("status", sa.String),
        sa.column("visibility", sa.String),
    )
    after = ""
    while True:
        batch = bind.execute(
            sa.select(submissions.c.id, submissions.c.report)
            .where(submissions.c.report.is_not(None), submissions.c.id > after)
            .order_by(submissions.c.id)
            .limit(_BATCH)
        ).all()
        if not batch:
            return
        for submission_id, report in batch:
            if not isinstance(report, dict):  # JSON null: stored as a document on SQLite
                continue
            bind.execute(
                submissions.update()
                .where(submissions.c.id == submission_id)
                .values(
                    report_status=report.get("status"),
                    score=report.get("score"),
                    max_score=report.get("max_score"),
                    charged=report.get("status") not in ("passed", "error"),
                )
            )
            rows = list(_outcomes(submission_id, report))
            if rows:
                bind.execute(outcomes.insert(), rows)
        after = batch[-1][0]


def _outcomes(submission_id: str, report: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for test in report.get("tests", []):
        yield _row(submission_id, "test", test["name"], test["status"], test.get("visibility"))
    for finding in report.get("diagnosis", []):
        yield _row(submission_id, "finding", finding["code"], "", None)
    for check in report.get("properties", []):
        yield _row(submission_id, "property", check["name"], check["status"], None)


def _row(
    submission_id: str, kind: str, name: str, status: str, visibility: str | None
) -> dict[str, Any]:
    return {
        "submission_id": submission_id,
        "kind": kind,
        "name": name,
        "status": status,
        "visibility": visibility,
    }


def downgrade() -> None:
    op.drop_table("exercise_policies")
    op.drop_index(op.f("ix_past_reports_submission_id"), table_name="past_reports")
    op.drop_table("past_reports")
    op.drop_index(op.f("ix_regrades_status"), table_name="regrades")
    op.drop_index("ix_regrades_course_exercise", table_name="regrades")
    op.drop_table("regrades")
    op.drop_index(op.f("ix_report_outcomes_submission_id"), table_name="report_outcomes")
    op.drop_table("report_outcomes")
    op.drop_index("ix_submissions_course_exercise_student", table_name="submissions")
    with op.batch_alter_table("submissions") as table:
        table.drop_column("charged")
        table.drop_column("max_score")
        table.drop_column("score")
        table.drop_column("report_status")
