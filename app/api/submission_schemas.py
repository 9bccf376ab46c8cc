"""Wire schemas of submissions, named by role; the storage model is app.core.models.Submission."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, field_validator

from app.core.models import Submission, SubmissionStatus
from app.core.student_ids import StudentId
from grader.report import Report, ReportStatus

_EXAMPLE_ID = "01JD8Z6Q3M9V7N4K2P5R8T1W0X"
# A submission id (a ULID: Crockford base32); an exercise slug.
ID_PATTERN = r"^[0-9A-HJKMNP-TV-Z]{26}$"
SLUG_PATTERN = r"^[a-z0-9-]+$"
_SOURCE_EXAMPLE = (
    "import torch\nimport torch.nn as nn\n\n\nclass MultiHeadedSelfAttention(nn.Module):\n    ...\n"
)


def _text(value: str, what: str) -> str:
    """Text the database can keep as is: UTF-8 encodable (no lone surrogates), no NUL."""
    if "\x00" in value:
        raise ValueError(f"{what} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode text (lone surrogate)") from None
    return value


class SubmissionCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "exercise": "multi-headed-self-attention",
                    "source": _SOURCE_EXAMPLE,
                    "student_id": "s1234567",
                    "callback_url": "https://lms.example.edu/autograder/hook",
                }
            ]
        },
    )

    exercise: Annotated[str, Field(min_length=1, max_length=100, pattern=SLUG_PATTERN)]
    # Size is checked in bytes by the route (413), not here (which would be a 422).
    source: str
    student_id: StudentId | None = None  # in its normal form (app.core.student_ids)
    callback_url: Annotated[HttpUrl | None, Field(max_length=2048)] = None

    @field_validator("source")
    @classmethod
    def _source_is_text(cls, value: str) -> str:
        return _text(value, "source")


class QueuePlace(BaseModel):
    """Where a queued submission stands: how many are graded before it, and about when it
    will be. Present only while the submission is queued."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"position": 12, "estimate_s": 9.5}]})

    position: int = Field(ge=1, description="1: graded next")
    estimate_s: float | None = Field(
        ge=0,
        description="seconds until its report, from the recent pace of grading; null while "
        "nothing has been graded recently to estimate from",
    )


class SubmissionAccepted(BaseModel):
    """The answer to a POST: where to find the submission, and its state now."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": _EXAMPLE_ID,
                    "status": "queued",
                    "queue": {"position": 12, "estimate_s": 9.5},
                }
            ]
        }
    )

    id: str
    status: SubmissionStatus
    # Present while queued: its place in line and an estimate.
    queue: QueuePlace | None = None


class SubmissionPublic(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": _EXAMPLE_ID,
                    "exercise": "multi-headed-self-attention",
                    "exercise_version": "f31f15238d73",
                    "student_id": "s1234567",
                    "status": "done",
                    "attempts": 1,
                    "created_at": "2026-11-22T17:00:00Z",
                    "started_at": "2026-11-22T17:00:00.010Z",
                    "finished_at": "2026-11-22T17:00:00.130Z",
                    "callback_url": None,
                    "report": {
                        "exercise": "multi-headed-self-attention",
                        "exercise_version": "f31f15238d73",
                        "status": "passed",
                        "score": 10.0,
                        "max_score": 10.0,
                        "tests": [
                            {
                                "name": "batch 1, 2 heads",
                                "visibility": "visible",
                                "status": "passed",
                                "score": 1.0,
                                "max_score": 1.0,
                                "message": "matches the reference to 4 decimal places",
                                "max_abs_error": 2.9e-8,
                            }
                        ],
                        "diagnosis": [],
                        "message": "10 of 10 tests passed (10/10 points)",
                    },
                }
            ]
        }
    )

    id: str
    exercise: str
    # The exercise's version the report was graded with, once done (null for an error report
    # made without the exercise, and for submissions graded before versions existed).
    exercise_version: str | None
    student_id: str | None
    status: SubmissionStatus
    # Present once status is "done": the same report `autograder grade --json` prints.
    report: Report | None
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    # Shown only to the key that gave it.
    callback_url: str | None
    # Shown to the key (or launched student) that submitted it, and to the course's staff.
    source: str | None = None
    # Present while queued: its place in line and an estimate.
    queue: QueuePlace | None = None

    @classmethod
    def from_row(
        cls, row: Submission, *, show_source: bool = False, show_callback: bool = False
    ) -> SubmissionPublic:
        return cls(
            id=row.id,
            exercise=row.exercise,
            exercise_version=row.exercise_version,
            student_id=row.student_id,
            status=row.status,
            report=Report.model_validate(row.report) if row.report is not None else None,
            attempts=row.attempts,
            created_at=row.created_at,
            started_at=row.started_at,
            finished_at=row.finished_at,
            callback_url=row.callback_url if show_callback else None,
            source=row.source if show_source else None,
        )


class SubmissionSummary(BaseModel):
    """One line of a history: the verdict without the per-test detail."""

    id: str
    exercise: str
    student_id: str | None
    status: SubmissionStatus
    result: ReportStatus | None = Field(description="the report's status once done")
    score: float | None
    max_score: float | None
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def from_row(cls, row: Submission) -> SubmissionSummary:
        report = row.report or {}
        return cls(
            id=row.id,
            exercise=row.exercise,
            student_id=row.student_id,
            status=row.status,
            result=report.get("status"),
            score=report.get("score"),
            max_score=report.get("max_score"),
            created_at=row.created_at,
            finished_at=row.finished_at,
        )


class SubmissionPage(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "items": [
                        {
                            "id": _EXAMPLE_ID,
                            "exercise": "multi-headed-self-attention",
                            "student_id": "s1234567",
                            "status": "done",
                            "result": "passed",
                            "score": 10.0,
                            "max_score": 10.0,
                            "created_at": "2026-11-22T17:00:00Z",
                            "finished_at": "2026-11-22T17:00:00.130Z",
                        }
                    ],
                    "next_cursor": None,
                }
            ]
        }
    )

    items: list[SubmissionSummary]
    # Pass as ?cursor= for the next (older) page; null on the last page.
    next_cursor: str | None


class GradescopeResults(BaseModel):
    """Gradescope's autograder results.json, derived from the report."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {
                    "score": 10.0,
                    "output": "10 of 10 tests passed (10/10 points)",
                    "tests": [
                        {
                            "name": "batch 1, 2 heads",
                            "score": 1.0,
                            "max_score": 1.0,
                            "status": "passed",
                            "output": "matches the reference to 4 decimal places",
                            "visibility": "visible",
                        }
                    ],
                }
            ]
        },
    )

    score: float
    output: str
    tests: list[dict[str, object]]
