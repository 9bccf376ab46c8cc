"""/healthz, /readyz, /metrics."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import pytest
from app_support import CORRECT, SEED, ClientFactory, SettingsFactory, wait_until
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError


def test_healthz_answers(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "alive"}


def test_readyz_reports_database_pool_and_sandbox_layers(client: TestClient) -> None:
    wait_until(lambda: client.get("/readyz").status_code == 200)
    body = client.get("/readyz").json()
    assert body["status"] == "ready"
    checks = {check["name"]: check for check in body["checks"]}
    assert checks["database"]["ok"] and checks["database"]["detail"] == "sqlite"
    assert checks["sandbox pool"]["ok"]
    assert body["sandbox_layers"] == [
        {"name": "none", "active": False, "detail": "test sandbox: no isolation"}
    ]


def test_readyz_is_503_when_the_database_does_not_answer(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(_limit_s: float) -> None:
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))

    api = client.app.state.api  # type: ignore[attr-defined]
    monkeypatch.setattr(api.database, "check_writable", unreachable)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "not_ready"
    checks = {check["name"]: check for check in response.json()["checks"]}
    assert not checks["database"]["ok"]
    assert "connection refused" in checks["database"]["detail"]


def test_readyz_answers_in_time_when_the_database_hangs(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    released = threading.Event()
    api = client.app.state.api  # type: ignore[attr-defined]
    monkeypatch.setattr(api.database, "check_writable", lambda _limit_s: released.wait(30))
    try:
        started = time.monotonic()
        response = client.get("/readyz")
        # Within Docker's health check (it gives up at 5 s), which the 3 s deadline is for: in
        # a fresh clone's full suite on a slow 2-core machine this took 4.4 s, in isolation 3 s.
        assert time.monotonic() - started < 5.0
    finally:
        released.set()
    assert response.status_code == 503
    assert response.json()["checks"][0]["name"] == "readiness"


def test_metrics_count_submissions_and_gradings(client: TestClient) -> None:
    response = client.post("/v1/submissions?wait=true", json={"exercise": SEED, "source": CORRECT})
    assert response.status_code == 200
    wait_until(
        lambda: 'autograder_reports_total{status="passed"} 1.0' in client.get("/metrics").text
    )
    text = client.get("/metrics").text
    assert 'autograder_submissions{status="done"} 1.0' in text
    assert 'autograder_submissions{status="queued"} 0.0' in text
    assert "autograder_grading_seconds_count 1.0" in text
    assert "autograder_queue_depth 0.0" in text


@dataclass(frozen=True)
class Locked:
    client: TestClient
    release: Callable[[], None]  # lets the table go (the fixture does at the end)


@pytest.fixture
def locked_submissions(
    make_client: ClientFactory, make_settings: SettingsFactory, postgres_url: str
) -> Iterator[Locked]:
    """A service on PostgreSQL whose submissions table another session holds locked (as a
    migration or an operator's `LOCK TABLE` does) for as long as the test runs."""
    client = make_client(make_settings(database_url=postgres_url, database_lock_timeout_s=1.0))
    wait_until(lambda: client.get("/readyz").status_code == 200)
    holder = create_engine(postgres_url)
    try:
        with holder.connect() as connection:
            connection.execute(text("LOCK TABLE submissions IN ACCESS EXCLUSIVE MODE"))
            yield Locked(client, connection.rollback)
            connection.rollback()
    finally:
        holder.dispose()


def test_readyz_is_503_while_the_submissions_table_is_locked(
    locked_submissions: Locked,
) -> None:
    response = locked_submissions.client.get("/readyz")
    assert response.status_code == 503
    database = {check["name"]: check for check in response.json()["checks"]}["database"]
    assert not database["ok"]
    assert "submissions table took no write" in database["detail"], database


def test_metrics_scrapes_do_not_pile_up_on_a_locked_table(locked_submissions: Locked) -> None:
    """More scrapes than the API has threads, and then a request that needs a thread: each is
    answered (200 with the last figures, or 503), none waits for the lock to go."""
    client = locked_submissions.client
    with ThreadPoolExecutor(_SCRAPES + 1) as pool:
        scrapes = [pool.submit(client.get, "/metrics") for _ in range(_SCRAPES)]
        catalog = pool.submit(client.get, "/v1/exercises")
        _, waiting = wait([*scrapes, catalog], timeout=_BOUND_S)
        locked_submissions.release()  # before the pool waits for what is left
    assert not waiting, f"{len(waiting)} requests waited on the locked table"
    assert {scrape.result().status_code for scrape in scrapes} <= {200, 503}
    assert catalog.result().status_code == 200


def test_a_submission_meeting_a_locked_table_is_refused_in_time(
    locked_submissions: Locked,
) -> None:
    """The API's statements wait for a lock AUTOGRADER_DATABASE_LOCK_TIMEOUT_S at most."""
    body = {"exercise": SEED, "source": CORRECT}
    with ThreadPoolExecutor(1) as pool:
        post = pool.submit(locked_submissions.client.post, "/v1/submissions", json=body)
        wait([post], timeout=_BOUND_S)
        locked_submissions.release()
    refused = post.result()
    assert refused.status_code == 503, refused.text
    assert refused.json()["type"] == "urn:autograder:problem:database-busy"
    assert int(refused.headers["Retry-After"]) >= 1


# More than the 40 threads of the API's pool (AnyIO's default); the bound is never reached
# unless requests hang.
_SCRAPES = 60
_BOUND_S = 60.0
