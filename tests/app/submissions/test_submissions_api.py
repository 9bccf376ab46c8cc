"""POST/GET /v1/submissions over HTTP, on an app whose sandbox needs no fork."""

from __future__ import annotations

import json
import threading
from typing import Any

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

PROBLEM = "application/problem+json"


def submit(client: TestClient, source: str = CORRECT, **extra: object) -> dict[str, Any]:
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": source, **extra})
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


def finished(client: TestClient, submission_id: object) -> dict[str, Any]:
    def done() -> bool:
        status: str = client.get(f"/v1/submissions/{submission_id}").json()["status"]
        return status == "done"

    wait_until(done)
    body: dict[str, Any] = client.get(f"/v1/submissions/{submission_id}").json()
    return body


def test_a_submission_is_accepted_then_graded(client: TestClient) -> None:
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})
    assert response.status_code == 202
    accepted = response.json()
    assert set(accepted) == {"id", "status", "queue"}
    assert accepted["status"] in {"queued", "running", "done"}
    assert response.headers["location"] == f"/v1/submissions/{accepted['id']}"

    body = finished(client, accepted["id"])
    report = body["report"]
    assert isinstance(report, dict)
    assert report["status"] == "passed"
    assert report["score"] == report["max_score"] > 0
    assert body["attempts"] == 1
    assert body["exercise"] == SEED


