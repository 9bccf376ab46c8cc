"""Hand-built submissions for the staff figures' tests: one report each, stored as a graded one
is (app.grading.report_store), at a time the test chooses (ids follow it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import event
from ulid import ULID

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus
from app.demo.reports import Attempt, Bug, Outcome, build_report
from app.grading.report_store import add_outcomes, report_columns
from app.staff.mistakes import known_mistakes
from grader.spec import Exercise, Property

START = datetime(2026, 9, 1, 9, tzinfo=UTC)
# The exercise's version served now (None: a report made while its exercise was broken).
CURRENT = "current"


class Class:
    """Submissions of one course, a minute apart in the order they are made."""

    def __init__(self, database: Database, course_id: int) -> None:
        self.database = database
        self.course_id = course_id
        self.at = START

    def submit(
        self,
        exercise: Exercise,
        student: str | None,
        attempt: Attempt = Outcome.PASSED,
        *,
        version: str | None = CURRENT,
        source: str = "print('hi')\n",
    ) -> str:
        self.at += timedelta(minutes=1)
        mistakes = known_mistakes(exercise)
        if isinstance(attempt, Bug) and attempt.finding is not None:
            mistakes.setdefault(attempt.finding, "a mistake the exercise no longer knows")
        graded_with = exercise.version if version == CURRENT else version
        report = build_report(exercise, attempt, graded_with, mistakes)
        with self.database.session() as session:
            row = Submission(
                id=str(ULID.from_datetime(self.at)),
                course_id=self.course_id,
                exercise=exercise.spec.slug,
                student_id=student,
                source=source,
                status=SubmissionStatus.DONE,
                created_at=self.at,
                **report_columns(report),
            )
            session.add(row)
            session.flush()
            add_outcomes(session, row.id, report)
            return row.id

    def next_day(self) -> None:
        self.at += timedelta(days=1)


def failing(
    exercise: Exercise,
    tests: int,
    finding: str | None = None,
    broken: set[Property] | None = None,
) -> Bug:
    """A wrong solution that fails the exercise's first `tests` tests."""
    names = [test.name for test in exercise.spec.tests]
    return Bug(finding, frozenset(names[:tests]), frozenset(broken or ()))


@contextmanager
def statements_run(database: Database) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(*args: Any) -> None:
        statements.append(str(args[2]))

    event.listen(database.engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(database.engine, "before_cursor_execute", record)
