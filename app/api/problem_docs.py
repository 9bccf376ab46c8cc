"""The problems a route may answer, documented in its OpenAPI `responses` with an example each."""

from __future__ import annotations

from typing import Any

from app.api.problems import MEDIA_TYPE, TYPE_PREFIX, Problem


def responses(*problems: type[Problem]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for a route that may answer these problems, each with an example."""
    documented: dict[int | str, dict[str, Any]] = {}
    kinds: tuple[type[Problem], ...] = (*problems, _Validation)
    for problem in kinds:
        example = {
            "type": f"{TYPE_PREFIX}{problem.kind}",
            "title": problem.title,
            "status": problem.status,
            "detail": _EXAMPLE_DETAILS.get(problem.kind, problem.title),
            "instance": "/v1/...",
        }
        entry = documented.setdefault(
            problem.status,
            {
                "description": problem.title,
                "content": {MEDIA_TYPE: {"schema": _schema_ref(), "examples": {}}},
            },
        )
        entry["content"][MEDIA_TYPE]["examples"][problem.kind] = {"value": example}
    return documented


class _Validation(Problem):
    status, kind, title = 422, "invalid-request", "Invalid request"


_EXAMPLE_DETAILS = {
    "unauthorized": "send the key as `Authorization: Bearer <key>` or `X-API-Key: <key>`",
    "unknown-exercise": "no exercise is called 'attention'",
    "unknown-submission": "no submission has id '01JD0000000000000000000000'",
    "unknown-course": "there is no course 'ml-101' that you teach",
    "unknown-regrade": "course 'ml-101' has no regrade '01JD0000000000000000000000'",
    "not-finished": "submission 01JD0000000000000000000000 is queued",
    "no-roster": "no LMS course bound to this course has offered a roster yet: it comes with "
    "a launch from the LMS (Names and Role Provisioning enabled for the tool)",
    "idempotency-key-reused": "this Idempotency-Key was used with another request body",
    "callback-url-refused": "callback_url: 10.0.0.7 is a private address; webhooks go to "
    "public addresses only",
    "payload-too-large": "the source is 300000 bytes; the limit is 262144",
    "rate-limited": "student 's1' may submit 60 times a minute",
    "other-student": "you are signed in as 'ada', and submit as that student only",
    "reserved-student-id": "student ids starting 'lti:' are reserved for students launched "
    "from an LMS; choose another id",
    "too-many-in-flight": "you have 3 submissions waiting to be graded; submit again once one "
    "is graded",
    "queue-full": "20000 submissions are waiting; retry later",
    "exercise-unavailable": "exercise 'attention' is broken: attention/exercise.toml: "
    "tests.0.seed: Field required",
    "exercise-draft": "exercise 'attention' is a draft (not proven: run `autograder "
    "check-exercise attention`): its students' work is not graded with it",
    "storage-full": "no room left to store this; retry later",
    "database-busy": "the database did not answer in time (a table is locked); retry later",
    "invalid-request": "body.exercise: Field required",
}


def _schema_ref() -> dict[str, str]:
    return {"$ref": "#/components/schemas/ProblemDetail"}
