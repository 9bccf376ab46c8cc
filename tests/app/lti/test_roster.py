"""The course roster (LTI Names and Role Provisioning) against `lti1p3platform` as the LMS, over
real HTTP on loopback: a launch asks for it, the outbox reads every page (waiting out a 429),
and the staff see every enrolled student, those who submitted nothing included, in the
dashboard's data and the gradebook; roster roles decide who is staff as a launch's do; a roster
URL to an internal address is never called."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from access_support import caller
from app_support import CORRECT, SEED, SettingsFactory, wait_until
from fastapi.testclient import TestClient
from platform_support import Platform, post_launch, register_in, serve_platform, start_launch
from sqlalchemy import func, select
from tool_support import serve_tool

from app.core.models import Role
from app.lti.models import LtiRosterSync
from app.lti.nrps import NRPS_CLAIM
from grader.runner import Grader

pytestmark = pytest.mark.slow  # two servers and real HTTP between them

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
LEARNER = f"{LIS}membership#Learner"
ROSTER_PATH = "/v1/courses/ml-101/roster"


def member(user_id: str, name: str, *roles: str, status: str = "Active") -> dict[str, Any]:
    return {"user_id": user_id, "name": name, "roles": list(roles or [LEARNER]), "status": status}


ROSTER = [
    member("student-42", "Ada Student"),
    member("student-43", "Grace Hopper"),
    member("student-44", "Alan Turing"),
    member("ta-1", "Tess Assistant", f"{LIS}membership/Instructor#TeachingAssistant"),
    member("teacher-1", "Ivan Instructor", "Instructor"),  # the deprecated simple name
    member("faculty-1", "Fay Faculty", LEARNER, f"{LIS}institution/person#Instructor"),
    member("dropped-1", "Dee Dropped", status="Inactive"),
]


@pytest.fixture
def tool(make_settings: SettingsFactory, grader: Grader, database_url: str) -> Iterator[TestClient]:
    """On SQLite and on PostgreSQL."""
    settings = make_settings(database_url=database_url, lti_score_backoff_s=0.05)
    with serve_tool(settings, grader) as client:
        yield client


@pytest.fixture
def staff(tool: TestClient, platform: Platform) -> dict[str, str]:
    """The headers of an instructor of ml-101 (a key of the course)."""
    return caller(tool, "ml-101", Role.INSTRUCTOR).headers


@pytest.fixture
def platform(tool: TestClient) -> Iterator[Platform]:
    with serve_platform(tool.get("/lti/jwks").json()) as served:
        register_in(tool.app.state.api.database, served, course="ml-101")  # type: ignore[attr-defined]
        served.roster = [dict(one) for one in ROSTER]
        served.next_launch.offers_roster = True
        served.next_launch.exercise = SEED
        yield served


def launch_student(tool: TestClient, platform: Platform) -> dict[str, str]:
    answer = post_launch(tool, start_launch(tool, platform))
    assert answer.status_code == 303, answer.text
    token = parse_qs(urlparse(answer.headers["location"]).fragment)["lti_session"][0]
    return {"Authorization": f"Bearer {token}"}


def settled(tool: TestClient, staff: dict[str, str]) -> dict[str, Any]:
    """The roster once its latest sync is settled (delivered or failed)."""

    def done() -> bool:
        answer = tool.get(ROSTER_PATH, headers=staff)
        assert answer.status_code == 200, answer.text
        sources = answer.json()["sources"]
        return all(s["latest"] and s["latest"]["status"] != "pending" for s in sources)

    wait_until(done)
    roster: dict[str, Any] = tool.get(ROSTER_PATH, headers=staff).json()
    return roster


def syncs(tool: TestClient) -> int:
    with tool.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        return session.scalar(select(func.count()).select_from(LtiRosterSync)) or 0


def student_id(user_id: str) -> str:
    return f"lti:1:{user_id}"


def test_a_launch_reads_the_roster_page_by_page_and_staff_see_who_never_submitted(
    tool: TestClient, platform: Platform, staff: dict[str, str]
) -> None:
    student = launch_student(tool, platform)
    roster = settled(tool, staff)
    # 7 members, 2 a page: 4 pages, each the one the previous page's Link named.
    assert platform.roster_requests == ["", "offset=2", "offset=4", "offset=6"]
    (source,) = roster["sources"]
    assert source["latest"]["status"] == "delivered"
    assert (source["latest"]["members"], source["latest"]["reason"]) == (7, "launch")
    assert source["synced_at"] is not None
    assert len(roster["members"]) == 7

    submitted = tool.post("/lti/submissions", json={"source": CORRECT}, headers=student)
    assert submitted.status_code == 202, submitted.text
    # A second launch within the staleness window asks for nothing more.
    launch_student(tool, platform)
    assert syncs(tool) == 1

    def students() -> dict[str, Any]:
        listed = tool.get("/v1/courses/ml-101/students", headers=staff).json()["students"]
        return {row["student_id"]: row for row in listed}

    wait_until(lambda: bool(students()[student_id("student-42")]["exercises"]))
    by_id = students()
    enrolled = ["student-42", "student-43", "student-44", "faculty-1"]
    assert sorted(by_id) == sorted(map(student_id, enrolled))
    assert by_id[student_id("student-43")] == {
        "student_id": student_id("student-43"),
        "name": "Grace Hopper",
        "exercises": {},
    }
    assert by_id[student_id("student-42")]["exercises"][SEED]["attempts"] == 1

    answer = tool.get("/v1/courses/ml-101/gradebook.csv", headers=staff)
    rows = list(csv.reader(io.StringIO(answer.text)))
    header, body = rows[0], {row[0]: row for row in rows[1:]}
    assert header[0] == "student_id" and header[-2:] == ["name", "status"]
    assert body[student_id("student-44")][-2:] == ["Alan Turing", "not submitted"]
    assert body[student_id("student-42")][-2:] == ["Ada Student", "submitted"]
    assert body[student_id("student-42")][header.index(SEED)] != ""
    assert student_id("ta-1") not in body and student_id("dropped-1") not in body


def test_roster_roles_decide_staff_as_launch_roles_do(
    tool: TestClient, platform: Platform, staff: dict[str, str]
) -> None:
    launch_student(tool, platform)
    members = {one["user_id"]: one for one in settled(tool, staff)["members"]}
    # A TA (a sub-role of Instructor) and an Instructor are staff; a faculty member enrolled
    # as a learner stays a learner, as at a launch.
    assert {user for user, one in members.items() if one["staff"]} == {"ta-1", "teacher-1"}
    assert members["dropped-1"]["status"] == "Inactive"
    assert members["ta-1"]["student_id"] == student_id("ta-1")


def test_a_429_is_waited_out_as_its_retry_after_says(
    tool: TestClient, platform: Platform, staff: dict[str, str]
) -> None:
    platform.roster_failures = [429]
    started = time.monotonic()
    launch_student(tool, platform)
    (source,) = settled(tool, staff)["sources"]
    assert source["latest"]["status"] == "delivered"
    assert source["latest"]["attempts"] == 1  # waited within the attempt, not failed
    assert platform.roster_requests == ["", "", "offset=2", "offset=4", "offset=6"]
    assert time.monotonic() - started >= 1.0  # Retry-After: 1


def test_staff_ask_for_a_sync_and_a_member_who_left_is_kept_as_deleted(
    tool: TestClient, platform: Platform, staff: dict[str, str]
) -> None:
    refused = tool.post(f"{ROSTER_PATH}/sync", headers=staff)
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("no-roster")
    launch_student(tool, platform)
    settled(tool, staff)
    platform.roster = [one for one in platform.roster if one["user_id"] != "student-44"]
    asked = tool.post(f"{ROSTER_PATH}/sync", headers=staff)
    assert asked.status_code == 202, asked.text
    assert tool.post(f"{ROSTER_PATH}/sync", headers=staff).status_code == 202
    (source,) = settled(tool, staff)["sources"]
    assert (source["latest"]["reason"], source["latest"]["members"]) == ("staff", 6)
    assert syncs(tool) == 2  # the second ask found the first one due
    listed_members = tool.get(ROSTER_PATH, headers=staff).json()["members"]
    members = {one["user_id"]: one for one in listed_members}
    assert members["student-44"]["status"] == "Deleted"
    listed = tool.get("/v1/courses/ml-101/students", headers=staff).json()["students"]
    assert student_id("student-44") not in {row["student_id"] for row in listed}


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://10.0.0.7/memberships", "private"),
        ("file:///etc/passwd", "scheme"),
    ],
)
def test_a_roster_url_to_an_internal_address_is_never_called(
    tool: TestClient, platform: Platform, staff: dict[str, str], url: str, reason: str
) -> None:
    platform.next_launch.claims = {
        NRPS_CLAIM: {"context_memberships_url": url, "service_versions": ["2.0"]}
    }
    launch_student(tool, platform)  # the launch itself goes on
    if reason == "scheme":  # not a URL the tool reads at all: no sync is asked
        assert syncs(tool) == 0
        return
    (source,) = settled(tool, staff)["sources"]
    assert source["latest"]["status"] == "failed"
    assert source["latest"]["attempts"] == 1  # refused for good: never retried
    assert reason in source["latest"]["error"]
    assert "roster reads go to public addresses only" in source["latest"]["error"]
    assert platform.roster_requests == []
