"""Who may see and do what: the one place the API's authorization is decided.

    admin       every submission of its course, with the code; manages keys and LMS platforms
    instructor  every submission of its course, with the code; submits as anyone in it
    submitter   submits (as any student of its course), and reads what it submitted
    a student   (a student link, or an LMS launch) submits as itself, and reads its own
                submissions of its course, with the code

A caller never sees another course's submissions: a submission it may not see is unknown to it
(404, not 403, so ids leak nothing), and a listing returns only what it may see. Student ids are
scoped to the course; the `lti:` namespace is reserved for identities that come from an LMS
launch. A callback URL is shown only to the key that gave it. An exercise not yet proven (a
draft) is seen, opened and graded by admins and instructors alone; to anyone else it is unknown.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_

from app.access.auth import Principal
from app.api.problems import OtherStudent, ReservedStudentId
from app.api.submission_schemas import SubmissionPublic
from app.core.models import LTI_STUDENTS, Role, Submission
from app.core.student_ids import comparable

_READS_ITS_COURSE = (Role.ADMIN, Role.INSTRUCTOR)


def visible(principal: Principal) -> ColumnElement[bool]:
    """The submissions this caller may see, as a condition on their rows."""
    in_course = Submission.course_id == principal.course_id
    if principal.role in _READS_ITS_COURSE:
        return in_course
    if principal.student_id is not None:
        return and_(in_course, Submission.student_id == principal.student_id)
    if principal.key_id is None:
        return and_(in_course, Submission.api_key_id.is_(None))
    return and_(in_course, Submission.api_key_id == principal.key_id)


def is_staff_of(principal: Principal, course_id: int) -> bool:
    """Whether the caller sees the whole course: its figures, gradebook and every student."""
    return (
        principal.course_id == course_id
        and principal.role in _READS_ITS_COURSE
        and principal.student_id is None
    )


def sees_drafts(principal: Principal) -> bool:
    """Whether the caller sees exercises not yet proven (grader.proof_record): staff try them
    before students may; to anyone else a draft is unknown."""
    return principal.role in _READS_ITS_COURSE and principal.student_id is None


def may_see_source(principal: Principal, submission: Submission) -> bool:
    """Its own code, for whoever submitted it; any code of the course, for its staff."""
    if principal.role in _READS_ITS_COURSE:
        return True
    if principal.student_id is not None:
        return submission.student_id == principal.student_id
    return submission.api_key_id == principal.key_id


def may_see_callback(principal: Principal, submission: Submission) -> bool:
    return principal.student_id is None and submission.api_key_id == principal.key_id


def public_view(submission: Submission, principal: Principal) -> SubmissionPublic:
    """The submission as this caller may see it: its code and its callback URL where allowed."""
    return SubmissionPublic.from_row(
        submission,
        show_source=may_see_source(principal, submission),
        show_callback=may_see_callback(principal, submission),
    )


def submitting_as(principal: Principal, student_id: str | None) -> str | None:
    """The student a new submission is stored for: a student is always itself, and any other
    caller names any student of its course, but never an LMS identity. `student_id` is in its
    normal form (app.core.student_ids); a student whose link was made before ids were normalised
    may name itself in it."""
    if principal.student_id is not None:
        if student_id not in (None, principal.student_id, comparable(principal.student_id)):
            raise OtherStudent(
                f"you are signed in as {principal.student_id!r}, and submit as that student only"
            )
        return principal.student_id
    if student_id is not None and student_id.startswith(LTI_STUDENTS):
        raise ReservedStudentId(
            f"student ids starting {LTI_STUDENTS!r} are reserved for students launched from an "
            "LMS; choose another id"
        )
    return student_id
