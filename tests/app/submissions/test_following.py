"""Following a submission: its place in line while queued (POST and GET), and GET ?wait=S,
answered as soon as it is graded, else after S seconds with its state then."""

from __future__ import annotations

import threading
from typing import Any

from app_support import (
    CORRECT,
    SEED,
    ClientFactory,
    FakeSandbox,
    SettingsFactory,
    store_submission,
    wait_until,
)
from fastapi.testclient import TestClient

from app.core.models import DEFAULT_COURSE_ID
from app.lti.sessions import LaunchSession


def post(client: TestClient, source: str) -> dict[str, Any]:
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": source})
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


def status_of(client: TestClient, submission_id: str) -> str:
    status: str = client.get(f"/v1/submissions/{submission_id}").json()["status"]
    return status


def test_queued_submissions_are_told_their_place_and_a_running_one_none(
    make_client: ClientFactory, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> None:
    client = make_client(make_settings(sandbox_slots=1))
    sandbox.gate.clear()  # the one slot holds the first submission
    running = post(client, "x = 0")["id"]
    wait_until(lambda: status_of(client, running) == "running")
    accepted = [post(client, f"x = {n}") for n in (1, 2)]
    assert [answer["queue"]["position"] for answer in accepted] == [1, 2]
    assert [answer["queue"]["estimate_s"] for answer in accepted] == [None, None]  # no history
    second = client.get(f"/v1/submissions/{accepted[1]['id']}").json()
    assert second["status"] == "queued"
    assert second["queue"] == {"position": 2, "estimate_s": None}
    assert client.get(f"/v1/submissions/{running}").json()["queue"] is None
    sandbox.gate.set()
    wait_until(lambda: status_of(client, accepted[1]["id"]) == "done")
    assert client.get(f"/v1/submissions/{accepted[1]['id']}").json()["queue"] is None


def test_a_get_that_waits_is_answered_once_graded(client: TestClient, sandbox: FakeSandbox) -> None:
    sandbox.gate.clear()
    submission_id = post(client, CORRECT)["id"]
    answers: list[dict[str, Any]] = []
    waiting = threading.Thread(
        target=lambda: answers.append(client.get(f"/v1/submissions/{submission_id}?wait=60").json())
    )
    waiting.start()
    api = client.app.state.api  # type: ignore[attr-defined]
    wait_until(lambda: api.waiters.waiting() == 1)  # the GET is held while grading is
    sandbox.gate.set()
    waiting.join()
    assert answers[0]["status"] == "done"
    assert answers[0]["report"]["status"] == "passed"


def test_a_get_whose_wait_runs_out_answers_the_state_then(
    client: TestClient, sandbox: FakeSandbox
) -> None:
    sandbox.gate.clear()
    submission_id = post(client, CORRECT)["id"]
    response = client.get(f"/v1/submissions/{submission_id}?wait=0.2")
    assert response.status_code == 200
    assert response.json()["status"] in {"queued", "running"}
    assert response.json()["report"] is None


def test_a_wait_must_be_a_positive_number_of_seconds(client: TestClient) -> None:
    submission_id = post(client, "x = 1")["id"]
    for wait in ("0", "-1", "soon", "601"):
        assert client.get(f"/v1/submissions/{submission_id}?wait={wait}").status_code == 422


def test_a_launched_student_follows_their_submission_by_the_lti_api(
    make_client: ClientFactory, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> None:
    client = make_client(make_settings(sandbox_slots=1))
    api = client.app.state.api  # type: ignore[attr-defined]
    sandbox.gate.clear()  # the one slot holds another student's submission
    running = post(client, "x = 0")["id"]
    wait_until(lambda: status_of(client, running) == "running")
    student = "lti:p:s1"
    mine = store_submission(api.database, student_id=student, course_id=DEFAULT_COURSE_ID)
    token = LaunchSession("launch-1", SEED, student, DEFAULT_COURSE_ID).sign(api.settings)
    headers = {"Authorization": f"Bearer {token}"}
    now = client.get(f"/lti/submissions/{mine}", headers=headers).json()
    assert now["queue"] == {"position": 1, "estimate_s": None}
    held = client.get(f"/lti/submissions/{mine}", params={"wait": 0.2}, headers=headers)
    assert held.status_code == 200
    assert held.json()["status"] == "queued"
    assert held.json()["queue"]["position"] == 1
    sandbox.gate.set()
