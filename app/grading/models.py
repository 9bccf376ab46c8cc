"""A report's figures as rows (app.grading.report_store), one per check of a graded submission;
and what its hidden tests did, for staff alone."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.models import Base, JSONDocument, stored_enum


class OutcomeKind(StrEnum):
    TEST = "test"  # a test's status
    FINDING = "finding"  # a diagnosed mistake (status "")
    PROPERTY = "property"  # a property check's status
    CONCEPT = "concept"  # a concept a finding is about, once per report (status "")
    # A failed report's behaviour (grader.report.Behaviour): its key as the name (status "").
    BEHAVIOUR = "behaviour"


class ReportOutcome(Base):
    """One line of a submission's current report, as a row: what the course's statistics count
    (app.staff) without reading any report's JSON. Rewritten with the report
    (app.grading.report_store)."""

    __tablename__ = "report_outcomes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[OutcomeKind] = mapped_column(stored_enum(OutcomeKind))
    name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    # A test's visibility ("visible", "hidden"); None for findings and properties.
    visibility: Mapped[str | None] = mapped_column(String(16))


class HiddenTestsRun(Base):
    """What the hidden tests of a submission's current report did (grader.hidden_detail), for
    the course's staff alone: a table of its own, which nothing a student reaches reads (the
    report a student sees tells one bit per hidden test). Rewritten with the report."""

    __tablename__ = "hidden_test_runs"

    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), primary_key=True
    )
    detail: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
