"""Due dates: lateness counted in days begun, the late policies (mark, penalty, close), students'
extensions, a queue across the deadline, the page's due date, and what the gradebook makes of
it; over the API, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from access_support import Caller, caller, linked_student
from app_support import (
    CORRECT,
    SEED,
    ClientFactory,
    FakeSandbox,
    SettingsFactory,
    load_submission,
    store_submission,
    wait_until,
)
from fastapi.testclient import TestClient
from httpx2 import Response
from sqlalchemy import MetaData, Table

from app.core.db import Database, migrate
from app.core.models import DEFAULT_COURSE_ID, Role, Submission, SubmissionStatus, utcnow
from app.courses.due_dates import Lateness, days_late, penalty_factor, set_lms_due_date
from app.courses.models import ExercisePolicy, LatePolicy
from app.lti.passback import grade_for
from grader.report import Report, ReportStatus

DUE = datetime(2026, 12, 18, 23, 59, tzinfo=UTC)
COURSE = "ml-101"


def test_lateness_counts_every_day_begun_after_the_due_date() -> None:
    assert days_late(DUE - timedelta(seconds=1), DUE) == 0
    assert days_late(DUE, DUE) == 0
    assert days_late(DUE + timedelta(seconds=1), DUE) == 1
    assert days_late(DUE + timedelta(days=1), DUE) == 1
    assert days_late(DUE + timedelta(days=1, seconds=1), DUE) == 2


def test_a_penalty_takes_its_percent_per_day_and_never_below_nothing() -> None:
    assert penalty_factor(LatePolicy.PENALTY, 10, 0) == 1.0
    assert penalty_factor(LatePolicy.PENALTY, 10, 3) == pytest.approx(0.7)
    assert penalty_factor(LatePolicy.PENALTY, 30, 4) == 0.0
    assert penalty_factor(LatePolicy.ACCEPT, None, 4) == 1.0


def test_the_lms_gets_the_penalised_score_and_a_comment_that_says_why() -> None:
    report = Report(exercise=SEED, status=ReportStatus.PASSED, score=10, max_score=10, tests=[])
    late = grade_for(report, "sub", DUE.isoformat(), Lateness(2, LatePolicy.PENALTY, 10))
    marked = grade_for(report, "sub", DUE.isoformat(), Lateness(1, LatePolicy.ACCEPT, None))
    on_time = grade_for(report, "sub", DUE.isoformat(), Lateness(0, LatePolicy.PENALTY, 10))

    assert (late.get_score_given(), late.get_score_maximum()) == (8.0, 10)
    assert str(late.get_comment()).startswith("Late by 2 days: 8 of 10 after 20% off (10 before). ")
    assert marked.get_score_given() == 10
    assert str(marked.get_comment()).startswith("Late by 1 day. ")
    assert on_time.get_score_given() == 10
    assert not str(on_time.get_comment()).startswith("Late")


@dataclass(frozen=True)
class Dated:
    """Course ml-101 with its instructor, and students s1 and s2 signed in by links."""

    client: TestClient
    instructor: Caller
    students: dict[str, Caller]

    def policy(self, **policy: Any) -> None:
        body = {key: value.isoformat() if isinstance(value, datetime) else value
                for key, value in policy.items()}  # fmt: skip
        answer = self.client.put(
            f"/v1/courses/{COURSE}/exercises/{SEED}/policy",
            json=body,
            headers=self.instructor.headers,
        )
        assert answer.status_code == 200, answer.text

    def submit(self, student: str, *, wait: bool = True) -> Response:
        return self.client.post(
            f"/v1/submissions?wait={str(wait).lower()}",
            json={"exercise": SEED, "source": CORRECT},
            headers=self.students[student].headers,
        )

    def due(self, student: str) -> dict[str, Any]:
        answer = self.client.get(
            f"/v1/exercises/{SEED}/due", headers=self.students[student].headers
        )
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def days_late(self, submission_id: str) -> int:
        database = self.client.app.state.api.database  # type: ignore[attr-defined]
        return load_submission(database, submission_id).days_late

    def gradebook(self) -> dict[str, tuple[str, str]]:
        """Student → (their score of the seed exercise, their late exercises)."""
        answer = self.client.get(
            f"/v1/courses/{COURSE}/gradebook.csv", headers=self.instructor.headers
        )
        _maxima, *rows = csv.DictReader(io.StringIO(answer.text))
        return {row["student_id"]: (row[SEED], row["late"]) for row in rows}


@pytest.fixture
def dated(make_client: ClientFactory, make_settings: SettingsFactory, database_url: str) -> Dated:
    client = make_client(make_settings(require_api_keys=True, database_url=database_url))
    instructor = caller(client, COURSE, Role.INSTRUCTOR)
    students = {name: linked_student(client, COURSE, name) for name in ("s1", "s2")}
    return Dated(client, instructor, students)


def test_a_submission_before_the_due_date_is_on_time(dated: Dated) -> None:
    due_at = utcnow() + timedelta(days=2)
    dated.policy(due_at=due_at, late_policy="penalty", penalty_per_day=10)

    submitted = dated.submit("s1")

    assert submitted.status_code == 200, submitted.text
    assert dated.days_late(submitted.json()["id"]) == 0
    assert dated.gradebook()["s1"] == ("10", "")
    shown = dated.due("s1")
    assert (shown["state"], shown["source"], shown["penalty_per_day"]) == ("open", "course", 10)
    assert datetime.fromisoformat(shown["due_at"]) == due_at
    assert shown["due_at"].endswith("Z")  # UTC, for the page to show in the student's zone


def test_a_late_submission_is_graded_in_full_and_marked_late(dated: Dated) -> None:
    dated.policy(due_at=utcnow() - timedelta(hours=2), late_policy="accept")

    submitted = dated.submit("s1")

    assert submitted.status_code == 200, submitted.text
    assert submitted.json()["report"]["score"] == 10
    assert dated.days_late(submitted.json()["id"]) == 1
    assert dated.gradebook()["s1"] == ("10", SEED)
    assert dated.due("s1")["state"] == "late"


def test_a_penalty_takes_its_share_per_day_late_in_the_gradebook(dated: Dated) -> None:
    dated.policy(due_at=utcnow() - timedelta(hours=25), late_policy="penalty", penalty_per_day=10)

    submitted = dated.submit("s1")

    assert dated.days_late(submitted.json()["id"]) == 2
    assert dated.gradebook()["s1"] == ("8", SEED)
    dated.policy(due_at=utcnow() - timedelta(hours=25), late_policy="penalty", penalty_per_day=60)
    assert dated.gradebook()["s1"] == ("0", SEED)  # floored at nothing


def test_after_the_due_date_a_closed_exercise_refuses_in_the_student_s_words(
    dated: Dated,
) -> None:
    dated.policy(due_at=utcnow() - timedelta(minutes=1), late_policy="close")

    refused = dated.submit("s1")

    assert refused.status_code == 403
    problem = refused.json()
    assert problem["type"] == "urn:autograder:problem:submissions-closed"
    assert problem["detail"].startswith("this exercise was due at ")
    assert "ask your instructor for an extension" in problem["detail"]
    assert dated.due("s1")["state"] == "closed"
    assert dated.gradebook() == {}  # nothing was kept
    staff = dated.client.post(
        "/v1/submissions",
        json={"exercise": SEED, "source": CORRECT, "student_id": "s1"},
        headers=dated.instructor.headers,
    )
    assert staff.status_code == 202  # staff try exercises out after the date too


def test_an_extended_student_is_on_time_after_the_course_s_due_date(dated: Dated) -> None:
    dated.policy(due_at=utcnow() - timedelta(hours=1), late_policy="close")
    extended = utcnow() + timedelta(days=1)
    granted = dated.client.put(
        f"/v1/courses/{COURSE}/exercises/{SEED}/extensions",
        json={"student_id": "s1", "due_at": extended.isoformat()},
        headers=dated.instructor.headers,
    )
    assert granted.status_code == 200, granted.text

    on_time = dated.submit("s1")
    other = dated.submit("s2")

    assert on_time.status_code == 200, on_time.text
    assert dated.days_late(on_time.json()["id"]) == 0
    assert (dated.due("s1")["state"], dated.due("s1")["source"]) == ("open", "extension")
    assert other.status_code == 403
    listed = dated.client.get(
        f"/v1/courses/{COURSE}/exercises/{SEED}/extensions", headers=dated.instructor.headers
    ).json()
    assert [row["student_id"] for row in listed] == ["s1"]


def test_an_extension_granted_afterwards_makes_earlier_late_work_on_time(dated: Dated) -> None:
    dated.policy(due_at=utcnow() - timedelta(hours=1), late_policy="penalty", penalty_per_day=50)
    late = dated.submit("s1").json()["id"]
    assert dated.gradebook()["s1"] == ("5", SEED)
    path = f"/v1/courses/{COURSE}/exercises/{SEED}/extensions"

    granted = dated.client.put(
        path,
        json={"student_id": "s1", "due_at": (utcnow() + timedelta(days=1)).isoformat()},
        headers=dated.instructor.headers,
    ).json()

    assert granted["decided_again"] == 1
    assert dated.days_late(late) == 0
    assert dated.gradebook()["s1"] == ("10", "")
    withdrawn = dated.client.delete(f"{path}/s1", headers=dated.instructor.headers)
    assert withdrawn.status_code == 204
    assert dated.days_late(late) == 1
    again = dated.client.delete(f"{path}/s1", headers=dated.instructor.headers)
    assert again.status_code == 404


def test_a_submission_received_before_the_deadline_and_graded_after_it_is_on_time(
    dated: Dated, sandbox: FakeSandbox
) -> None:
    """A queue at the deadline: received a moment before, graded only once the date has passed."""
    due_at = utcnow() + timedelta(seconds=2)
    dated.policy(due_at=due_at, late_policy="close")
    sandbox.gate.clear()  # the graders are busy: the submission waits in line

    accepted = dated.submit("s1", wait=False)
    assert accepted.status_code == 202, accepted.text
    time.sleep(max(0.0, (due_at - utcnow()).total_seconds()) + 0.2)
    sandbox.gate.set()

    database = dated.client.app.state.api.database  # type: ignore[attr-defined]
    submission_id = accepted.json()["id"]
    wait_until(lambda: load_submission(database, submission_id).status is SubmissionStatus.DONE)
    graded = load_submission(database, submission_id)
    assert graded.created_at < due_at < graded.finished_at  # type: ignore[operator]
    assert graded.days_late == 0
    assert dated.gradebook()["s1"] == ("10", "")


def test_a_late_policy_needs_its_rate_and_a_due_date_its_time_zone(dated: Dated) -> None:
    path = f"/v1/courses/{COURSE}/exercises/{SEED}/policy"
    for body in (
        {"late_policy": "penalty"},
        {"penalty_per_day": 10},
        {"late_policy": "penalty", "penalty_per_day": 0},
        {"due_at": "2026-12-18T23:59:00"},
    ):
        answer = dated.client.put(path, json=body, headers=dated.instructor.headers)
        assert answer.status_code == 422, body


def test_without_a_due_date_the_page_is_told_there_is_none(dated: Dated) -> None:
    shown = dated.due("s1")
    assert (shown["state"], shown["due_at"], shown["source"]) == ("none", None, None)


def test_work_and_policies_from_before_due_dates_are_on_time_with_no_due_date(
    database_url: str,
) -> None:
    database = Database.from_url(database_url)
    try:
        migrate(database.engine, "0011")
        tables = MetaData()
        submissions, policies = (
            Table(name, tables, autoload_with=database.engine)
            for name in ("submissions", "exercise_policies")
        )
        with database.engine.begin() as connection:
            connection.execute(
                submissions.insert().values(
                    id="01JD8Z6Q3M9V7N4K2P5R8T1W0X", course_id=1, exercise=SEED, source="s",
                    status="done", attempts=1, created_at=utcnow(),
                )
            )  # fmt: skip
            connection.execute(
                policies.insert().values(
                    course_id=1, exercise=SEED, gradebook="best", updated_at=utcnow()
                )
            )
        migrate(database.engine)
        with database.session() as session:
            old = session.get_one(Submission, "01JD8Z6Q3M9V7N4K2P5R8T1W0X")
            policy = session.get_one(ExercisePolicy, (1, SEED))
            assert old.days_late == 0
            assert (policy.due_at, policy.late_policy, policy.lms_due_at) == (
                None, LatePolicy.ACCEPT, None,
            )  # fmt: skip
    finally:
        database.close()


def test_the_lms_s_due_date_comes_first_and_decides_again_the_work_it_covers(
    database: Database,
) -> None:
    received = utcnow()
    submitted = store_submission(database, student_id="s1", created_at=received)
    with database.session() as session:
        set_lms_due_date(session, DEFAULT_COURSE_ID, SEED, received - timedelta(hours=1))
    assert load_submission(database, submitted).days_late == 1
    with database.session() as session:
        set_lms_due_date(session, DEFAULT_COURSE_ID, SEED, None)  # the LMS took it away
        assert session.get_one(ExercisePolicy, (DEFAULT_COURSE_ID, SEED)).lms_due_at is None
    assert load_submission(database, submitted).days_late == 0
