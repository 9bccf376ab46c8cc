"""The line of queued submissions, as a student in it sees it: a place and an estimate.

The line is graded in order of (queue_rank, id) (app.core.models.Submission.queue_rank), so a
queued submission's place is one plus the queued rows before it in that order: one COUNT over
the index `ix_submissions_line`. The estimate divides that place by the recent pace of grading,
read from the finish times of the last `PACE_SAMPLE` gradings, and is None with fewer than two
graded in the last `PACE_WINDOW`: no figure is better than a made-up one. Those gradings are
looked for among the submissions made in the last `MADE_WITHIN` only, a range of the primary
key (ids sort by creation), never the whole table: a submission is graded minutes after it is
made, hours only behind a backlog that long (and then there is no estimate).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

from app.core.models import Submission, SubmissionStatus, first_id_made_at, utcnow

PACE_SAMPLE = 50
PACE_WINDOW = timedelta(minutes=10)
MADE_WITHIN = timedelta(hours=2)
# Every waiting student asks for an estimate; the pace they share is read once per this long
# (and at every ask while there is none).
PACE_CACHE_S = 5.0


@dataclass(frozen=True)
class Place:
    position: int  # 1: graded next
    estimate_s: float | None


def position(session: Session, submission: Submission) -> int:
    before = tuple_(Submission.queue_rank, Submission.id) < tuple_(
        submission.queue_rank, submission.id
    )
    count = select(func.count()).where(Submission.status == SubmissionStatus.QUEUED, before)
    return (session.scalar(count.select_from(Submission)) or 0) + 1


def graded_per_s(session: Session) -> float | None:
    """Gradings finished per second over the span of the last `PACE_SAMPLE` of them; None
    without two in the last `PACE_WINDOW`."""
    now = utcnow()
    finished = session.scalars(
        select(Submission.finished_at)
        .where(
            # No status here: finished_at is set when done, and a status would lead the
            # planner to the index of the line (status first) over the whole table.
            Submission.id >= first_id_made_at(now - MADE_WITHIN),
            Submission.finished_at >= now - PACE_WINDOW,
        )
        .order_by(Submission.finished_at.desc())
        .limit(PACE_SAMPLE)
    ).all()
    times = [when for when in finished if when is not None]
    if len(times) < 2:
        return None
    span_s = (times[0] - times[-1]).total_seconds()
    return (len(times) - 1) / span_s if span_s > 0 else None


@dataclass
class Line:
    """One per process: the place of a queued submission, with the pace kept `PACE_CACHE_S`."""

    _pace: tuple[float, float | None] = (float("-inf"), None)  # (read at, graded per second)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def place(self, session: Session, submission: Submission) -> Place | None:
        """Its place while queued; None once it is running or done."""
        if submission.status is not SubmissionStatus.QUEUED:
            return None
        in_line = position(session, submission)
        pace = self._graded_per_s(session)
        return Place(in_line, round(in_line / pace, 1) if pace else None)

    def _graded_per_s(self, session: Session) -> float | None:
        with self._lock:
            read_at, pace = self._pace
        # No pace is not kept: the first estimates of a deadline come as soon as two are graded.
        if pace is not None and time.monotonic() - read_at < PACE_CACHE_S:
            return pace
        pace = graded_per_s(session)
        with self._lock:
            self._pace = (time.monotonic(), pace)
        return pace
