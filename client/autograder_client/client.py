"""Talking to the autograder: submit, wait (or poll), and retry when the server says when.

`POST /v1/submissions?wait=true` holds the request until the submission is graded. If it is not
graded in time (the server answers 202, or the read times out), the client follows it with
`GET /v1/submissions/{id}?wait=S`, which the server holds in the same way; a server older than
that answers at once, and is then polled with pauses that grow to 2 s. The POST carries an
Idempotency-Key, so sending it again after a lost answer finds the same submission rather than
grading it twice. 429 and 503 carry Retry-After: the
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
# How long a GET asks the server to hold it (the server cuts it to its own wait timeout).
_FOLLOW_WAIT_S = 60.0
# A GET answered sooner than this, the submission not done, came from a server that does not hold
# it: the client pauses before asking again.
_ANSWERED_AT_ONCE_S = 0.5
_FIRST_PAUSE_S, _LONGEST_PAUSE_S = 0.25, 2.0


class Client:
    """A connection to one autograder. `url`, `api_key` and `student_id` default to the
    environment, then to what `configure()` saved (autograder_client.config); `timeout` bounds a
    whole `submit`, retries and polling included. `transport`, `sleep` and `clock` are for
    tests."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        student_id: str | None = None,
        timeout: float = 300.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        settings = resolve(url, api_key, student_id)
        self.url = settings.url
        self.student_id = settings.student_id
        key = settings.api_key
        self.timeout = timeout
        self._sleep = sleep
        self._clock = clock
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
        deadline = self._clock() + self.timeout
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
        return Result(self._follow(answer.json(), deadline))

    def _follow(self, state: dict[str, Any], deadline: float) -> dict[str, Any]:
        """The submission once done: each GET held by the server until then (?wait), or, by a
        server that answers at once, asked again after a pause."""
        pause = _FIRST_PAUSE_S
        while state.get("status") != "done":
            left = deadline - self._clock()
            if left <= 0:
                raise self._still_pending(state)
            asked = self._clock()
            wait = f"{max(0.1, min(_FOLLOW_WAIT_S, left)):.1f}"
            path = f"/v1/submissions/{state['id']}"
            state = self._send("GET", path, deadline, params={"wait": wait}).json()
            answered_at_once = self._clock() - asked < _ANSWERED_AT_ONCE_S
            if state.get("status") != "done" and answered_at_once:
                if self._clock() + pause > deadline:
                    raise self._still_pending(state)
                self._sleep(pause)
                pause = min(pause * 2, _LONGEST_PAUSE_S)
        return state

    def _still_pending(self, state: dict[str, Any]) -> SubmissionError:
        return SubmissionError(
            f"submission {state.get('id')} is still {state.get('status')} after "
            f"{self.timeout:g} s; its report will be at {self.url}/v1/submissions/"
            f"{state.get('id')}"
        )

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
                if self._clock() + delay <= deadline:
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
