"""Staff name a group of unexplained wrong answers (app.staff.clusters) once: the group becomes a
mistake of the course (app.courses.models.CourseMistake), its past submissions get it as their
finding now, and future ones as they are graded (app.courses.mistakes).

A re-diagnosis: each past report gains the finding (the JSON and its row), its score and status
stay, and nothing is recorded for the LMS or a webhook (the outbox is not touched), since no
score changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.problems import MistakeTaken, UnknownBehaviour
from app.core.models import Course, Submission
from app.courses.mistakes import diagnosed, named_mistakes, unexplained
from app.courses.models import CourseMistake
from app.grading.report_store import replace_outcomes
from app.staff.cluster_schemas import Named, NameMistakeBody
from app.staff.clusters import behaving, named, unexplained_submissions
from app.staff.mistakes import known_mistakes
from grader.report import Report
from grader.spec import Exercise


def name_mistake(
    session: Session, course: Course, exercise: Exercise, body: NameMistakeBody
) -> Named:
    slug = exercise.spec.slug
    _check_free(session, course.id, exercise, body)
    past = session.scalars(
        select(Submission)
        .where(*unexplained_submissions(course.id, slug), behaving(body.behaviour_key))
        .order_by(Submission.id)
        .with_for_update(of=Submission)
    ).all()
    if not past:
        raise UnknownBehaviour(f"no unexplained wrong answer of {slug!r} has that behaviour")
    mistake = CourseMistake(
        course_id=course.id,
        exercise=slug,
        behaviour_key=body.behaviour_key,
        code=body.code,
        message=body.message,
        fix=body.fix,
        concepts=body.concepts,
    )
    session.add(mistake)
    session.flush()
    return Named(mistake=named(mistake), rediagnosed=_rediagnose(session, past, mistake))


def _check_free(
    session: Session, course_id: int, exercise: Exercise, body: NameMistakeBody
) -> None:
    """A code names one mistake of the exercise, and a group gets one name."""
    if body.code in known_mistakes(exercise):
        raise MistakeTaken(f"{body.code!r} is a mistake the exercise already knows")
    for mistake in named_mistakes(session, course_id, exercise.spec.slug):
        if mistake.code == body.code:
            raise MistakeTaken(f"the course already named a mistake {body.code!r}")
        if mistake.behaviour_key == body.behaviour_key:
            raise MistakeTaken(f"the course already named that group {mistake.code!r}")


def _rediagnose(session: Session, past: Sequence[Submission], mistake: CourseMistake) -> int:
    """Give each past report the mistake as its finding; returns how many."""
    rediagnosed = 0
    for row in past:
        report = Report.model_validate(row.report)
        if unexplained(report):
            report = diagnosed(report, mistake)
            row.report = report.model_dump(mode="json")
            replace_outcomes(session, row.id, report)
            rediagnosed += 1
    return rediagnosed
