"""Keeping one regraded report, in one transaction with the regrade's progress.

    history   the submission's report so far becomes a PastReport, with the version that graded
              it and when; the new report replaces it through app.grading.report_store (the JSON,
              its columns and its rows together, and what its hidden tests did for staff); the
              submission stays done throughout
    progress  the regrade's cursor moves to the submission, `graded` (and `changed`) count it,
              on condition that the runner still holds the regrade at the cursor it read: a
              runner that lost it (cancelled, or taken over after its lease expired) stores
              nothing, so no submission is regraded twice
    after     only when the score changed, the hooks record what follows in the outbox: the LMS
              gets the new score, the callback_url the `submission.regraded` webhook

A regrade whose grading fails (an error report: the platform's fault, not the student's) keeps
the report the submission had, and moves on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.orm import Session

from app.core.db import changed_rows
from app.core.models import Submission, utcnow
from app.courses.mistakes import with_course_diagnosis
from app.grading.report_store import keep_hidden_tests, replace_outcomes, report_columns
from app.regrades.models import PastReport, Regrade, RegradeStatus
from grader.report import ReportStatus
from grader.runner import Graded

log = logging.getLogger(__name__)

# Records, in the transaction that keeps a changed score, what must follow it (app.outbox.sender);
# returns whether it recorded a message that is due now.
OnRegraded = Callable[[Session, str], bool]


class LostRegrade(Exception):
    """The regrade is no longer this runner's: what it graded is dropped."""


@dataclass(frozen=True)
class Position:
    """Where a runner holding a regrade stands: the submission after which it goes on."""

    regrade_id: str
    holder: str
    cursor: str | None


@dataclass(frozen=True)
class Kept:
    changed: bool  # the score (or the points it is out of) differs from the report it replaced
    outbox_due: bool  # a hook recorded a message due now


def keep(
    session: Session,
    position: Position,
    submission_id: str,
    graded: Graded,
    on_regraded: Sequence[OnRegraded],
) -> Kept:
    """Keep `report` as the submission's (unless it is an error report) and count it in the
    regrade's progress; raises LostRegrade, rolling all of it back, when the runner lost it."""
    changed = graded.report.status is not ReportStatus.ERROR and _replace(
        session, position.regrade_id, submission_id, graded
    )
    _advance(session, position, submission_id, changed)
    recorded = [record(session, submission_id) for record in on_regraded] if changed else []
    return Kept(changed, any(recorded))


def _replace(session: Session, regrade_id: str, submission_id: str, graded: Graded) -> bool:
    row = session.scalars(
        select(Submission).where(Submission.id == submission_id).with_for_update()
    ).one_or_none()
    if row is None or row.report is None:  # deleted since the regrade read it
        return False
    session.add(
        PastReport(
            submission_id=submission_id,
            exercise_version=row.exercise_version,
            report=row.report,
            report_status=row.report_status,
            score=row.score,
            max_score=row.max_score,
            graded_at=row.finished_at,
            regrade_id=regrade_id,
        )
    )
    changed = (row.score, row.max_score) != (graded.report.score, graded.report.max_score)
    report = with_course_diagnosis(session, row.course_id, graded.report)
    session.execute(
        update(Submission)
        .where(Submission.id == submission_id)
        .values(**report_columns(report), finished_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    replace_outcomes(session, submission_id, report)
    keep_hidden_tests(session, submission_id, graded.hidden)
    return changed


def _advance(session: Session, position: Position, submission_id: str, changed: bool) -> None:
    result = session.execute(
        update(Regrade)
        .where(_held_at(position))
        .values(
            cursor=submission_id,
            graded=Regrade.graded + 1,
            changed=Regrade.changed + int(changed),
        )
        .execution_options(synchronize_session=False)
    )
    if changed_rows(result) != 1:
        raise LostRegrade(position.regrade_id)


def _held_at(position: Position) -> ColumnElement[bool]:
    at_cursor = (
        Regrade.cursor.is_(None) if position.cursor is None else Regrade.cursor == position.cursor
    )
    return (
        (Regrade.id == position.regrade_id)
        & (Regrade.status == RegradeStatus.RUNNING)
        & (Regrade.lease_holder == position.holder)
        & at_cursor
    )
