"""Courses bound to LMS courses, over real HTTP: `lti1p3platform` (the LMS) launches the real
server (`autograder serve`) from two LMS courses (contexts) of one platform. A launch from an LMS
course bound to none of ours, as Instructor or Learner, resource link or deep linking, gets a
refusal page and nothing of ours; with the platform's `own` policy it gets a new course of its
own, and the same LMS user in two LMS courses is two students of two courses."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from app_support import CORRECT, SEED
from platform_support import (
    CONTEXT_ID,
    Platform,
    launch_over_http,
    post_launch_over_http,
    register_in,
    serve_platform,
)
from sqlalchemy import select
from test_server import free_port, server

from app.core.db import Database
from app.lti.models import ContextPolicy, LtiContext, LtiLaunch
from app.lti.roles import ROLES_CLAIM

pytestmark = pytest.mark.slow  # two servers and real HTTP between them

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
OURS = "ml-101"  # the course the platform's LMS course CONTEXT_ID is bound to
ANOTHER = "course-2"  # another LMS course of the same platform, bound to nothing
ELSEWHERE = "course-3"  # one more, first launched under the `own` policy


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Path]]:
    data_dir = tmp_path_factory.mktemp("serve")
    with server(data_dir, free_port()) as (_, client):
        yield client, data_dir


@pytest.fixture
def tool(served: tuple[httpx.Client, Path]) -> httpx.Client:
    return served[0]


@pytest.fixture
def served_database(served: tuple[httpx.Client, Path]) -> Iterator[Database]:
    """The served tool's database, where the operator's commands write."""
    database = Database.from_url(f"sqlite:///{served[1] / 'autograder.db'}")
    yield database
    database.close()


def serve_registered(
    tool: httpx.Client, database: Database, contexts: ContextPolicy
) -> Iterator[Platform]:
    """The platform, registered with this policy, its LMS course CONTEXT_ID bound to OURS."""
    with serve_platform(tool.get("/lti/jwks").json()) as platform:
        register_in(database, platform, course=OURS, contexts=contexts)
        yield platform


@pytest.fixture
def platform(tool: httpx.Client, served_database: Database) -> Iterator[Platform]:
    yield from serve_registered(tool, served_database, ContextPolicy.BOUND)


@pytest.fixture
def own_platform(tool: httpx.Client, served_database: Database) -> Iterator[Platform]:
    yield from serve_registered(tool, served_database, ContextPolicy.OWN)


def from_course(
    platform: Platform, context: str, role: str, user: str, kind: str = "resource"
) -> None:
    platform.next_launch.kind = kind
    platform.next_launch.exercise = SEED
    platform.next_launch.user_id = user
    platform.next_launch.context_id = context
    platform.next_launch.context_title = f"Title of {context}"
    platform.next_launch.context_label = f"LBL-{context}"
    platform.next_launch.claims = {ROLES_CLAIM: [LIS + role]}


def token(location: str, name: str) -> str:
    value: str = parse_qs(urlparse(location).fragment)[name][0]
    return value


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def staff_paths(course: str) -> list[tuple[str, str]]:
    """What a course's staff may read or change that nobody else may."""
    return [
        ("GET", f"/v1/courses/{course}/gradebook.csv"),
        ("GET", f"/v1/courses/{course}/students"),
        ("GET", f"/v1/courses/{course}/exercises/{SEED}/export.zip"),
        ("PUT", f"/v1/courses/{course}/exercises/{SEED}/policy"),
    ]


def staff_answers(tool: httpx.Client, course: str, staff: str) -> list[int]:
    policy = {"gradebook": "latest"}
    return [
        tool.request(
            method, path, headers=bearer(staff), json=policy if method == "PUT" else None
        ).status_code
        for method, path in staff_paths(course)
    ]


def refused_in_plain_words(answer: httpx.Response, data_dir: Path) -> str:
    """A refusal page that hands out nothing, and its log line: returns the line."""
    assert answer.status_code == 403, answer.text
    assert "location" not in answer.headers
    page = unescape(answer.text)
    assert "This course is not linked to the grader" in page
    for handed_out in ("lti_session", "staff_session", "agi_", "name='context'"):
        assert handed_out not in page
    reference = re.search(r"Reference: ([0-9a-f]{8})", page)
    assert reference is not None
    (line,) = [
        line
        for log in data_dir.glob("serve-*.log")
        for line in log.read_text().splitlines()
        if reference[1] in line
    ]
    return line


