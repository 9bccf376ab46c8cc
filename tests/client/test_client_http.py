"""The client's conversation with the server, on httpx's MockTransport: waiting, polling,
Retry-After, idempotent resends, problems as SubmissionError, settings from the environment."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
import pytest
from autograder_client import Client, SubmissionError
from client_support import unconfigured

SLUG = "multi-headed-self-attention"
REPORT = {
    "exercise": SLUG,
    "status": "passed",
    "score": 1.0,
    "max_score": 1.0,
    "message": "1 of 1 tests passed (1/1 points)",
    "tests": [],
}
DONE = {"id": "S1", "exercise": SLUG, "status": "done", "report": REPORT}
QUEUED = {"id": "S1", "status": "queued"}


@pytest.fixture(autouse=True)
def _unconfigured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    unconfigured(monkeypatch, tmp_path / "config")


def problem(status: int, detail: str, retry_after: str | None = None) -> httpx.Response:
    body = {"type": "urn:x", "title": "Grading queue full", "status": status, "detail": detail}
    headers = {"Retry-After": retry_after} if retry_after else {}
    return httpx.Response(status, json=body, headers=headers)


def scripted(
    answers: Iterator[httpx.Response | Exception], seen: list[httpx.Request]
) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handle


def client(
    answers: Sequence[httpx.Response | Exception], seen: list[httpx.Request], sleeps: list[float]
) -> Client:
    transport = httpx.MockTransport(scripted(iter(answers), seen))
    return Client("http://grader.test", timeout=30, transport=transport, sleep=sleeps.append)


def test_a_503_with_retry_after_is_retried_after_that_long() -> None:
    seen: list[httpx.Request] = []
    sleeps: list[float] = []
    answers = [problem(503, "256 submissions are waiting", "2"), httpx.Response(200, json=DONE)]
    result = client(answers, seen, sleeps).submit(SLUG, "print('hi')\n")
    assert result.passed and result.id == "S1"
    assert sleeps == [2.0]
    assert [r.url.params.get("wait") for r in seen] == ["true", "true"]
    keys = {r.headers["Idempotency-Key"] for r in seen}
    assert len(keys) == 1, "a retry must be the same submission"
    assert json.loads(seen[0].content) == {"exercise": SLUG, "source": "print('hi')\n"}


def test_a_missing_or_zero_retry_after_still_waits_a_second() -> None:
    sleeps: list[float] = []
    answers = [problem(429, "slow down"), problem(503, "full", "0"), httpx.Response(200, json=DONE)]
    assert client(answers, [], sleeps).submit(SLUG, "x = 1\n").passed
    assert sleeps == [1.0, 1.0]


def test_a_retry_after_past_the_deadline_is_an_error_with_the_problem_s_detail() -> None:
    seen: list[httpx.Request] = []
    sleeps: list[float] = []
    answers = [problem(429, "student 's1' may submit 60 times a minute", "3600")]
    with pytest.raises(SubmissionError) as caught:
        client(answers, seen, sleeps).submit(SLUG, "x = 1\n")
    assert caught.value.status == 429
    assert "60 times a minute" in str(caught.value)
    assert sleeps == []


def test_a_problem_becomes_a_submission_error() -> None:
    answers = [problem(404, "no exercise is called 'attention'")]
    with pytest.raises(SubmissionError, match="no exercise is called 'attention'") as caught:
        client(answers, [], []).submit("attention", "x = 1\n")
    assert caught.value.status == 404


def test_a_wait_that_ends_queued_is_followed_by_gets_the_server_holds() -> None:
    seen: list[httpx.Request] = []
    sleeps: list[float] = []
    now = [0.0]
    answers = iter(
        [
            httpx.Response(202, json=QUEUED),
            httpx.Response(200, json={**QUEUED, "queue": {"position": 3, "estimate_s": 80.0}}),
            httpx.Response(200, json=DONE),
        ]
    )

    def held(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        now[0] += 60.0  # each request held until the server's wait ends
        return next(answers)

    follower = Client(
        "http://grader.test",
        timeout=300,
        transport=httpx.MockTransport(held),
        sleep=sleeps.append,
        clock=lambda: now[0],
    )
    assert follower.submit(SLUG, "x = 1\n").passed
    assert [(r.method, r.url.path) for r in seen[1:]] == [("GET", "/v1/submissions/S1")] * 2
    assert [r.url.params.get("wait") for r in seen[1:]] == ["60.0", "60.0"]
    assert sleeps == [], "a held GET is asked again at once"


def test_a_server_that_answers_a_get_at_once_is_polled_with_growing_pauses() -> None:
    """A server older than GET ?wait ignores it: the client backs off as it always did."""
    seen: list[httpx.Request] = []
    sleeps: list[float] = []
    answers = [
        httpx.Response(202, json=QUEUED),
        httpx.Response(200, json=QUEUED),
        httpx.Response(200, json={**QUEUED, "status": "running", "report": None}),
        httpx.Response(200, json=DONE),
    ]
    result = client(answers, seen, sleeps).submit(SLUG, "x = 1\n")
    assert result.passed
    assert [(r.method, r.url.path) for r in seen[1:]] == [("GET", "/v1/submissions/S1")] * 3
    assert sleeps == [0.25, 0.5]


def test_a_read_timeout_resends_without_waiting_under_the_same_key() -> None:
    seen: list[httpx.Request] = []
    answers: list[httpx.Response | Exception] = [
        httpx.ReadTimeout("slow"),
        httpx.Response(202, json=QUEUED),
        httpx.Response(200, json=DONE),
    ]
    assert client(answers, seen, []).submit(SLUG, "x = 1\n").passed
    assert [r.url.params.get("wait") for r in seen[:2]] == ["true", None]
    assert seen[0].headers["Idempotency-Key"] == seen[1].headers["Idempotency-Key"]


def test_a_server_that_is_down_is_a_clear_error() -> None:
    answers: list[httpx.Response | Exception] = [httpx.ConnectError("refused")]
    with pytest.raises(
        SubmissionError, match=r"cannot reach the autograder at http://grader\.test"
    ):
        client(answers, [], []).submit(SLUG, "x = 1\n")


def test_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOGRADER_URL", "http://course.test:9000/")
    monkeypatch.setenv("AUTOGRADER_API_KEY", "agk_secret")
    seen: list[httpx.Request] = []
    transport = httpx.MockTransport(scripted(iter([httpx.Response(200, json=DONE)]), seen))
    with Client(transport=transport) as env_client:
        env_client.submit(SLUG, "x = 1\n")
    assert str(seen[0].url).startswith("http://course.test:9000/v1/submissions")
    assert seen[0].headers["Authorization"] == "Bearer agk_secret"
