"""Attempt budgets: the token bucket at its edges, what uses up an attempt, and the refusal a
student meets (429, Retry-After, words they understand), on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from access_support import Caller, caller, linked_student
from app_support import (
    CORRECT,
    MISSING_SCALING,
    SEED,
    ClientFactory,
    FakeSandbox,
    SettingsFactory,
)
from fastapi.testclient import TestClient
from httpx2 import Response
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.core.models import Role, Submission
from app.courses.budgets import Budget, Standing, standing, used_up_message
from app.courses.models import ExercisePolicy
from app.courses.registry import existing_course
from app.grading.report_store import charges_attempt
from app.lti.sessions import LaunchSession
from grader.report import Report, ReportStatus

T0 = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
HOURLY_3 = Budget(attempts=3, window_s=3600)  # an attempt back every 20 minutes


def minutes(count: float) -> timedelta:
    return timedelta(minutes=count)


def test_a_student_who_never_submitted_has_every_attempt() -> None:
    assert standing(HOURLY_3, [], T0) == Standing(3, None)


def test_each_charged_submission_takes_one_and_they_come_back_one_by_one() -> None:
    charged = [T0, T0, T0]
    assert standing(HOURLY_3, charged, T0) == Standing(0, T0 + minutes(20))
    assert standing(HOURLY_3, charged, T0 + minutes(20) - timedelta(seconds=1)).remaining == 0
    assert standing(HOURLY_3, charged, T0 + minutes(20)) == Standing(1, T0 + minutes(40))
    assert standing(HOURLY_3, charged, T0 + minutes(59)) == Standing(2, T0 + minutes(60))
    assert standing(HOURLY_3, charged, T0 + minutes(60)) == Standing(3, None)


def test_the_bucket_never_holds_more_than_its_attempts() -> None:
    """A week of rest does not save up a burst bigger than the budget."""
    later = T0 + timedelta(days=7)
    assert standing(HOURLY_3, [T0, later, later, later], later).remaining == 0


def test_attempts_allowed_by_a_looser_policy_are_a_debt_that_refills() -> None:
    five_at_once = [T0] * 5
    assert standing(HOURLY_3, five_at_once, T0 + minutes(20)) == Standing(0, T0 + minutes(60))
    assert standing(HOURLY_3, five_at_once, T0 + minutes(60)).remaining == 1


moments = st.lists(st.integers(min_value=0, max_value=20_000), max_size=30).map(
    lambda seconds: [T0 + timedelta(seconds=s) for s in sorted(seconds)]
)


@given(
    attempts=st.integers(min_value=1, max_value=10),
    window_s=st.integers(min_value=1, max_value=7200),
    charged=moments,
    after_s=st.integers(min_value=0, max_value=10_000),
)
def test_the_standing_is_bounded_and_its_next_attempt_comes_when_it_says(
    attempts: int, window_s: int, charged: list[datetime], after_s: int
) -> None:
    budget = Budget(attempts, window_s)
    now = (charged[-1] if charged else T0) + timedelta(seconds=after_s)
    found = standing(budget, charged, now)
    assert 0 <= found.remaining <= attempts
    assert (found.next_at is None) == (found.remaining == attempts)
    if found.next_at is not None:
        assert found.next_at > now
        assert standing(budget, charged, found.next_at).remaining == found.remaining + 1


@given(attempts=st.integers(min_value=1, max_value=10), window_s=st.integers(1, 7200))
def test_a_student_who_submits_whenever_an_attempt_is_there_is_never_refused(
    attempts: int, window_s: int
) -> None:
    budget, now = Budget(attempts, window_s), T0
    charged: list[datetime] = []
    for _ in range(3 * attempts):
        found = standing(budget, charged, now)
        if found.remaining == 0:
            assert found.next_at is not None
            now = found.next_at
            assert standing(budget, charged, now).remaining >= 1
        charged.append(now)


def test_the_refusal_says_the_budget_when_the_next_attempt_comes_and_what_is_free() -> None:
    message = used_up_message(Budget(5, 3600), T0 + minutes(12))
    assert message == (
        "you have used 5 attempts this exercise allows every hour. The next one comes back at "
        "12:12 UTC. Submissions that pass, and those the grader failed to grade, do not count."
    )
    assert "every 90 minutes" in used_up_message(Budget(2, 5400), T0)
    assert "every 2 days" in used_up_message(Budget(2, 2 * 86400), T0)


@pytest.mark.parametrize(
    ("status", "charged"),
    [
        (ReportStatus.PASSED, False),
        (ReportStatus.ERROR, False),
        (ReportStatus.FAILED, True),
        (ReportStatus.REJECTED, True),
    ],
)
def test_a_pass_and_a_fault_of_the_grader_use_up_no_attempt(
    status: ReportStatus, charged: bool
) -> None:
    report = Report(exercise=SEED, status=status, score=0.0, max_score=1.0, tests=[])
    assert charges_attempt(report) is charged


@dataclass(frozen=True)
class Budgeted:
    """Course ml-101, where the seed exercise allows 2 attempts an hour."""

    client: TestClient
    student: Caller  # s1, signed in by a student link
    instructor: Caller


@pytest.fixture
def budgeted(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str
) -> Budgeted:
    client = make_client(make_settings(require_api_keys=True, database_url=database_url))
    instructor = caller(client, "ml-101", Role.INSTRUCTOR)
    student = linked_student(client, "ml-101", "s1")
    with client.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        course_id = existing_course(session, "ml-101").id
        session.add(ExercisePolicy(course_id=course_id, exercise=SEED, attempts=2, window_s=3600))
    return Budgeted(client, student, instructor)


def submit(client: TestClient, who: Caller, source: str, *, wait: bool = True) -> Response:
    return client.post(
        f"/v1/submissions?wait={str(wait).lower()}",
        json={"exercise": SEED, "source": source, "student_id": "s1"},
        headers=who.headers,
    )


def attempts(client: TestClient, who: Caller) -> dict[str, Any]:
    response = client.get(f"/v1/exercises/{SEED}/attempts", headers=who.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def stored(client: TestClient) -> int:
    with client.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        return session.scalar(select(func.count()).select_from(Submission)) or 0


def test_past_its_budget_a_student_is_refused_and_told_when_to_come_back(
    budgeted: Budgeted,
) -> None:
    client, student = budgeted.client, budgeted.student
    assert attempts(client, student) == {
        "limited": True, "attempts": 2, "window_s": 3600, "remaining": 2, "next_at": None,
    }  # fmt: skip
    for _ in range(2):
        assert submit(client, student, MISSING_SCALING).json()["report"]["status"] == "failed"
    refused = submit(client, student, CORRECT)
    assert refused.status_code == 429
    problem = refused.json()
    assert problem["type"] == "urn:autograder:problem:attempts-used-up"
    assert problem["detail"].startswith("you have used 2 attempts this exercise allows every hour")
    assert 1700 <= int(refused.headers["Retry-After"]) <= 1800  # one back every 30 minutes
    assert stored(client) == 2  # the refused submission left nothing behind
    standing_now = attempts(client, student)
    assert standing_now["remaining"] == 0 and standing_now["next_at"] is not None


def test_passing_submissions_give_their_attempt_back(budgeted: Budgeted) -> None:
    client, student = budgeted.client, budgeted.student
    for _ in range(3):
        assert submit(client, student, CORRECT).status_code == 200
    assert attempts(client, student)["remaining"] == 2
    assert submit(client, student, MISSING_SCALING).status_code == 200
    assert attempts(client, student)["remaining"] == 1


def test_a_submission_uses_its_attempt_until_it_is_graded(
    budgeted: Budgeted, sandbox: FakeSandbox
) -> None:
    client, student = budgeted.client, budgeted.student
    sandbox.gate.clear()
    try:
        for _ in range(2):
            assert submit(client, student, CORRECT, wait=False).status_code == 202
        assert submit(client, student, CORRECT, wait=False).status_code == 429
    finally:
        sandbox.gate.set()


def test_course_staff_are_not_limited(budgeted: Budgeted) -> None:
    for _ in range(3):
        response = submit(budgeted.client, budgeted.instructor, MISSING_SCALING)
        assert response.status_code == 200, response.text


def test_without_a_policy_or_without_a_student_nothing_is_limited(budgeted: Budgeted) -> None:
    client = budgeted.client
    other = client.get(
        "/v1/exercises/scaled-dot-product-attention/attempts", headers=budgeted.student.headers
    )
    assert other.json() == {
        "limited": False, "attempts": None, "window_s": None, "remaining": None, "next_at": None,
    }  # fmt: skip
    assert attempts(client, budgeted.instructor)["limited"] is False  # names no student
    named = client.get(
        f"/v1/exercises/{SEED}/attempts",
        params={"student_id": "s1"},
        headers=budgeted.instructor.headers,
    )
    assert named.json()["remaining"] == 2


def test_a_launched_student_sees_their_standing(budgeted: Budgeted) -> None:
    client = budgeted.client
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        course_id = existing_course(session, "ml-101").id
    session_token = LaunchSession("launch-1", SEED, "lti:p:s1", course_id).sign(api.settings)
    response = client.get("/lti/attempts", headers={"Authorization": f"Bearer {session_token}"})
    assert response.status_code == 200, response.text
    assert response.json()["remaining"] == 2


def test_a_submitter_key_reads_the_standing_of_what_it_submitted_only(budgeted: Budgeted) -> None:
    """As the history shows a submitter key its own submissions, the standing counts them: the
    attempts a student made elsewhere (their link) are not the key's to see."""
    client = budgeted.client
    submitter = caller(client, "ml-101", Role.SUBMITTER)
    for _ in range(2):
        assert submit(client, budgeted.student, MISSING_SCALING).status_code == 200

    def remaining(who: Caller, student: str) -> int:
        response = client.get(
            f"/v1/exercises/{SEED}/attempts", params={"student_id": student}, headers=who.headers
        )
        assert response.status_code == 200, response.text
        count: int = response.json()["remaining"]
        return count

    assert remaining(budgeted.instructor, "s1") == 0
    assert remaining(submitter, "s1") == 2
    made = client.post(
        "/v1/submissions?wait=true",
        json={"exercise": SEED, "source": MISSING_SCALING, "student_id": "s2"},
        headers=submitter.headers,
    )
    assert made.status_code == 200, made.text
    assert remaining(submitter, "s2") == 1
