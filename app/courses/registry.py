"""Courses: named by a slug, made on first use (by `keys create` or `lti add-platform`)."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.commands import CommandRefused
from app.core.models import Course

COURSE_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")


def course_named(session: Session, slug: str) -> Course:
    """The course with this slug, made if there is none yet."""
    if not COURSE_PATTERN.fullmatch(slug):
        raise CommandRefused(
            f"a course is named in lowercase letters, digits and '-', not {slug!r}"
        )
    course = session.scalars(select(Course).where(Course.slug == slug)).one_or_none()
    if course is None:
        course = Course(slug=slug)
        session.add(course)
        session.flush()
    return course


def existing_course(session: Session, slug: str) -> Course:
    """The course with this slug; refused if there is none (a typo must not make a course)."""
    course = session.scalars(select(Course).where(Course.slug == slug)).one_or_none()
    if course is None:
        raise CommandRefused(f"there is no course {slug!r}; `autograder keys list` shows courses")
    return course
