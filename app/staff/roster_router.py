"""/v1/courses/{course}/roster: the course's LMS rosters, and a sync asked by its staff (sent by
the outbox: app.lti.roster)."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy.orm import Session

from app.api.deps import SessionDep
from app.api.problem_docs import responses
from app.api.problems import CourseNotFound, NoRoster, Unauthorized
from app.lti import roster, roster_view
from app.staff.deps import StaffCourseDep
from app.staff.roster_schemas import CourseRoster, RosterMemberPublic, RosterSourcePublic

router = APIRouter(prefix="/courses/{course}", tags=["course staff"])


def _roster(session: Session, course_id: int) -> CourseRoster:
    return CourseRoster(
        sources=[RosterSourcePublic.of(one) for one in roster_view.sources(session, course_id)],
        members=[RosterMemberPublic.of(one) for one in roster_view.members(session, course_id)],
    )


@router.get(
    "/roster",
    response_model=CourseRoster,
    summary="The course's roster, from its LMS",
    responses=responses(Unauthorized, CourseNotFound),
)
def get_roster(course: StaffCourseDep, session: SessionDep) -> CourseRoster:
    """Every member of the LMS courses bound to this course (Names and Role Provisioning), with
    their roles and status, and each LMS course's latest sync: pending, delivered, or failed
    with its error."""
    return _roster(session, course.id)


@router.post(
    "/roster/sync",
    status_code=202,
    response_model=CourseRoster,
    summary="Read the roster from the LMS again",
    responses=responses(Unauthorized, CourseNotFound, NoRoster),
)
def sync_roster(course: StaffCourseDep, session: SessionDep) -> CourseRoster:
    """Asks for a sync of each LMS course bound to this course (one already due is not asked
    twice); the service reads it in the background within seconds: `GET .../roster` follows it.
    409 when no launch has offered a roster yet."""
    try:
        roster.ask_sync(session, course.id)
    except roster.NoRosterService as none:
        raise NoRoster(str(none)) from None
    return _roster(session, course.id)
