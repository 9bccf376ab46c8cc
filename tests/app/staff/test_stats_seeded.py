"""The course figures on a class of the size the dashboard is built for (1,000 students, every
exercise, up to 20 attempts), seeded once per backend: every figure of every exercise as SQL
counts it equals a plain Python recount from the reports' JSON, on SQLite and PostgreSQL; and
the SQL statements a request costs do not grow with the class."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from recount import Graded, exercise_figures, gradebook, mean_score, read_graded
from sqlalchemy import select
from staff_support import statements_run

from app.core.db import Database
from app.core.models import Course
from app.courses.models import ExercisePolicy, GradebookScore
from app.demo.data import seed_course
from app.staff.mistakes import known_mistakes
from app.staff.stats import course_exercises, exercise_stats
from app.staff.students import course_students
from grader.catalog import Catalog
from grader.settings import GraderSettings

STUDENTS, ATTEMPTS = 1000, 20
# An exercise whose gradebook takes the latest score (the others keep the best).
LATEST = "scaled-dot-product-attention"
# Seven of the catalog's exercises: what is checked grows with the class, not with the catalog,
# and seeding 1000 students takes ten seconds an exercise.
SEEDED = sorted({*Catalog.scan(GraderSettings().exercises_dir).slugs()[:6], LATEST})


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    full = Catalog.from_folder(GraderSettings().exercises_dir)
    return Catalog([full.get(slug) for slug in SEEDED])


@dataclass(frozen=True)
class Seeded:
    database: Database
    course: Course
    graded: dict[str, list[Graded]]  # by exercise, in id order


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def seeded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, catalog: Catalog
) -> Iterator[Seeded]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('seeded') / 'course.db'}"
    else:
        url = request.getfixturevalue("module_postgres_url")
    database = Database.from_url(url)
    database.migrate()
    start = datetime(2026, 9, 1, tzinfo=UTC)
    seed_course(database, catalog, "big", students=STUDENTS, attempts=ATTEMPTS, start=start)
    with database.session() as session:
        course = session.scalars(select(Course).where(Course.slug == "big")).one()
        session.add(
            ExercisePolicy(course_id=course.id, exercise=LATEST, gradebook=GradebookScore.LATEST)
        )
    by_exercise: dict[str, list[Graded]] = {slug: [] for slug in catalog.slugs()}
    for submission in read_graded(database, course.id):
        by_exercise[submission.exercise].append(submission)
    yield Seeded(database, course, by_exercise)
    database.close()


def rounded(value: Any) -> Any:
    """JSON data with floats to 9 places: sums in another order differ in the last bits."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def test_the_seeded_class_is_the_size_asked_for(seeded: Seeded, catalog: Catalog) -> None:
    for slug, submissions in seeded.graded.items():
        attempts: dict[str | None, int] = {}
        for submission in submissions:
            attempts[submission.student] = attempts.get(submission.student, 0) + 1
        students = [student for student in attempts if student is not None]
        assert 0.7 * STUDENTS <= len(students) <= STUDENTS, slug
        assert max(attempts[student] for student in students) == ATTEMPTS, slug
        statuses = {submission.status for submission in submissions}
        assert statuses == {"passed", "failed", "rejected", "error"}, slug
        assert None in attempts  # submissions of no student, counted as submissions only


@pytest.mark.parametrize("slug", SEEDED)
def test_every_figure_of_an_exercise_equals_a_recount_from_the_reports(
    seeded: Seeded, catalog: Catalog, slug: str
) -> None:
    exercise = catalog.get(slug)
    policy = "latest" if slug == LATEST else "best"
    with seeded.database.session() as session:
        figures = exercise_stats(session, seeded.course, exercise).model_dump(mode="json")

    expected = exercise_figures(seeded.graded[slug], exercise, policy, known_mistakes(exercise))
    for name in ("course", "exercise", "title", "version"):
        figures.pop(name)
    assert rounded(figures) == rounded(expected)
    # The figures are not trivially equal: the class passes, fails, and errs in every way.
    assert figures["misconceptions"]["unrecognised"]["students"] > 0
    made = [mistake for mistake in figures["misconceptions"]["known"] if mistake["students"]]
    assert made or not known_mistakes(exercise)  # an exercise without VARIANTS knows none
    assert 0 < figures["passed_students"] < figures["students"]


def test_the_course_s_exercises_and_students_equal_a_recount(
    seeded: Seeded, catalog: Catalog
) -> None:
    with seeded.database.session() as session:
        summary = course_exercises(session, seeded.course, catalog)
        students = course_students(session, seeded.course.id, catalog)

    for row in summary.exercises:
        submissions = seeded.graded[row.exercise]
        policy = "latest" if row.exercise == LATEST else "best"
        mean = mean_score(submissions, policy)
        assert row.mean_score is not None and mean is not None
        assert math.isclose(row.mean_score, mean, rel_tol=1e-9)
        assert row.submissions == len(submissions)
    listed = {
        (student.student_id, slug): figures.model_dump()
        for student in students.students
        for slug, figures in student.exercises.items()
    }
    recounted = {
        (student, slug): {
            key: figures[key] for key in ("best", "latest", "max_score", "attempts", "passed")
        }
        for slug, submissions in seeded.graded.items()
        for student, figures in gradebook(submissions, "best").items()
    }
    assert listed == recounted


def test_the_course_s_figures_take_as_few_statements_for_a_class_of_1000_as_for_3(
    seeded: Seeded, catalog: Catalog, tmp_path: Path
) -> None:
    small = Database.from_url(f"sqlite:///{tmp_path / 'small.db'}")
    small.migrate()
    seed_course(small, catalog, "big", students=3, attempts=2)
    for exercise in catalog:  # read before counting: the reference modules, no SQL
        known_mistakes(exercise)
    counts = []
    for database in (small, seeded.database):
        with database.session() as session, statements_run(database) as statements:
            course = session.scalars(select(Course).where(Course.slug == "big")).one()
            for exercise in catalog:
                exercise_stats(session, course, exercise)
            course_exercises(session, course, catalog)
            course_students(session, course.id, catalog)
        counts.append(len(statements))
    small.close()

    # The course's row; per exercise its totals, its policy, seven for the figures and the
    # mistakes the course named; for the course's exercises and students, four (one reads the
    # LMS roster's members, all at once).
    assert counts[0] == counts[1] <= 1 + 10 * len(catalog.slugs()) + 4
