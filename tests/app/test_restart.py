"""Restart durability of the embedded service, on SQLite and PostgreSQL: work left queued or
running when the service stops (or dies) is finished by the next start; nothing is lost or
stuck."""

from __future__ import annotations

from functools import partial

from app_support import (
    CORRECT,
    RUNS_PER_GRADING,
    SEED,
    ClientFactory,
    FakeSandbox,
    SettingsFactory,
    wait_until,
)
from fastapi.testclient import TestClient

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus, utcnow
from app.core.settings import AppSettings


def status_of(client: TestClient, submission_id: str) -> str:
    status: str = client.get(f"/v1/submissions/{submission_id}").json()["status"]
    return status


def is_done(client: TestClient, submission_id: str) -> bool:
    return status_of(client, submission_id) == "done"


def stored(settings: AppSettings, submission_id: str) -> Submission:
    database = Database.from_url(settings.sqlalchemy_url())
    try:
        with database.session() as session:
            row = session.get(Submission, submission_id)
            assert row is not None
            return row
    finally:
        database.close()


def test_work_left_queued_at_stop_is_finished_after_restart(
    database_url: str,  # first: the database outlives the clients
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    sandbox: FakeSandbox,
) -> None:
    settings = make_settings(sandbox_slots=1, shutdown_grace_s=0.2, database_url=database_url)
    first = make_client(settings)
    sandbox.gate.clear()  # the first submission blocks in the sandbox; the others wait
    ids = [
        first.post(
            "/v1/submissions", json={"exercise": SEED, "source": f"{CORRECT}\n# {n}"}
        ).json()["id"]
        for n in range(3)
    ]
    wait_until(lambda: status_of(first, ids[0]) == "running")
    first.__exit__(None, None, None)  # stop: ids[1:] are still queued
    sandbox.gate.set()  # the grading in flight ends after the stop
    wait_until(lambda: stored(settings, ids[0]).status is SubmissionStatus.DONE)
    first.app.state.api.database.close()  # type: ignore[attr-defined]  # what that late one opened
    assert [stored(settings, i).status for i in ids[1:]] == [SubmissionStatus.QUEUED] * 2

    second = make_client(settings)
    for submission_id in ids:
        wait_until(partial(is_done, second, submission_id))
        body = second.get(f"/v1/submissions/{submission_id}").json()
        assert body["report"]["status"] == "passed"
        assert body["attempts"] == 1
    graded = [f"{CORRECT}\n# {n}" for n in range(3) for _ in range(RUNS_PER_GRADING)]
    assert sorted(sandbox.runs) == sorted(graded)


def _crashed_mid_grading(settings: AppSettings, attempts: int) -> str:
    """The database as a service killed while grading leaves it."""
    database = Database.from_url(settings.sqlalchemy_url())
    try:
        database.migrate()
        with database.session() as session:
            row = Submission(
                exercise=SEED,
                source=CORRECT,
                status=SubmissionStatus.RUNNING,
                attempts=attempts,
                started_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return row.id
    finally:
        database.close()


def test_a_grading_interrupted_by_a_crash_is_graded_again_at_start(
    database_url: str, make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(database_url=database_url)
    submission_id = _crashed_mid_grading(settings, attempts=1)
    client = make_client(settings)
    wait_until(lambda: status_of(client, submission_id) == "done")
    body = client.get(f"/v1/submissions/{submission_id}").json()
    assert body["attempts"] == 2
    assert body["report"]["status"] == "passed"


def test_a_submission_that_keeps_crashing_the_service_ends_in_an_error_report(
    make_client: ClientFactory, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> None:
    settings = make_settings(max_attempts=3)
    submission_id = _crashed_mid_grading(settings, attempts=3)
    client = make_client(settings)
    wait_until(lambda: status_of(client, submission_id) == "done")
    report = client.get(f"/v1/submissions/{submission_id}").json()["report"]
    assert report["status"] == "error"
    assert "interrupted 3 times" in report["message"]
    assert sandbox.runs == []
