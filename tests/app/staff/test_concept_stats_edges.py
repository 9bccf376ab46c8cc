"""The concept figures at their edges, on hand-built submissions, on SQLite and PostgreSQL: a
course with no answer yet, one older than the weeks shown, and submissions made after now."""

from __future__ import annotations

from datetime import timedelta

import pytest
from staff_support import START, Class, failing

from app.core.db import Database
from app.core.models import Course
from app.courses.registry import course_named
from app.demo.reports import Outcome
from app.staff.concept_stats import MAX_WEEKS, course_concepts
from grader.catalog import Catalog
from grader.concepts import CONCEPTS

SEED = "multi-headed-self-attention"


@pytest.fixture
def course(database: Database) -> Course:
    with database.session() as session:
        return course_named(session, "ml-101")


@pytest.fixture
def class_(database: Database, course: Course) -> Class:
    return Class(database, course.id)


def scaling(database: Database, course: Course, weeks_later: int) -> tuple[list[int], int]:
    """The scaling curve and the weeks shown, `weeks_later` weeks after the term's start."""
    with database.session() as session:
        figures = course_concepts(session, course, now=START + timedelta(weeks=weeks_later))
    [curve] = [curve for curve in figures.concepts if curve.concept == "scaling"]
    return curve.weekly, len(figures.weeks)


def test_a_course_with_no_answer_yet_has_no_weeks_and_every_concept_at_zero(
    database: Database, course: Course, class_: Class, catalog: Catalog
) -> None:
    class_.submit(catalog.get(SEED), "ada", Outcome.FAULT)  # a grader fault is no answer
    with database.session() as session:
        figures = course_concepts(session, course)
    assert (figures.weeks, figures.students) == ([], 0)
    assert [curve.concept for curve in figures.concepts] == list(CONCEPTS)
    assert {(curve.students, tuple(curve.weekly)) for curve in figures.concepts} == {(0, ())}


def test_a_course_older_than_the_weeks_shown_keeps_its_last_ones_and_what_is_held_in_them(
    database: Database, course: Course, class_: Class, catalog: Catalog
) -> None:
    class_.submit(catalog.get(SEED), "ada", failing(catalog.get(SEED), 4, "missing-scaling"))
    weekly, weeks = scaling(database, course, MAX_WEEKS + 10)
    assert weeks == MAX_WEEKS
    assert weekly == [1] * MAX_WEEKS  # made before the first week shown, still the latest


def test_a_submission_made_after_now_is_not_counted_yet(
    database: Database, course: Course, class_: Class, catalog: Catalog
) -> None:
    seed = catalog.get(SEED)
    class_.submit(seed, "ada", failing(seed, 4, "missing-scaling"))
    class_.at += timedelta(weeks=2)
    class_.submit(seed, "ada", Outcome.PASSED)  # in the term's third week (from a Tuesday)
    assert scaling(database, course, 1) == ([1, 1], 2)
    assert scaling(database, course, 3) == ([1, 1, 0, 0], 4)
