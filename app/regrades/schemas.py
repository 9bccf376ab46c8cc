"""Wire schemas of regrades and of a submission's past reports; the storage models are
app.regrades.models.Regrade and app.regrades.models.PastReport."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, JsonValue

from app.core.student_ids import StudentId
from app.regrades.models import PastReport, Regrade, RegradeStatus
from grader.report import Report

_EXAMPLE: dict[str, JsonValue] = {
    "id": "01JD8Z6Q3M9V7N4K2P5R8T1W0X",
    "exercise": "multi-headed-self-attention",
    "student_id": None,
    "reason": "new-version",
    "status": "running",
    "total": 240,
    "graded": 96,
    "changed": 11,
    "created_at": "2026-11-24T15:00:00Z",
    "finished_at": None,
}


class RegradeReason(StrEnum):
    REQUESTED = "requested"  # staff asked, and every submission it covers has the current version
    NEW_VERSION = "new-version"  # some were graded with another version of the exercise


class RegradeCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{}, {"student_id": "s1234567"}]}
    )

    # One student's submissions; every student's when left out.
    student_id: StudentId | None = None


class RegradePublic(BaseModel):
    """A regrade and its progress: `graded` of `total` submissions, `changed` of them scored
    differently (those were posted again to the LMS and announced by webhook)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})

    id: str
    exercise: str
    student_id: str | None
    reason: RegradeReason
    status: RegradeStatus
    total: int
    graded: int
    changed: int
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def from_row(cls, row: Regrade) -> RegradePublic:
        return cls.model_validate(row, from_attributes=True)


class RegradeList(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"regrades": [_EXAMPLE]}]})

    regrades: list[RegradePublic]


class PastReportPublic(BaseModel):
    """A report the submission had before a regrade replaced it."""

    # The exercise's version that graded it (null: graded before versions existed).
    exercise_version: str | None
    report: Report
    score: float | None
    max_score: float | None
    graded_at: datetime | None
    replaced_at: datetime
    # The regrade that replaced it (null once that regrade is deleted).
    regrade_id: str | None

    @classmethod
    def from_row(cls, row: PastReport) -> PastReportPublic:
        return cls.model_validate(row, from_attributes=True)


class SubmissionHistory(BaseModel):
    """A submission's past reports, newest first; its current one is `GET /v1/submissions/{id}`."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "submission_id": "01JD8Z6Q3M9V7N4K2P5R8T1W0X",
                    "past_reports": [
                        {
                            "exercise_version": "f31f15238d73",
                            "report": {
                                "exercise": "multi-headed-self-attention",
                                "exercise_version": "f31f15238d73",
                                "status": "failed",
                                "score": 7.0,
                                "max_score": 8.0,
                                "tests": [],
                                "diagnosis": [],
                                "message": "7 of 8 tests passed (7/8 points)",
                            },
                            "score": 7.0,
                            "max_score": 8.0,
                            "graded_at": "2026-11-22T17:00:00.130Z",
                            "replaced_at": "2026-11-24T15:00:02Z",
                            "regrade_id": "01JDB2M4Q8W6E0R3T5Y7V9K1N2",
                        }
                    ],
                }
            ]
        }
    )

    submission_id: str
    past_reports: list[PastReportPublic]