def test_wait_answers_200_with_the_graded_submission(client: TestClient) -> None:
    response = client.post(
        "/v1/submissions?wait=true", json={"exercise": SEED, "source": "x = (", "student_id": "s1"}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "done"
    assert body["student_id"] == "s1"
    assert body["report"]["status"] == "failed"
    assert body["report"]["score"] == 0


def test_wait_that_outlasts_its_timeout_answers_202(
    make_client: ClientFactory, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> None:
    client = make_client(make_settings(wait_timeout_s=0.3))
    sandbox.gate.clear()
    response = client.post("/v1/submissions?wait=true", json={"exercise": SEED, "source": CORRECT})
    assert response.status_code == 202
    assert response.json()["status"] in {"queued", "running"}
    sandbox.gate.set()
    assert finished(client, response.json()["id"])["report"] is not None


def test_unknown_exercise_is_a_404_problem(client: TestClient) -> None:
    response = client.post("/v1/submissions", json={"exercise": "nope", "source": "x = 1"})
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert problem["type"].endswith("unknown-exercise")
    assert problem["status"] == 404
    assert problem["instance"] == "/v1/submissions"
    assert "nope" in problem["detail"]


def test_oversized_source_is_a_413_problem(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(max_source_bytes=1024))
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": "é" * 600})
    assert response.status_code == 413  # 600 characters, 1200 bytes of UTF-8
    assert response.headers["content-type"] == PROBLEM
    assert "1200" in response.json()["detail"]


def test_a_body_far_over_the_limit_is_refused_before_parsing(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(max_source_bytes=1024))
    response = client.post(
        "/v1/submissions",
        content=b'{"exercise": "x", "source": "' + b"a" * 200_000 + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413


def test_malformed_json_is_a_422_problem(client: TestClient) -> None:
    response = client.post(
        "/v1/submissions", content=b'{"exercise": ', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["type"].endswith("malformed-body")


def test_missing_and_extra_fields_are_422_problems_naming_them(client: TestClient) -> None:
    response = client.post("/v1/submissions", json={"exercise": SEED, "sauce": "x"})
    assert response.status_code == 422
    locations = {tuple(error["loc"]) for error in response.json()["errors"]}
    assert ("body", "source") in locations
    assert ("body", "sauce") in locations


def test_text_the_database_cannot_keep_is_refused(client: TestClient) -> None:
    for source in ("x = 1\x00", "x = '\ud800'"):  # NUL; a lone surrogate (escaped in JSON)
        response = client.post(
            "/v1/submissions",
            content=json.dumps({"exercise": SEED, "source": source}),
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 422, source


def test_unknown_submission_is_a_404_problem(client: TestClient) -> None:
    for path in ("/v1/submissions/nope", "/v1/submissions/" + "9" * 40 + "/results.json"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["type"].endswith("unknown-submission")


def test_idempotency_key_returns_the_same_submission_and_grades_once(
    client: TestClient, sandbox: FakeSandbox
) -> None:
    body = {"exercise": SEED, "source": CORRECT + "\n# unique 1\n"}
    headers = {"Idempotency-Key": "retry-1"}
    first = client.post("/v1/submissions", json=body, headers=headers)
    second = client.post("/v1/submissions", json=body, headers=headers)
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    finished(client, first.json()["id"])
    assert (
        client.post("/v1/submissions", json=body, headers=headers).json()["id"]
        == (first.json()["id"])
    )
    assert sandbox.runs.count(body["source"]) == RUNS_PER_GRADING


def test_concurrent_retries_with_one_idempotency_key_make_one_submission(
    client: TestClient, sandbox: FakeSandbox
) -> None:
    body = {"exercise": SEED, "source": CORRECT + "\n# unique 2\n"}
    ids: list[str] = []
    barrier = threading.Barrier(6)

    def post() -> None:
        barrier.wait()
        response = client.post("/v1/submissions", json=body, headers={"Idempotency-Key": "k2"})
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 1
    finished(client, ids[0])
    assert sandbox.runs.count(body["source"]) == RUNS_PER_GRADING


def test_idempotency_key_with_another_body_is_refused(client: TestClient) -> None:
    headers = {"Idempotency-Key": "retry-3"}
    submit_first = client.post(
        "/v1/submissions", json={"exercise": SEED, "source": "a = 1"}, headers=headers
    )
    assert submit_first.status_code == 202
    response = client.post(
        "/v1/submissions", json={"exercise": SEED, "source": "a = 2"}, headers=headers
    )
    assert response.status_code == 422
    assert response.json()["type"].endswith("idempotency-key-reused")


def test_history_filters_and_pages_newest_first(client: TestClient) -> None:
    mine = [submit(client, f"x = {n}", student_id="alice")["id"] for n in range(5)]
    submit(client, "y = 1", student_id="bob")
    first = client.get("/v1/submissions", params={"student_id": "alice", "limit": 2}).json()
    assert [item["id"] for item in first["items"]] == mine[::-1][:2]
    second = client.get(
        "/v1/submissions",
        params={"student_id": "alice", "limit": 2, "cursor": first["next_cursor"]},
    ).json()
    third = client.get(
        "/v1/submissions",
        params={"student_id": "alice", "limit": 2, "cursor": second["next_cursor"]},
    ).json()
    assert [item["id"] for item in second["items"] + third["items"]] == mine[::-1][2:]
    assert third["next_cursor"] is None
    assert client.get(
        "/v1/submissions", params={"student_id": "alice", "exercise": "other"}
    ).json() == {"items": [], "next_cursor": None}


def test_history_shows_the_verdict(client: TestClient) -> None:
    submission_id = submit(client, CORRECT, student_id="carol")["id"]
    finished(client, submission_id)
    (item,) = client.get("/v1/submissions", params={"student_id": "carol"}).json()["items"]
    assert item["result"] == "passed"
    assert item["score"] == item["max_score"]


def test_results_json_is_409_until_done_then_gradescope_shaped(
    client: TestClient, sandbox: FakeSandbox
) -> None:
    sandbox.gate.clear()
    submission_id = submit(client)["id"]
    early = client.get(f"/v1/submissions/{submission_id}/results.json")
    assert early.status_code == 409
    assert early.headers["retry-after"]
    sandbox.gate.set()
    finished(client, submission_id)
    results = client.get(f"/v1/submissions/{submission_id}/results.json").json()
    assert results["score"] > 0
    assert {test["visibility"] for test in results["tests"]} == {"visible", "after_published"}
    assert all(test["status"] == "passed" for test in results["tests"])


def test_per_student_rate_limit_is_a_429_with_retry_after(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(rate_limit_per_student=2))
    for _ in range(2):
        submit(client, "x = 1", student_id="dave")
    response = client.post(
        "/v1/submissions", json={"exercise": SEED, "source": "x = 1", "student_id": "dave"}
    )
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) >= 1
    assert response.json()["type"].endswith("rate-limited")
    submit(client, "x = 1", student_id="erin")  # another student is not held back


def test_per_key_rate_limit_is_a_429(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(rate_limit_per_key=3))
    for n in range(3):
        submit(client, f"x = {n}")
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": "x = 9"})
    assert response.status_code == 429
    assert "retry-after" in response.headers


def test_a_full_queue_is_a_503_with_retry_after_and_stores_nothing(
    make_client: ClientFactory, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> None:
    client = make_client(make_settings(queue_capacity=2, sandbox_slots=1, queue_retry_after_s=7))
    sandbox.gate.clear()
    accepted = [submit(client, f"x = {n}")["id"] for n in range(2)]
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": "x = 3"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == "7"
    assert response.json()["type"].endswith("queue-full")
    stored = client.get("/v1/submissions").json()["items"]
    assert sorted(item["id"] for item in stored) == sorted(accepted)
    sandbox.gate.set()
    for submission_id in accepted:
        finished(client, submission_id)
    submit(client, "x = 4")  # room again
