"""Domain errors of the service; app.api.problem_responses turns them into RFC 9457 problems.

    Problem                       (any status; `type` names the kind, `title` says it in words)
    ├── Unauthorized              401  no credential, or one that is not known, expired, revoked
    ├── OtherStudent              403  a student submitting as someone else
    ├── ActingAsStudentRefused    403  X-Act-As-Student where the service does not run open
    ├── NotFound                  404  (or not the caller's to see: app.access.rules)
    │   ├── UnknownExercise
    │   ├── SubmissionNotFound
    │   ├── CourseNotFound        (or not one the caller teaches)
    │   ├── RegradeNotFound       (or not of that course)
    │   └── UnknownBehaviour      no unexplained wrong answer of the course behaves so
    ├── NotFinished               409  results asked of a submission still being graded
    ├── MistakeTaken              409  a code, or a group, the exercise already names
    ├── NoRoster                  409  a roster sync asked of a course no LMS offered one for
    ├── IdempotencyKeyReused      422  the same Idempotency-Key with another request body
    ├── ReservedStudentId         422  an `lti:` student id from anything but a launch
    ├── CallbackUrlRefused        422  a callback_url the service will not call (SSRF)
    ├── PayloadTooLarge           413  source (or body) over the limit
    ├── RateLimited               429  with Retry-After
    ├── AttemptsUsedUp            429  with Retry-After: the exercise's attempt budget is spent
    ├── TooManyInFlight           429  with Retry-After: this student (or this key's submissions
    │                                  naming no student) has the most waiting that one may
    ├── QueueFull                 503  with Retry-After: the disk's guard; refused, never dropped
    ├── ExerciseUnavailable       503  the exercise's folder is broken (its faults in `detail`)
    ├── StorageFull               503  with Retry-After: the disk or the database is full
    ├── DatabaseBusy              503  with Retry-After: a statement ran, or waited on a lock,
    │                                  past the database timeouts (a locked table)
    └── app.lti.tool_key.ToolKeyUnreadable  503  the LTI key is under another secret

Routes and dependencies raise these; app.api.problem_responses answers each as
`application/problem+json`. How routes document them in OpenAPI is app.api.problem_docs'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:autograder:problem:"


class ProblemDetail(BaseModel):
    """RFC 9457 problem details. `errors` lists the fields at fault in a 422."""

    type: str = Field(examples=[f"{TYPE_PREFIX}unknown-exercise"])
    title: str = Field(examples=["Unknown exercise"])
    status: int = Field(examples=[404])
    detail: str = Field(examples=["no exercise is called 'attention'"])
    instance: str = Field(examples=["/v1/exercises/attention"])
    errors: list[dict[str, Any]] | None = None


class Problem(Exception):
    status: int = 500
    kind: str = "internal-error"
    title: str = "Internal error"

    def __init__(self, detail: str, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = dict(headers or {})


class Unauthorized(Problem):
    status, kind, title = 401, "unauthorized", "API key required"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, headers={"WWW-Authenticate": "Bearer"})


class NotFound(Problem):
    status, kind, title = 404, "not-found", "Not found"


class UnknownExercise(NotFound):
    kind, title = "unknown-exercise", "Unknown exercise"


class SubmissionNotFound(NotFound):
    kind, title = "unknown-submission", "Unknown submission"


class CourseNotFound(NotFound):
    kind, title = "unknown-course", "Unknown course"


class RegradeNotFound(NotFound):
    kind, title = "unknown-regrade", "Unknown regrade"


class UnknownBehaviour(NotFound):
    kind, title = "unknown-behaviour", "Unknown behaviour"


class ExtensionNotFound(NotFound):
    kind, title = "extension-not-found", "No such extension"


class NotFinished(Problem):
    status, kind, title = 409, "not-finished", "Submission not graded yet"

    def __init__(self, detail: str, retry_after_s: int = 1) -> None:
        super().__init__(detail, headers={"Retry-After": str(retry_after_s)})


class MistakeTaken(Problem):
    status, kind, title = 409, "mistake-taken", "Mistake already named"


class NoRoster(Problem):
    status, kind, title = 409, "no-roster", "No roster to read"


class IdempotencyKeyReused(Problem):
    status, kind, title = 422, "idempotency-key-reused", "Idempotency-Key reused"


class ReservedStudentId(Problem):
    status, kind, title = 422, "reserved-student-id", "Student id reserved"


class OtherStudent(Problem):
    status, kind, title = 403, "other-student", "Not your student id"


class ActingAsStudentRefused(Problem):
    status, kind, title = 403, "acting-as-student-refused", "Acting as a student refused"


class CallbackUrlRefused(Problem):
    status, kind, title = 422, "callback-url-refused", "Callback URL refused"


class PayloadTooLarge(Problem):
    status, kind, title = 413, "payload-too-large", "Payload too large"


class _RetryLater(Problem):
    def __init__(self, detail: str, retry_after_s: float) -> None:
        super().__init__(detail, headers={"Retry-After": str(max(1, math.ceil(retry_after_s)))})
        self.retry_after_s = retry_after_s


class RateLimited(_RetryLater):
    status, kind, title = 429, "rate-limited", "Too many requests"


class AttemptsUsedUp(_RetryLater):
    status, kind, title = 429, "attempts-used-up", "No attempts left for now"


class QueueFull(_RetryLater):
    status, kind, title = 503, "queue-full", "Grading queue full"


class SubmissionsClosed(Problem):
    status, kind, title = 403, "submissions-closed", "Past the due date"


class ExerciseUnavailable(Problem):
    status, kind, title = 503, "exercise-unavailable", "Exercise unavailable"


class ExerciseIsDraft(Problem):
    status, kind, title = 409, "exercise-draft", "Exercise not published"


class TooManyInFlight(_RetryLater):
    status, kind, title = 429, "too-many-in-flight", "Too many submissions waiting to be graded"


class StorageFull(_RetryLater):
    status, kind, title = 503, "storage-full", "Storage full"


class DatabaseBusy(_RetryLater):
    status, kind, title = 503, "database-busy", "Database busy"
