"""The course a staff route names in its path, or a 404 for anyone who is not its staff."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path
from sqlalchemy import select

from app import access
from app.auth import PrincipalDep
from app.courses import COURSE_PATTERN
from app.deps import SessionDep
from app.models import Course
from app.problems import CourseNotFound


def staff_course(
    course: Annotated[str, Path(pattern=COURSE_PATTERN.pattern, description="the course's slug")],
    session: SessionDep,
    principal: PrincipalDep,
) -> Course:
    row = session.scalars(select(Course).where(Course.slug == course)).one_or_none()
    if row is None or not access.is_staff_of(principal, row.id):
        raise CourseNotFound(f"there is no course {course!r} that you teach")
    return row


StaffCourseDep = Annotated[Course, Depends(staff_course)]
