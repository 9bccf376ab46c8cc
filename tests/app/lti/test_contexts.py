"""app.lti.contexts on SQLite and PostgreSQL: the first launches of one LMS course, all at once,
under the `own` policy make one course between them; a course made for an LMS course is always
a new one, whatever courses exist."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select

from app.core.db import Database
from app.core.models import Course
from app.courses.registry import course_named
from app.lti.claims import LmsCourse
from app.lti.contexts import course_of_launch
from app.lti.models import ContextPolicy, LtiContext, LtiPlatform
from app.lti.pages import LaunchRefused
from app.lti.registrations import add_platform

FIRST_LAUNCHES = 8
DL101 = LmsCourse("d1", "course-7", "Deep learning", "DL101")


def registered(database: Database, policy: ContextPolicy) -> LtiPlatform:
    with database.session() as session:
        return add_platform(
            session, "https://moodle.school.edu", "c1", ["d1"], "https://moodle.school.edu/a",
            "https://moodle.school.edu/t", "https://moodle.school.edu/k", context_policy=policy,
        )  # fmt: skip


def courses(database: Database) -> list[str]:
    with database.session() as session:
        return list(session.scalars(select(Course.slug).order_by(Course.id)))


def test_first_launches_of_one_lms_course_at_once_make_one_course(database: Database) -> None:
    platform = registered(database, ContextPolicy.OWN)
    start = threading.Barrier(FIRST_LAUNCHES)
    found: list[int] = []

    def launch() -> None:
        start.wait()
        found.append(course_of_launch(database, platform, DL101).course_id)

    threads = [threading.Thread(target=launch) for _ in range(FIRST_LAUNCHES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == FIRST_LAUNCHES and len(set(found)) == 1
    assert courses(database) == ["default", "moodle-school-edu-dl101-1"]
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(LtiContext)) == 1


def test_a_course_made_for_an_lms_course_is_never_an_existing_one(database: Database) -> None:
    platform = registered(database, ContextPolicy.OWN)
    with database.session() as session:  # a course someone made by hand, of the same name
        taken = course_named(session, "moodle-school-edu-dl101-1").id
    own = course_of_launch(database, platform, DL101).course_id
    assert own != taken
    assert courses(database)[-1] == "moodle-school-edu-dl101-1-2"
    # Another LMS course of the same label gets a course of its own too.
    other = course_of_launch(database, platform, LmsCourse("d1", "course-8", "DL", "DL101"))
    assert other.course_id not in (own, taken)


def test_under_the_bound_policy_a_launch_makes_no_course(database: Database) -> None:
    platform = registered(database, ContextPolicy.BOUND)
    for _ in range(2):
        with pytest.raises(LaunchRefused):
            course_of_launch(database, platform, DL101)
    assert courses(database) == ["default"]
    with database.session() as session:
        seen = session.scalars(select(LtiContext)).one()
        assert (seen.course_id, seen.refused_launches, seen.title) == (None, 2, "Deep learning")
