"""A Redis that accepts connections and never answers (a wedged or partitioned broker): the API
stays live and answers within bounds, on SQLite and PostgreSQL. Every broker call has a
deadline; a submission is stored and left to the sweeper, as when the broker is down."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from app_support import CORRECT, SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient

from app.core.models import SubmissionStatus

# What a request may take with the broker silent: one broker call's deadline, and some room.
BOUND_S = 4.0


@pytest.fixture
def silent_redis() -> Iterator[str]:
    """A redis:// URL of a server that accepts every connection and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:  # closed
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    listener.close()
    for connection in accepted:
        connection.close()


@pytest.fixture
def client(
    silent_redis: str,  # first: it outlives the API, whose dispatcher may still be sending
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    database_url: str,
) -> TestClient:
    settings = make_settings(broker_url=silent_redis, database_url=database_url)
    return make_client(settings)


def timed(call: object) -> float:
    assert callable(call)
    started = time.monotonic()
    call()
    return time.monotonic() - started


def test_healthz_answers_at_once_while_submissions_wait_on_the_broker(client: TestClient) -> None:
    def submit() -> None:
        client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})

    # More submissions at once than the server has threads for blocking work (40).
    with ThreadPoolExecutor(max_workers=48) as pool:
        for _ in range(48):
            pool.submit(submit)
        time.sleep(0.5)
        assert timed(lambda: client.get("/healthz").raise_for_status()) < 1.0


def test_a_submission_is_stored_within_a_bound(client: TestClient) -> None:
    started = time.monotonic()
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})
    assert time.monotonic() - started < BOUND_S
    assert response.status_code == 202
    stored = client.get(f"/v1/submissions/{response.json()['id']}").json()
    assert stored["status"] == SubmissionStatus.QUEUED


def test_readyz_says_not_ready_within_a_bound(client: TestClient) -> None:
    started = time.monotonic()
    response = client.get("/readyz")
    assert time.monotonic() - started < BOUND_S
    assert response.status_code == 503
    checks = {check["name"]: check["ok"] for check in response.json()["checks"]}
    assert checks["broker"] is False
