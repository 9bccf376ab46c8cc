"""A course's concept figures, counted by SQL: per knowledge component (grader.concepts), the
students who still hold a mistake about it, across exercises, as of the end of each week of the
term and now.

A student holds a concept's mistake as of a time when their latest scored submission to some
exercise, made before then, has a finding about it: its report's concept rows
(app.grading.models.ReportOutcome, kind "concept"), written from the findings' concepts. A fix
in a later submission lets go of it; a grader fault is no answer and changes nothing.

Four statements whatever the class or the term: the term's start, then every week at once
(`_latest`: each submission joined to the weeks it is the latest in).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Subquery,
    and_,
    case,
    distinct,
    func,
    literal,
    or_,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from app.core.models import Course, Submission, utcnow
from app.grading.models import OutcomeKind, ReportOutcome
from app.staff.concept_schemas import ConceptCurve, ConceptWeek, CourseConcepts
from app.staff.scores import SCORED, graded
from grader.concepts import CONCEPTS

WEEK = timedelta(days=7)
# A course older than this shows its last weeks only: the statements' work stays bounded.
MAX_WEEKS = 53


def course_concepts(
    session: Session, course: Course, now: datetime | None = None
) -> CourseConcepts:
    at = now or utcnow()
    first = session.scalar(
        select(func.min(Submission.created_at)).where(*_scored_answers(course.id))
    )
    if first is None:
        return CourseConcepts(course=course.slug, weeks=[], students=0, concepts=_curves({}, {}, 0))
    starts = _week_starts(first, at)
    ends = [*starts[1:], at]  # the week running now is counted as of now
    latest = _latest(course.id, ends)
    active: dict[int, int] = {
        week: students
        for week, students in session.execute(
            select(latest.c.week, func.count(distinct(latest.c.student_id))).group_by(latest.c.week)
        )
    }
    weekly: dict[str, list[int]] = defaultdict(lambda: [0] * len(ends))
    for week, concept, students in _held(session, latest, latest.c.week):
        weekly[concept][week] = students
    exercises: dict[str, dict[str, int]] = defaultdict(dict)
    this_week = latest.c.week == len(ends) - 1
    for exercise, concept, students in _held(session, latest, latest.c.exercise, this_week):
        exercises[concept][exercise] = students
    return CourseConcepts(
        course=course.slug,
        weeks=[
            ConceptWeek(start=start.date(), students=active.get(week, 0))
            for week, start in enumerate(starts)
        ],
        students=active.get(len(ends) - 1, 0),
        concepts=_curves(weekly, exercises, len(ends)),
    )


def _week_starts(first: datetime, now: datetime) -> list[datetime]:
    """The Mondays (00:00 UTC) from the first submission's week to now's, the last MAX_WEEKS."""
    day = first.astimezone(UTC).date()
    monday = datetime.combine(day - timedelta(days=day.weekday()), time(), tzinfo=UTC)
    count = max(1, (now - monday) // WEEK + 1)
    skipped = max(0, count - MAX_WEEKS)
    return [monday + WEEK * week for week in range(skipped, count)]


def _scored_answers(course_id: int) -> list[ColumnElement[bool]]:
    return [graded(course_id), Submission.student_id.is_not(None), SCORED]


def _latest(course_id: int, ends: list[datetime]) -> Subquery:
    """Per week (by index), student and exercise: the latest scored submission made before the
    week's end. Ids grow with time (ULIDs): the greatest is the latest.

    A submission is the latest as of the end of each week from the one it was made in to the one
    before its successor's (the student's next submission to the exercise); of none where the
    successor came in the same week. A window over the submissions finds each one's span, so
    only the weeks it spans are joined to it, not every week after it."""
    made_in = case(
        *((Submission.created_at < end, week) for week, end in enumerate(ends[:-1])),
        else_=len(ends) - 1,
    )
    spans = (
        select(
            Submission.id,
            Submission.student_id,
            Submission.exercise,
            made_in.label("first"),
            func.lead(made_in)
            .over(partition_by=(Submission.student_id, Submission.exercise), order_by=Submission.id)
            .label("until"),
        )
        .where(*_scored_answers(course_id), Submission.created_at < ends[-1])
        .subquery("spans")
    )
    # The submissions a next one superseded in their own week are never a week's latest.
    lasting = (
        select(spans)
        .where(or_(spans.c.until.is_(None), spans.c.until > spans.c.first))
        .subquery("lasting")
    )
    weeks = union_all(*(select(literal(week, Integer).label("week")) for week in range(len(ends))))
    week = weeks.subquery("weeks").c.week
    spanned = and_(week >= lasting.c.first, or_(lasting.c.until.is_(None), week < lasting.c.until))
    return (
        select(week, lasting.c.student_id, lasting.c.exercise, lasting.c.id.label("submission_id"))
        .join(lasting, spanned)
        .subquery()
    )


def _held(
    session: Session, latest: Subquery, key: ColumnElement[Any], *where: ColumnElement[bool]
) -> list[Any]:
    """(key, concept, students holding it) for each key and concept of the latest submissions."""
    return list(
        session.execute(
            select(key, ReportOutcome.name, func.count(distinct(latest.c.student_id)))
            .join(ReportOutcome, ReportOutcome.submission_id == latest.c.submission_id)
            .where(ReportOutcome.kind == OutcomeKind.CONCEPT, *where)
            .group_by(key, ReportOutcome.name)
        )
    )


def _curves(
    weekly: dict[str, list[int]], exercises: dict[str, dict[str, int]], weeks: int
) -> list[ConceptCurve]:
    """Every concept of the vocabulary, then any other the reports name, most students first."""
    names = [*CONCEPTS, *sorted(set(weekly) - set(CONCEPTS))]
    curves = [
        ConceptCurve(
            concept=name,
            description=CONCEPTS.get(name, name),
            weekly=weekly.get(name, [0] * weeks),
            students=weekly[name][-1] if name in weekly else 0,
            exercises=dict(sorted(exercises.get(name, {}).items(), key=lambda item: -item[1])),
        )
        for name in names
    ]
    return sorted(curves, key=lambda curve: (-curve.students, -sum(curve.weekly)))
