"""Attempt budgets under concurrent requests on PostgreSQL, where nothing serialises writers:
two requests for a student's last attempt, the first held inside its transaction while the
second runs, get it once between them."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from access_support import Caller, caller, linked_student
from app_support import MISSING_SCALING, SEED, ClientFactory, SettingsFactory, wait_until
from fastapi.testclient import TestClient
from httpx2 import Response
from sqlalchemy import event, func, select, text

from app.api.api_process import ApiProcess
from app.core.models import Role, Submission
from app.courses.models import ExercisePolicy
from app.courses.registry import existing_course

_BOUND_S = 60.0  # never reached unless the service hangs


def _submit(client: TestClient, student: Caller) -> Response:
    return client.post(
        "/v1/submissions",
        json={"exercise": SEED, "source": MISSING_SCALING, "student_id": "s1"},
        headers=student.headers,
    )


def _someone_waits_for_a_lock(api: ApiProcess) -> bool:
    with api.database.engine.connect() as connection:
        return bool(connection.scalar(text("SELECT count(*) FROM pg_locks WHERE NOT granted")))


def test_two_requests_for_the_last_attempt_get_it_once(
    make_client: ClientFactory, make_settings: SettingsFactory, postgres_url: str
) -> None:
    client = make_client(make_settings(require_api_keys=True, database_url=postgres_url))
    api: ApiProcess = client.app.state.api  # type: ignore[attr-defined]
    caller(client, "ml-101", Role.INSTRUCTOR)  # makes the course
    student = linked_student(client, "ml-101", "s1")
    with api.database.session() as session:
        course_id = existing_course(session, "ml-101").id
        session.add(ExercisePolicy(course_id=course_id, exercise=SEED, attempts=1, window_s=3600))

    # The first request's submission is written but not committed until the second request
    # has either been answered or waits for a lock the first one holds.
    first_written, go_on = threading.Event(), threading.Event()

    def hold_the_first(session: Any, _context: Any) -> None:
        if any(isinstance(row, Submission) for row in session.new) and not first_written.is_set():
            first_written.set()
            go_on.wait(_BOUND_S)

    event.listen(api.database.sessions, "after_flush", hold_the_first)
    try:
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(_submit, client, student)
            assert first_written.wait(_BOUND_S)
            second = pool.submit(_submit, client, student)
            wait_until(lambda: second.done() or _someone_waits_for_a_lock(api), _BOUND_S)
            go_on.set()
            statuses = sorted(
                [first.result(_BOUND_S).status_code, second.result(_BOUND_S).status_code]
            )
    finally:
        go_on.set()
        event.remove(api.database.sessions, "after_flush", hold_the_first)
    assert statuses == [202, 429]
    with api.database.session() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
