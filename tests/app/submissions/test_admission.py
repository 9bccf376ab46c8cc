"""Admission by what a caller does, on SQLite and PostgreSQL: a class submitting at once is never
refused; one student's submissions in flight, and one key's naming no student, are capped (429
with Retry-After, nothing stored); each accepted submission takes its rank in line."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from access_support import Caller, caller
from app_support import CORRECT, SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.api.problems import TooManyInFlight
from app.core.models import Role, Submission
from app.submissions import admission


@pytest.fixture
def keyed(
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
    """An app requiring keys whose dispatcher grades nothing: what it accepts stays queued."""

    def start(**overrides: Any) -> TestClient:
        settings = make_settings(require_api_keys=True, database_url=database_url, **overrides)
        client = make_client(settings)
        api = client.app.state.api  # type: ignore[attr-defined]
        monkeypatch.setattr(api.dispatcher, "submit", lambda submission_id: None)
        return client

    return start


def post(client: TestClient, who: Caller, student: str | None = None) -> Any:
    body = {"exercise": SEED, "source": CORRECT}
    if student is not None:
        body["student_id"] = student
    return client.post("/v1/submissions", json=body, headers=who.headers)


def stored(client: TestClient) -> list[tuple[str | None, int]]:
    """Every stored submission's (student, rank), oldest first."""
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        rows = session.execute(
            select(Submission.student_id, Submission.queue_rank).order_by(Submission.id)
        )
        return [(row.student_id, row.queue_rank) for row in rows]


def test_a_class_submitting_at_once_is_never_refused(keyed: Any) -> None:
    client = keyed(max_in_flight_per_student=1, max_in_flight_per_key=1)
    integration = caller(client, "ml-101", Role.SUBMITTER)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(
            pool.map(lambda n: post(client, integration, f"s{n:03}").status_code, range(300))
        )
    assert answers == [202] * 300
    assert sorted(stored(client)) == [(f"s{n:03}", 0) for n in range(300)]


def test_a_students_fourth_submission_in_flight_is_refused_and_stores_nothing(
    keyed: Any,
) -> None:
    client = keyed(queue_retry_after_s=7)
    integration = caller(client, "ml-101", Role.SUBMITTER)
    for _ in range(3):
        assert post(client, integration, "ada").status_code == 202
    refused = post(client, integration, "ada")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "7"
    problem = refused.json()
    assert problem["type"].endswith("too-many-in-flight")
    assert problem["detail"] == (
        "you have 3 submissions waiting to be graded; submit again once one is graded"
    )
    assert post(client, integration, "bob").status_code == 202  # another student is not held
    assert [student for student, _ in stored(client)] == ["ada"] * 3 + ["bob"]


def test_a_keyless_flood_is_refused_past_its_cap_and_students_count_apart(keyed: Any) -> None:
    client = keyed(max_in_flight_per_key=2, max_in_flight_per_student=1)
    integration = caller(client, "ml-101", Role.SUBMITTER)
    other = caller(client, "ml-101", Role.SUBMITTER)
    assert [post(client, integration).status_code for _ in range(2)] == [202, 202]
    flood = post(client, integration)
    assert flood.status_code == 429
    assert flood.json()["type"].endswith("too-many-in-flight")
    assert int(flood.headers["Retry-After"]) >= 1
    assert post(client, integration, "ada").status_code == 202  # counts for ada only
    assert post(client, other).status_code == 202  # another key has its own cap
    assert [student for student, _ in stored(client)] == [None, None, "ada", None]


def test_the_disk_guard_refuses_past_the_deployment_capacity(keyed: Any) -> None:
    client = keyed(queue_capacity=2)
    integration = caller(client, "ml-101", Role.SUBMITTER)
    assert [post(client, integration, s).status_code for s in ("ada", "bob")] == [202, 202]
    full = post(client, integration, "cyd")
    assert full.status_code == 503
    assert full.json()["type"].endswith("queue-full")
    assert len(stored(client)) == 2


def test_a_submission_ranks_by_its_students_submissions_of_the_minute(keyed: Any) -> None:
    client = keyed(max_in_flight_per_student=10, max_in_flight_per_key=10)
    integration = caller(client, "ml-101", Role.SUBMITTER)
    staff = caller(client, "ml-101", Role.INSTRUCTOR)
    for student in ["ada"] * 5 + ["bob"]:
        assert post(client, integration, student).status_code == 202
    assert post(client, integration).status_code == 202  # names no student
    assert post(client, integration).status_code == 202
    assert post(client, staff, "cyd").status_code == 202  # staff, as a student
    assert stored(client) == [
        ("ada", 0),
        ("ada", 1),
        ("ada", 2),
        ("ada", 3),
        ("ada", 4),
        ("bob", 0),
        (None, 1),  # behind every student's first submission
        (None, 2),
        ("cyd", 1),
    ]


def test_submissions_older_than_the_window_do_not_count(keyed: Any) -> None:
    client = keyed(fair_window_s=0)
    integration = caller(client, "ml-101", Role.SUBMITTER)
    for _ in range(2):
        assert post(client, integration, "ada").status_code == 202
    assert stored(client) == [("ada", 0), ("ada", 0)]


def test_a_submission_a_grader_took_before_its_refusal_stays_admitted(
    keyed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = keyed()
    integration = caller(client, "ml-101", Role.SUBMITTER)
    api = client.app.state.api

    def taken_then_refused(settings: Any, session: Any, row: Submission) -> TooManyInFlight:
        # A grader handed another id takes the head of the line: this one, just committed.
        assert api.leases.claim_next("another", "grader") is not None
        return TooManyInFlight("refused too late", 1)

    monkeypatch.setattr(admission, "refusal", taken_then_refused)
    accepted = post(client, integration, "ada")
    assert accepted.status_code == 202  # the grader's turn is not spent on nothing
    assert stored(client) == [("ada", 0)]
