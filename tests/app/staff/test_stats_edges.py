"""The course figures at their edges, on hand-built submissions, on SQLite and PostgreSQL: an
exercise nobody tried, a student with only grader faults, submissions of no student, the best
and the latest score, the histogram's bin edges, outdated versions and unknown mistakes."""

from __future__ import annotations

from typing import Any

import pytest
from staff_support import Class, failing

from app.core.db import Database
from app.core.models import Course
from app.courses.models import ExercisePolicy, GradebookScore
from app.courses.registry import course_named
from app.demo.reports import Outcome
from app.staff.mistakes import known_mistakes
from app.staff.stats import course_exercises, exercise_stats
from app.staff.students import course_students
from grader.catalog import Catalog
from grader.spec import Exercise, Property

SEED = "multi-headed-self-attention"


@pytest.fixture
def course(database: Database) -> Course:
    with database.session() as session:
        return course_named(session, "ml-101")


@pytest.fixture
def class_(database: Database, course: Course) -> Class:
    return Class(database, course.id)


@pytest.fixture
def seed(catalog: Catalog) -> Exercise:
    return catalog.get(SEED)


def stats(database: Database, course: Course, exercise: Exercise) -> dict[str, Any]:
    with database.session() as session:
        return exercise_stats(session, course, exercise).model_dump(mode="json")


def histogram(figures: dict[str, Any]) -> list[int]:
    return [bin_["students"] for bin_ in figures["score_histogram"]]


def set_policy(database: Database, course: Course, slug: str, gradebook: GradebookScore) -> None:
    with database.session() as session:
        session.add(ExercisePolicy(course_id=course.id, exercise=slug, gradebook=gradebook))


def test_an_exercise_nobody_tried_has_zeros_and_every_known_mistake_at_none(
    database: Database, course: Course, seed: Exercise, catalog: Catalog
) -> None:
    figures = stats(database, course, seed)

    assert (figures["submissions"], figures["students"], figures["passed_students"]) == (0, 0, 0)
    assert histogram(figures) == [0] * 10
    assert [test["name"] for test in figures["tests"]] == [t.name for t in seed.spec.tests]
    assert {(t["submissions"], t["pass_rate"]) for t in figures["tests"]} == {(0, None)}
    mistakes = figures["misconceptions"]["known"]
    assert sorted(m["code"] for m in mistakes) == sorted(known_mistakes(seed))
    assert {(m["students"], m["share"]) for m in mistakes} == {(0, 0.0)}
    assert figures["attempts_to_pass"] == {"histogram": [], "median": None, "never_passed": 0}
    assert figures["timeline"] == []
    with database.session() as session:
        listed = course_exercises(session, course, catalog).exercises
    assert [row.exercise for row in listed] == catalog.slugs()
    assert {(row.submissions, row.students, row.mean_score) for row in listed} == {(0, 0, None)}


def test_a_student_with_only_grader_faults_counts_as_a_student_without_a_score(
    database: Database, course: Course, class_: Class, seed: Exercise, catalog: Catalog
) -> None:
    class_.submit(seed, "ada", Outcome.FAULT)
    class_.submit(seed, "ada", Outcome.FAULT)

    figures = stats(database, course, seed)
    with database.session() as session:
        (ada,) = course_students(session, course.id, catalog).students

    assert (figures["submissions"], figures["students"]) == (2, 1)
    assert histogram(figures) == [0] * 10  # no score to place
    assert figures["attempts_to_pass"]["never_passed"] == 1
    assert {(t["submissions"], t["passed"]) for t in figures["tests"]} == {(0, 0)}  # none ran
    assert figures["timeline"][0]["mean_score"] is None
    assert ada.exercises[SEED].model_dump() == {
        "best": None,
        "latest": None,
        "max_score": None,
        "attempts": 2,
        "passed": False,
    }


def test_submissions_of_no_student_count_as_submissions_and_never_as_students(
    database: Database, course: Course, class_: Class, seed: Exercise
) -> None:
    class_.submit(seed, None, failing(seed, 10))
    class_.submit(seed, None, Outcome.PASSED)
    class_.submit(seed, "ada", failing(seed, 10))

    figures = stats(database, course, seed)

    assert (figures["submissions"], figures["students"], figures["passed_students"]) == (3, 1, 0)
    assert figures["misconceptions"]["failing_submissions"] == 2
    assert figures["misconceptions"]["failing_students"] == 1
    assert figures["misconceptions"]["unrecognised"] == {
        "students": 1,
        "submissions": 2,
        "share": 1.0,
    }
    assert histogram(figures) == [1] + [0] * 9
    assert figures["timeline"][0]["students"] == 1
    assert figures["attempts_to_pass"] == {"histogram": [], "median": None, "never_passed": 1}


