"""/healthz, /readyz, /metrics."""

from __future__ import annotations

import threading
import time

import pytest
from app_support import CORRECT, SEED, wait_until
from fastapi.testclient import TestClient
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
    def unreachable() -> None:
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))

    api = client.app.state.api  # type: ignore[attr-defined]
    monkeypatch.setattr(api.database, "ping", unreachable)
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
    monkeypatch.setattr(api.database, "ping", lambda: released.wait(30))
    try:
        started = time.monotonic()
        response = client.get("/readyz")
        assert time.monotonic() - started < 4.0
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
