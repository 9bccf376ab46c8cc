"""A launch as the course's Instructor or Teaching Assistant, against `lti1p3platform` as the
LMS: it opens the course dashboard with a staff session (the course's instructor, nobody's
student), which the staff API takes as a credential; a learner's launch is unchanged."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from app_support import CORRECT, SEED, SettingsFactory
from fastapi.testclient import TestClient
from platform_support import Platform, post_launch, register_in, serve_platform, start_launch
from tool_support import serve_tool

from app.access.signed_tokens import sign
from app.access.staff_sessions import STAFF_TOKEN_PREFIX, StaffSession
from app.lti.models import LtiLaunch
from app.lti.roles import ROLES_CLAIM
from grader.runner import Grader

pytestmark = pytest.mark.slow  # two servers and real HTTP between them

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
INSTRUCTOR = f"{LIS}membership#Instructor"
TEACHING_ASSISTANT = f"{LIS}membership/Instructor#TeachingAssistant"


@pytest.fixture
def tool(make_settings: SettingsFactory, grader: Grader, database_url: str) -> Iterator[TestClient]:
    """On SQLite and on PostgreSQL: the launch finds the platform's course by SQL."""
    with serve_tool(make_settings(database_url=database_url), grader) as client:
        yield client


@pytest.fixture
def platform(tool: TestClient) -> Iterator[Platform]:
    with serve_platform(tool.get("/lti/jwks").json()) as served:
        register_in(tool.app.state.api.database, served, course="ml-101")  # type: ignore[attr-defined]
        yield served


def launch_as(tool: TestClient, platform: Platform, roles: list[str], user: str) -> str:
    """The launch's redirect, for a user with these roles on the SEED exercise's link."""
    platform.next_launch.exercise = SEED
    platform.next_launch.user_id = user
    platform.next_launch.claims = {ROLES_CLAIM: roles}
    answer = post_launch(tool, start_launch(tool, platform))
    assert answer.status_code == 303, answer.text
    location: str = answer.headers["location"]
    return location


def staff_token(location: str) -> str:
    token: str = parse_qs(urlparse(location).fragment)["staff_session"][0]
    return token


@pytest.mark.parametrize("role", [INSTRUCTOR, TEACHING_ASSISTANT])
def test_an_instructor_or_ta_launch_opens_the_course_dashboard(
    tool: TestClient, platform: Platform, role: str
) -> None:
    location = urlparse(launch_as(tool, platform, [role], "teacher-1"))
    assert location.path == "/courses/ml-101/dashboard"
    assert parse_qs(location.query) == {"exercise": [SEED]}
    assert tool.get(location.path).status_code == 200
    api = tool.app.state.api  # type: ignore[attr-defined]
    staff = StaffSession.verify(api.settings, staff_token(location.geturl()))
    assert staff.user_id == "teacher-1"
    # Staff submit nothing: no launch is stored for grade passback.
    with api.database.session() as session:
        assert session.query(LtiLaunch).count() == 0


def test_the_staff_session_reads_the_whole_course_and_no_other(
    tool: TestClient, platform: Platform
) -> None:
    student = launch_as(tool, platform, [f"{LIS}membership#Learner"], "student-7")
    assert urlparse(student).path == f"/exercises/{SEED}"
    session_token = parse_qs(urlparse(student).fragment)["lti_session"][0]
    submitted = tool.post(
        "/lti/submissions",
        json={"source": CORRECT},
        headers={"Authorization": f"Bearer {session_token}"},
    ).json()["id"]
    staff = {"Authorization": f"Bearer {staff_token(launch_as(tool, platform, [INSTRUCTOR], 't'))}"}
    listing = tool.get("/v1/submissions", headers=staff).json()
    assert [item["id"] for item in listing["items"]] == [submitted]
    # Its code too: the staff of a course read any student's work in it.
    assert tool.get(f"/v1/submissions/{submitted}", headers=staff).json()["source"] == CORRECT
    # The default course's work is another course's: unknown to this session.
    other = tool.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT}).json()["id"]
    assert tool.get(f"/v1/submissions/{other}", headers=staff).status_code == 404


def test_a_learner_who_teaches_elsewhere_stays_a_student(
    tool: TestClient, platform: Platform
) -> None:
    roles = [f"{LIS}membership#Learner", f"{LIS}institution/person#Instructor"]
    location = urlparse(launch_as(tool, platform, roles, "faculty-enrolled"))
    assert location.path == f"/exercises/{SEED}"
    assert "lti_session" in parse_qs(location.fragment)


def test_a_forged_or_tampered_staff_session_is_refused(
    tool: TestClient, platform: Platform
) -> None:
    token = staff_token(launch_as(tool, platform, [INSTRUCTOR], "teacher-1"))
    for forged in ("agi_forged.token.value", token[:-4] + "AAAA"):
        answer = tool.get("/v1/submissions", headers={"Authorization": f"Bearer {forged}"})
        assert answer.status_code == 401
        assert "launch again" in answer.json()["detail"]


def test_a_staff_session_handed_out_before_lms_courses_were_bound_is_void(
    tool: TestClient, platform: Platform
) -> None:
    """Before, any instructor of any LMS course of the platform got one: it names no LMS course."""
    api = tool.app.state.api  # type: ignore[attr-defined]
    claims = {"pid": 1, "sub": "teacher-elsewhere", "course": 2}
    before = STAFF_TOKEN_PREFIX + sign(api.settings, "lti:staff", claims, time.time() + 3600)
    answer = tool.get(
        "/v1/courses/ml-101/gradebook.csv", headers={"Authorization": f"Bearer {before}"}
    )
    assert answer.status_code == 401
    assert "launch again" in answer.json()["detail"]
