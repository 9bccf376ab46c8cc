"""Helpers of the regrade tests: submissions as an earlier grading left them, and reading a
regrade back."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus, utcnow
from app.grading.report_store import add_outcomes, report_columns
from app.regrades.models import PastReport, Regrade
from grader.report import Report


def graded_earlier(database: Database, source: str, report: Report, **values: Any) -> str:
    """A finished submission of `source` whose stored report is `report` (an earlier grading,
    maybe by another version of the exercise); returns its id."""
    with database.session() as session:
        row = Submission(
            exercise=report.exercise,
            source=source,
            status=SubmissionStatus.DONE,
            finished_at=utcnow(),
            **{**report_columns(report), **values},
        )
        session.add(row)
        session.flush()
        add_outcomes(session, row.id, report)
        return row.id


def regrade_row(database: Database, regrade_id: str) -> Regrade:
    with database.session() as session:
        row = session.get(Regrade, regrade_id)
        assert row is not None
        return row


def history(database: Database, submission_id: str) -> list[PastReport]:
    with database.session() as session:
        return list(
            session.scalars(
                select(PastReport)
                .where(PastReport.submission_id == submission_id)
                .order_by(PastReport.id)
            )
        )
