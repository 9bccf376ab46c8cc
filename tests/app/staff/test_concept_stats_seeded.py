"""The concept figures on a seeded class, on SQLite and PostgreSQL: every figure as SQL counts it
equals a plain Python recount from the reports' JSON (the findings' concepts), and a request
costs as many statements for a class of hundreds as for three students."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from recount import Graded, read_graded
from sqlalchemy import select
from staff_support import statements_run

from app.core.db import Database
from app.core.models import Course
from app.demo.data import seed_course
from app.staff.concept_stats import course_concepts
from grader.catalog import Catalog
from grader.concepts import CONCEPTS

STUDENTS, ATTEMPTS = 200, 8
START = datetime(2026, 9, 1, tzinfo=UTC)  # a Tuesday
NOW = datetime(2026, 9, 23, 15, tzinfo=UTC)  # before the demo term's last submissions


@dataclass(frozen=True)
class Seeded:
    database: Database
    course: Course
    graded: list[Graded]


@pytest.fixture(scope="module")
def small_catalog(catalog: Catalog) -> Catalog:
    """Four exercises of the catalog, released over the term's first week."""
    return Catalog([catalog.get(slug) for slug in catalog.slugs()[:4]])


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def seeded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, small_catalog: Catalog
) -> Iterator[Seeded]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('concepts') / 'course.db'}"
    else:
        url = request.getfixturevalue("module_postgres_url")
    database = Database.from_url(url)
    database.migrate()
    seed_course(database, small_catalog, "big", students=STUDENTS, attempts=ATTEMPTS, start=START)
    with database.session() as session:
        course = session.scalars(select(Course).where(Course.slug == "big")).one()
    yield Seeded(database, course, read_graded(database, course.id))
    database.close()


def recount(graded: list[Graded], ends: list[datetime]) -> dict[str, Any]:
    """Per concept, the students whose latest scored submission to some exercise made before
    each end has a finding about it; and per exercise, as of the last end."""
    weekly: dict[str, list[set[str]]] = defaultdict(lambda: [set() for _ in ends])
    active: list[set[str]] = [set() for _ in ends]
    by_exercise: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for week, end in enumerate(ends):
        latest: dict[tuple[str, str], Graded] = {}
        for submission in graded:  # in id order: the last one kept is the latest
            if submission.student and submission.status != "error" and submission.created_at < end:
                latest[submission.student, submission.exercise] = submission
        for (student, exercise), submission in latest.items():
            active[week].add(student)
            for finding in submission.report["diagnosis"]:
                for concept in finding["concepts"]:
                    weekly[concept][week].add(student)
                    if week == len(ends) - 1:
                        by_exercise[concept][exercise].add(student)
    return {
        "active": [len(students) for students in active],
        "weekly": {concept: [len(s) for s in weeks] for concept, weeks in weekly.items()},
        "exercises": {
            concept: {exercise: len(s) for exercise, s in exercises.items()}
            for concept, exercises in by_exercise.items()
        },
    }


def test_every_concept_figure_equals_a_recount_from_the_reports(seeded: Seeded) -> None:
    with seeded.database.session() as session:
        figures = course_concepts(session, seeded.course, now=NOW)

    mondays = [datetime(2026, 8, 31, tzinfo=UTC) + timedelta(weeks=n) for n in range(4)]
    assert [week.start for week in figures.weeks] == [monday.date() for monday in mondays]
    expected = recount(seeded.graded, [*mondays[1:], NOW])
    assert [week.students for week in figures.weeks] == expected["active"]
    assert figures.students == expected["active"][-1]
    for curve in figures.concepts:
        assert curve.weekly == expected["weekly"].get(curve.concept, [0] * 4), curve.concept
        assert curve.students == curve.weekly[-1]
        assert curve.exercises == expected["exercises"].get(curve.concept, {}), curve.concept
        assert curve.description == CONCEPTS[curve.concept]
    assert {curve.concept for curve in figures.concepts} == set(CONCEPTS)
    # Not trivially equal: concepts rise as exercises are handed out, and some are held in more
    # than one exercise. (One falling as mistakes are fixed: test_staff_api's figures.)
    assert any(curve.students > curve.weekly[0] for curve in figures.concepts)
    assert any(len(curve.exercises) > 1 for curve in figures.concepts)
    students = [curve.students for curve in figures.concepts]
    assert students == sorted(students, reverse=True)


def test_the_figures_take_as_few_statements_for_a_class_of_hundreds_as_for_three(
    seeded: Seeded, small_catalog: Catalog, tmp_path: Path
) -> None:
    small = Database.from_url(f"sqlite:///{tmp_path / 'small.db'}")
    small.migrate()
    seed_course(small, small_catalog, "big", students=3, attempts=2, start=START)
    counts = []
    for database in (small, seeded.database):
        with database.session() as session, statements_run(database) as statements:
            course = session.scalars(select(Course).where(Course.slug == "big")).one()
            course_concepts(session, course, now=NOW)
        counts.append(len(statements))
    small.close()

    assert counts[0] == counts[1] == 1 + 4  # the course's row, then the figures' four
