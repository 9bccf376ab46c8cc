"""The course a staff route names in its path, or a 404 for anyone who is not its staff."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path
from sqlalchemy import select

from app.access import rules as access
from app.access.auth import PrincipalDep
from app.api.deps import SessionDep
from app.api.problems import CourseNotFound
from app.core.models import Course
from app.courses.registry import COURSE_PATTERN


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