def launches_from(database: Database, context: str) -> list[LtiLaunch]:
    with database.session() as session:
        return list(session.scalars(select(LtiLaunch).where(LtiLaunch.context_id == context)))


@pytest.mark.parametrize(
    ("role", "kind"),
    [("Instructor", "resource"), ("Learner", "resource"), ("Instructor", "deep-link")],
)
def test_a_launch_from_an_lms_course_bound_to_none_of_ours_gets_nothing(
    served: tuple[httpx.Client, Path],
    served_database: Database,
    platform: Platform,
    role: str,
    kind: str,
) -> None:
    tool, data_dir = served
    from_course(platform, ANOTHER, role, "someone-else", kind)
    line = refused_in_plain_words(post_launch_over_http(tool, platform), data_dir)
    assert "'Title of course-2'" in line and "context 'course-2'" in line
    assert launches_from(served_database, ANOTHER) == []
    # Recorded for the operator, with its title, and bound to nothing.
    with served_database.session() as session:
        seen = session.scalars(select(LtiContext).where(LtiContext.context_id == ANOTHER)).one()
        assert (seen.title, seen.label, seen.course_id) == (
            "Title of course-2",
            "LBL-course-2",
            None,
        )
        assert seen.refused_launches >= 1


def test_the_bound_lms_courses_instructor_is_staff_of_ours_as_before(
    tool: httpx.Client, platform: Platform
) -> None:
    from_course(platform, CONTEXT_ID, "Instructor", "teacher-1")
    location = launch_over_http(tool, platform)
    assert urlparse(location).path == f"/courses/{OURS}/dashboard"
    assert staff_answers(tool, OURS, token(location, "staff_session")) == [200, 200, 200, 200]
    from_course(platform, CONTEXT_ID, "Instructor", "teacher-1", "deep-link")
    picker = post_launch_over_http(tool, platform)
    assert picker.status_code == 200 and "name='context'" in picker.text


def test_with_the_own_policy_each_lms_course_gets_a_course_and_its_own_students(
    tool: httpx.Client, served_database: Database, own_platform: Platform
) -> None:
    # The first launch from the other LMS course, its instructor's, makes a course of its own.
    from_course(own_platform, ELSEWHERE, "Instructor", "teacher-2")
    location = urlparse(launch_over_http(tool, own_platform))
    theirs = location.path.removeprefix("/courses/").removesuffix("/dashboard")
    assert theirs.startswith("lms-test-lbl-course-3-") and theirs != OURS
    staff = token(location.geturl(), "staff_session")
    assert staff_answers(tool, OURS, staff) == [404, 404, 404, 404]
    assert staff_answers(tool, theirs, staff) == [200, 200, 200, 200]

    # One LMS user, a learner in both LMS courses, is a student of each course apart.
    submitted = {}
    for context in (CONTEXT_ID, ELSEWHERE):
        from_course(own_platform, context, "Learner", "student-both")
        session = token(launch_over_http(tool, own_platform), "lti_session")
        answer = tool.post("/lti/submissions", json={"source": CORRECT}, headers=bearer(session))
        assert answer.status_code == 202, answer.text
        submitted[context] = answer.json()["id"]
        history = tool.get("/lti/submissions", headers=bearer(session)).json()
        assert [item["id"] for item in history["items"]] == [submitted[context]]
    assert submitted[CONTEXT_ID] != submitted[ELSEWHERE]
    listing = tool.get("/v1/submissions", headers=bearer(staff)).json()
    assert [item["id"] for item in listing["items"]] == [submitted[ELSEWHERE]]
    assert (
        tool.get(f"/v1/submissions/{submitted[CONTEXT_ID]}", headers=bearer(staff)).status_code
        == 404
    )
    # Their launches keep their own line item and context, for the grade's way back.
    (launch,) = launches_from(served_database, ELSEWHERE)
    assert launch.user_id == "student-both" and launch.lineitem_url == own_platform.lineitem_url()
