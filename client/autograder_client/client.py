"""Talking to the autograder: submit, wait (or poll), and retry when the server says when.

`POST /v1/submissions?wait=true` holds the request until the submission is graded. If it is not
graded in time (the server answers 202, or the read times out), the client polls
`GET /v1/submissions/{id}`; the POST carries an Idempotency-Key, so sending it again after a lost
answer finds the same submission rather than grading it twice. 429 and 503 carry Retry-After: the
client sleeps that long and tries again while its deadline allows.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any

import httpx

from autograder_client.config import checked_student_id, resolve
from autograder_client.errors import SubmissionError
from autograder_client.result import Result
from autograder_client.source import source_of

_RETRY_STATUSES = (429, 503)
# The server holds a waiting POST for AUTOGRADER_WAIT_TIMEOUT_S (60 s by default) and then
# answers 202; a read that outlasts this falls back to polling.
_REQUEST_TIMEOUT = httpx.Timeout(75.0, connect=10.0)


class Client:
    """A connection to one autograder. `url`, `api_key` and `student_id` default to the
    environment, then to what `configure()` saved (autograder_client.config); `timeout` bounds a
    whole `submit`, retries and polling included. `transport` and `sleep` are for tests."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        student_id: str | None = None,
        timeout: float = 300.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        settings = resolve(url, api_key, student_id)
        self.url = settings.url
        self.student_id = settings.student_id
        key = settings.api_key
        self.timeout = timeout
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {key}"} if key else {},
            timeout=_REQUEST_TIMEOUT,
            transport=transport,
        )

    def submit(self, exercise: str, submission: object, *, student_id: str | None = None) -> Result:
        """Grade `submission` (a class, a function, a file path or source text; see
        `autograder_client.source`) against `exercise`, and wait for the report. It is
        `student_id`'s submission, else the client's."""
        body: dict[str, Any] = {"exercise": exercise, "source": source_of(submission)}
        student = checked_student_id(student_id) or self.student_id
        if student is not None:
            body["student_id"] = student
        deadline = time.monotonic() + self.timeout
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        try:
            answer = self._send(
                "POST",
                "/v1/submissions",
                deadline,
                params={"wait": "true"},
                json=body,
                headers=headers,
                may_time_out=True,
            )
        except httpx.ReadTimeout:
            answer = self._send("POST", "/v1/submissions", deadline, json=body, headers=headers)
        state = answer.json()
        interval = 0.25
        while state.get("status") != "done":
            if time.monotonic() + interval > deadline:
                raise SubmissionError(
                    f"submission {state.get('id')} is still {state.get('status')} after "
                    f"{self.timeout:g} s; its report will be at {self.url}/v1/submissions/"
                    f"{state.get('id')}"
                )
            self._sleep(interval)
            interval = min(interval * 2, 2.0)
            state = self._send("GET", f"/v1/submissions/{state['id']}", deadline).json()
        return Result(state)

    def _send(
        self, method: str, path: str, deadline: float, *, may_time_out: bool = False, **kwargs: Any
    ) -> httpx.Response:
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.ReadTimeout:
                if may_time_out:
                    raise
                raise SubmissionError(f"the autograder at {self.url} did not answer") from None
            except httpx.TransportError as error:
                raise SubmissionError(
                    f"cannot reach the autograder at {self.url} ({error}); is it running? "
                    "Set AUTOGRADER_URL or pass url="
                ) from None
            if response.status_code in _RETRY_STATUSES:
                delay = _retry_after(response)
                if time.monotonic() + delay <= deadline:
                    self._sleep(delay)
                    continue
            if response.is_error:
                raise _problem(response)
            return response

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def submit(
    exercise: str,
    submission: object,
    *,
    url: str | None = None,
    api_key: str | None = None,
    student_id: str | None = None,
    timeout: float = 300.0,
) -> Result:
    """`submit("multi-headed-self-attention", MultiHeadedSelfAttention)`: grade and report."""
    with Client(url, api_key, student_id=student_id, timeout=timeout) as client:
        return client.submit(exercise, submission)


def _retry_after(response: httpx.Response) -> float:
    """Retry-After in seconds (or as an HTTP date), and never under 1 s: a missing, unreadable,
    zero or past value must not turn the retries into a busy loop."""
    value = response.headers.get("Retry-After", "").strip()
    if value.isdigit():
        return max(1.0, float(value))
    try:
        return max(1.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return 1.0


def _problem(response: httpx.Response) -> SubmissionError:
    """The server's problem document (RFC 9457) as an error, its detail in the message."""
    try:
        problem = response.json()
    except ValueError:
        problem = {}
    if not isinstance(problem, dict):
        problem = {}
    detail = problem.get("detail") or response.text[:200] or response.reason_phrase
    title = problem.get("title") or response.reason_phrase
    return SubmissionError(str(detail), status=response.status_code, title=str(title))
