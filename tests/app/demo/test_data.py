"""The demo course: valid reports of the real exercises, stored as graded ones are, the same
for the same seed; and `autograder demo-course`, which makes one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from app.core.db import Database
from app.core.models import Submission
from app.demo.data import seed_course
from app.grading.models import ReportOutcome
from app.grading.report_store import outcome_rows, report_columns
from app.staff.mistakes import known_mistakes
from grader.catalog import Catalog
from grader.finding_concepts import concepts_of
from grader.report import Report, ReportStatus

START = datetime(2026, 9, 1, tzinfo=UTC)
AUTOGRADER = str(Path(sys.executable).with_name("autograder"))


def _rows(database: Database) -> list[tuple[object, ...]]:
    with database.session() as session:
        submissions = session.execute(
            select(
                Submission.id, Submission.student_id, Submission.report, Submission.source
            ).order_by(Submission.id)
        ).all()
    return [tuple(row) for row in submissions]


def test_every_report_is_valid_and_its_columns_and_rows_agree_with_it(
    database: Database, catalog: Catalog
) -> None:
    written = seed_course(database, catalog, "demo", students=30, start=START)

    with database.session() as session:
        submissions = session.scalars(select(Submission)).all()
        lines = session.scalars(select(ReportOutcome).order_by(ReportOutcome.id)).all()
    assert len(submissions) == written
    by_submission: dict[str, list[dict[str, object]]] = {}
    for line in lines:
        by_submission.setdefault(line.submission_id, []).append(
            {
                "submission_id": line.submission_id,
                "kind": line.kind,
                "name": line.name,
                "status": line.status,
                "visibility": line.visibility,
            }
        )
    statuses = set()
    for row in submissions:
        report = Report.model_validate(row.report)
        exercise = catalog.get(row.exercise)
        statuses.add(report.status)
        columns = report_columns(report)
        assert {name: getattr(row, name) for name in columns} == columns
        assert by_submission.get(row.id, []) == outcome_rows(row.id, report)
        assert [test.name for test in report.tests] == [t.name for t in exercise.spec.tests]
        assert {check.name for check in report.properties} <= set(exercise.spec.properties)
        if report.status is ReportStatus.FAILED:
            assert {f.code for f in report.diagnosis} <= set(known_mistakes(exercise))
        assert all(f.concepts == concepts_of(f.code) != [] for f in report.diagnosis)
    assert statuses == set(ReportStatus)
    assert {row.exercise for row in submissions} == set(catalog.slugs())


def test_the_same_seed_makes_the_same_course_and_another_seed_another(
    tmp_path: Path, catalog: Catalog
) -> None:
    courses = []
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        database = Database.from_url(f"sqlite:///{tmp_path / name}.db")
        database.migrate()
        seed_course(database, catalog, "demo", students=5, seed=seed, start=START)
        courses.append(_rows(database))
        database.close()

    assert courses[0] == courses[1]
    assert courses[0] != courses[2]


def test_demo_course_seeds_a_new_course_and_refuses_one_with_submissions(tmp_path: Path) -> None:
    env = {**os.environ, "AUTOGRADER_DATA_DIR": str(tmp_path)}
    command = [AUTOGRADER, "demo-course", "demo", "--students", "3", "--attempts", "4"]

    first = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    again = subprocess.run(command, env=env, capture_output=True, text=True, check=False)

    assert first.returncode == 0, first.stderr
    url, key = first.stdout.splitlines()[-1].split("#key=")
    assert url == "http://127.0.0.1:8000/courses/demo/dashboard"
    assert f"autograder keys revoke {key[:8]}" in first.stderr
    database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
    try:
        attempts = _rows(database)
    finally:
        database.close()
    assert attempts and {student for _, student, _, _ in attempts} >= {"student-0001"}
    assert again.returncode == 2 and "has submissions already" in again.stderr


@pytest.mark.parametrize("attempts", [1, 2])
def test_no_student_makes_more_attempts_than_asked(
    tmp_path: Path, catalog: Catalog, attempts: int
) -> None:
    database = Database.from_url(f"sqlite:///{tmp_path / 'demo.db'}")
    database.migrate()
    seed_course(database, catalog, "demo", students=30, attempts=attempts, start=START)
    with database.session() as session:
        made = Counter(session.execute(select(Submission.student_id, Submission.exercise)).all())
    database.close()

    assert max(count for (student, _), count in made.items() if student) == attempts
