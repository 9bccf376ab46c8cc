"""Regrades (app.regrades) and the reports they replaced."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.models import Base, JSONDocument, Leased, UTCDateTime, new_id, stored_enum, utcnow
from app.grading.leases import LeaseTable


class RegradeStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"


class Regrade(Leased, Base):
    """Grading again an exercise's finished submissions in a course (all, or one student's),
    in id order, after `cursor`: resumable where it stopped (app.regrades), by one runner at a
    time, the one that holds its lease."""

    __tablename__ = "regrades"
    __table_args__ = (Index("ix_regrades_course_exercise", "course_id", "exercise"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    exercise: Mapped[str] = mapped_column(String(100))
    student_id: Mapped[str | None] = mapped_column(String(200))
    # Why: "requested" (an instructor asked) or "new-version" (the exercise changed).
    reason: Mapped[str] = mapped_column(String(16))
    status: Mapped[RegradeStatus] = mapped_column(
        stored_enum(RegradeStatus), default=RegradeStatus.QUEUED, index=True
    )
    # The submissions it covers: finished ones with an id up to `last_id` when it was asked.
    last_id: Mapped[str | None] = mapped_column(String(26))
    total: Mapped[int] = mapped_column(Integer, default=0)
    graded: Mapped[int] = mapped_column(Integer, default=0)
    changed: Mapped[int] = mapped_column(Integer, default=0)
    # The last submission graded again: the regrade resumes after it.
    cursor: Mapped[str | None] = mapped_column(String(26))
    requested_by: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


# The leases on regrades: held by the runner that runs one (app.regrades.runner).
REGRADES = LeaseTable(Regrade)


class PastReport(Base):
    """A report a submission had before it was graded again (a regrade), with the exercise's
    version that graded it: history, never shown as the submission's result."""

    __tablename__ = "past_reports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    exercise_version: Mapped[str | None] = mapped_column(String(64))
    report: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    report_status: Mapped[str | None] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float)
    max_score: Mapped[float | None] = mapped_column(Float)
    graded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    replaced_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The regrade that replaced it (app.regrades).
    regrade_id: Mapped[str | None] = mapped_column(ForeignKey("regrades.id", ondelete="SET NULL"))
