"""Student links: the way in for a course's students when there is no LMS.

An instructor mints one per student (`autograder students link`): the page's URL with a signed
token in its fragment, as an LTI launch hands over its session. The page sends the token back as
`Authorization: Bearer ags_...`; app.access.auth then lets the caller act as that student of that
course and nobody else (app.access.rules). The token names a row of `student_links`, so it ends when
the row expires or is revoked, whatever the token's own signature says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import quote

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.access.models import StudentLink
from app.access.signed_tokens import InvalidToken, sign, verify
from app.core.commands import CommandRefused
from app.core.db import changed_rows
from app.core.models import LTI_STUDENTS, Course, utcnow
from app.core.settings import AppSettings
from app.core.student_ids import comparable, normal_student_id
from app.courses.registry import existing_course

TOKEN_PREFIX = "ags_"
FRAGMENT_KEY = "student_token"  # web/src/api.js reads the token from the fragment under this
_PURPOSE = "student-link"
_LONGEST = timedelta(days=366)
_DURATION = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class StudentLinkRefused(CommandRefused):
    """A link command that cannot be done as asked; the message says why."""


@dataclass(frozen=True)
class LinkedStudent:
    """Who a valid link lets in."""

    link_id: int
    course_id: int
    student_id: str


def parse_lifetime(text: str) -> timedelta:
    """`90m`, `12h`, `30d` or `2w`, up to a year."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise StudentLinkRefused(f"--expires takes a number and m, h, d or w (30d), not {text!r}")
    lifetime = timedelta(**{_UNITS[match[2]]: int(match[1])})
    if not timedelta(0) < lifetime <= _LONGEST:
        raise StudentLinkRefused(f"--expires must be more than nothing and at most 366d: {text!r}")
    return lifetime


def mint(
    session: Session, settings: AppSettings, *, course: str, student: str, lifetime: timedelta
) -> tuple[StudentLink, str]:
    """Store a new link for the student (their id in its normal form: app.core.student_ids); return
    its row and its token (made once, never stored)."""
    student = _normal(student)
    if student.startswith(LTI_STUDENTS):
        raise StudentLinkRefused(
            f"student ids starting {LTI_STUDENTS!r} are reserved for LMS launches: {student!r}"
        )
    row = StudentLink(
        course_id=existing_course(session, course).id,
        student_id=student,
        expires_at=utcnow() + lifetime,
    )
    session.add(row)
    session.flush()
    claims = {"link": row.id, "course": row.course_id, "student": student}
    return row, TOKEN_PREFIX + sign(settings, _PURPOSE, claims, row.expires_at.timestamp())


def is_link_token(credential: str) -> bool:
    return credential.startswith(TOKEN_PREFIX)


def check(session: Session, settings: AppSettings, token: str) -> LinkedStudent:
    """The student a token lets in; InvalidToken (its message says why) if it lets in nobody."""
    claims = verify(settings, _PURPOSE, token.removeprefix(TOKEN_PREFIX))
    link = session.get(StudentLink, claims.get("link"))
    if link is None or link.revoked_at is not None:
        raise InvalidToken("revoked")
    return LinkedStudent(link.id, link.course_id, link.student_id)


def _normal(student: str) -> str:
    try:
        return normal_student_id(student)
    except ValueError as error:
        raise StudentLinkRefused(f"{error}: {student!r}") from None


def revoke(session: Session, *, course: str, student: str) -> int:
    """Revoke every live link of this student of this course, named as minted (in normal form)
    or as a link made before ids were normalised stores it; how many there were."""
    now = utcnow()
    result = session.execute(
        update(StudentLink)
        .where(
            StudentLink.course_id == existing_course(session, course).id,
            StudentLink.student_id.in_({student, comparable(student)}),
            StudentLink.revoked_at.is_(None),
            StudentLink.expires_at > now,
        )
        .values(revoked_at=now)
    )
    return changed_rows(result)


def list_links(session: Session, course: str | None) -> list[tuple[StudentLink, str]]:
    """Every link (of one course, if named), with its course's slug, oldest first."""
    query = select(StudentLink, Course.slug).join(Course, Course.id == StudentLink.course_id)
    if course is not None:
        query = query.where(StudentLink.course_id == existing_course(session, course).id)
    return [(row[0], row[1]) for row in session.execute(query.order_by(StudentLink.id)).all()]


def public_base(settings: AppSettings) -> str:
    """Where students open the service: links are built from AUTOGRADER_PUBLIC_URL alone."""
    if not settings.public_url:
        raise StudentLinkRefused(
            "set AUTOGRADER_PUBLIC_URL to the address students open the service at "
            "(https://grader.example.edu): the link is built from it"
        )
    return settings.public_url.rstrip("/")


def page_url(base: str, token: str, exercise: str | None) -> str:
    """The page a student opens: one exercise, or the list of exercises."""
    path = "/exercises" + (f"/{quote(exercise)}" if exercise else "")
    return f"{base}{path}#{FRAGMENT_KEY}={token}"