@pytest.mark.parametrize(
    ("gradebook", "bins"),
    [(GradebookScore.BEST, [0] * 9 + [1]), (GradebookScore.LATEST, [0, 0, 0, 1] + [0] * 6)],
)
def test_the_histogram_places_the_best_or_the_latest_score_as_the_policy_says(
    course: Course,
    class_: Class,
    seed: Exercise,
    gradebook: GradebookScore,
    bins: list[int],
) -> None:
    class_.submit(seed, "ada", Outcome.PASSED)
    class_.submit(seed, "ada", failing(seed, 7))  # 3 of 10: the bin [0.3, 0.4)
    class_.submit(seed, "ada", Outcome.FAULT)  # no answer: never the latest score
    set_policy(class_.database, course, SEED, gradebook)

    figures = stats(class_.database, course, seed)

    assert figures["gradebook"] == gradebook.value
    assert histogram(figures) == bins


def test_the_histogram_s_bins_hold_their_low_edge_and_the_last_holds_the_full_score(
    database: Database, course: Course, class_: Class, seed: Exercise
) -> None:
    for student, failed in (("zero", 10), ("tenth", 9), ("nine-tenths", 1), ("full", 0)):
        class_.submit(seed, student, failing(seed, failed) if failed else Outcome.PASSED)

    figures = stats(database, course, seed)

    assert histogram(figures) == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert figures["score_histogram"][9] == {"low": 0.9, "high": 1.0, "students": 2}


def test_attempts_to_pass_count_every_submission_up_to_the_first_pass(
    database: Database, course: Course, class_: Class, seed: Exercise
) -> None:
    for attempts in ([Outcome.PASSED], [Outcome.REFUSED, Outcome.FAULT, Outcome.PASSED]):
        for attempt in attempts:
            class_.submit(seed, f"student-{len(attempts)}", attempt)
    class_.submit(seed, "student-3", Outcome.PASSED)  # after the pass: not counted
    class_.submit(seed, "never", failing(seed, 2))

    figures = stats(database, course, seed)["attempts_to_pass"]

    assert figures == {
        "histogram": [{"attempts": 1, "students": 1}, {"attempts": 3, "students": 1}],
        "median": 2.0,
        "never_passed": 1,
    }


def test_misconceptions_share_the_failing_students_and_an_unknown_code_shows_as_itself(
    database: Database, course: Course, class_: Class, seed: Exercise
) -> None:
    class_.submit(seed, "ada", failing(seed, 10, "missing-scaling"))
    class_.submit(seed, "ada", failing(seed, 10, "missing-scaling"))
    class_.submit(seed, "bob", failing(seed, 10, "no-causal-mask"))
    class_.submit(seed, "cy", failing(seed, 10, "retired-mistake"))  # an older version's
    class_.submit(seed, "dee", failing(seed, 3))

    known = {
        mistake["code"]: mistake
        for mistake in stats(database, course, seed)["misconceptions"]["known"]
    }

    assert known["missing-scaling"]["students"] == 1
    assert known["missing-scaling"]["submissions"] == 2
    assert known["missing-scaling"]["share"] == 0.25
    assert known["missing-scaling"]["message"] == known_mistakes(seed)["missing-scaling"]
    assert known["retired-mistake"]["message"] == "retired-mistake"
    assert list(known)[:3] == ["missing-scaling", "no-causal-mask", "retired-mistake"]


def test_outdated_submissions_are_those_graded_with_another_version_or_none(
    database: Database, course: Course, class_: Class, seed: Exercise, catalog: Catalog
) -> None:
    class_.submit(seed, "ada", Outcome.PASSED, version="000000000000")
    class_.submit(seed, "ada", Outcome.FAULT, version=None)  # graded while the exercise broke
    class_.submit(seed, "ada", Outcome.PASSED)
    class_.next_day()
    class_.submit(seed, "bob", failing(seed, 5))

    figures = stats(database, course, seed)
    with database.session() as session:
        (row,) = [
            row
            for row in course_exercises(session, course, catalog).exercises
            if row.exercise == SEED
        ]

    assert figures["outdated_submissions"] == row.outdated_submissions == 2
    assert [(day["submissions"], day["passed_submissions"]) for day in figures["timeline"]] == [
        (3, 2),
        (1, 0),
    ]
    assert figures["timeline"][1]["mean_score"] == 0.5
    assert row.mean_score == 0.75  # ada 1.0, bob 0.5


def test_properties_count_checks_failures_and_the_students_who_failed(
    database: Database, course: Course, class_: Class, seed: Exercise
) -> None:
    class_.submit(seed, "ada", failing(seed, 10, "no-causal-mask", broken={Property.CAUSAL}))
    class_.submit(seed, "ada", Outcome.PASSED)
    class_.submit(seed, "bob", Outcome.REFUSED)  # judged nothing

    properties = {p["name"]: p for p in stats(database, course, seed)["properties"]}

    assert properties["causal"] == {
        "name": "causal",
        "checked": 2,
        "failed": 1,
        "failed_students": 1,
    }
    assert properties["batch_independent"]["failed"] == 0
