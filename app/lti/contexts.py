"""Which of our courses a launch belongs to: the one bound to the LMS course it comes from (the
platform, deployment and context of the launch: app.lti.models.LtiContext), never the
platform's by default.

    course_of_launch  the launch's course. An LMS course bound to none is recorded (seen, with its
                      title and label, for `autograder lti contexts list`) and, as its platform's
                      policy says, refused (`bound`) or bound to a new course of its own (`own`).
    bind, unbind      the operator's hand (`autograder lti contexts bind|unbind`, app.lti.commands)
    listing           every LMS course seen or bound (`autograder lti contexts list`), and the
                      platforms that bind none (after upgrading, each of them: docs/lms.md)

A launch never binds to an existing course: wherever the tool is installed above course level (a
Moodle site tool, a Canvas account's key), any Instructor of any LMS course can launch it, deep
linking included. Only the operator knows which LMS course is whose.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.commands import CommandRefused
from app.core.db import Database
from app.core.models import Course, utcnow
from app.courses.registry import course_named
from app.lti.claims import LmsCourse
from app.lti.models import ContextPolicy, LtiContext, LtiLaunch, LtiPlatform
from app.lti.pages import LaunchRefused, Remedy

# The parts of a course's slug made for an LMS course: the LMS's host, the course's label.
_SLUG_PART = 40


@dataclass(frozen=True)
class Binding:
    """A launch's LMS course (its row in lti_contexts) and the course of ours bound to it."""

    context_row: int
    course_id: int


def course_of_launch(database: Database, platform: LtiPlatform, lms: LmsCourse) -> Binding:
    """The course bound to the launch's LMS course; refused if there is none."""
    row_id = _context_row(database, platform.id, lms)
    now = utcnow()
    with database.session() as session:
        # The write first: it holds the row (PostgreSQL) or the database (SQLite) to the commit,
        # so of two first launches of one LMS course the second sees the first one's course.
        session.execute(
            update(LtiContext)
            .where(LtiContext.id == row_id)
            .values(title=lms.title, label=lms.label, last_seen_at=now)
        )
        row = session.get_one(LtiContext, row_id)
        if row.course_id is None and platform.context_policy is ContextPolicy.OWN:
            row.course_id = _own_course(session, platform, lms, row_id).id
            row.bound_at = now
        if row.course_id is None:
            row.refused_launches += 1
        course_id = row.course_id
    if course_id is None:
        raise LaunchRefused(
            f"the LMS course {lms.title!r} (label {lms.label!r}, context {lms.context_id!r}, "
            f"deployment {lms.deployment_id!r}) of platform {platform.id} is bound to none of "
            "this autograder's courses: `autograder lti contexts list` shows it, "
            "`autograder lti contexts bind` binds it",
            403,
            remedy=Remedy.NOT_LINKED,
        )
    return Binding(row_id, course_id)


def _find(session: Session, platform_id: int, deployment_id: str, context_id: str) -> int | None:
    return session.scalar(
        select(LtiContext.id).where(
            LtiContext.platform_id == platform_id,
            LtiContext.deployment_id == deployment_id,
            LtiContext.context_id == context_id,
        )
    )


def _context_row(database: Database, platform_id: int, lms: LmsCourse) -> int:
    """The id of the LMS course's row, stored on its first launch."""
    with database.session() as session:
        found = _find(session, platform_id, lms.deployment_id, lms.context_id)
    if found is not None:
        return found
    try:
        with database.session() as session:
            row = LtiContext(
                platform_id=platform_id, deployment_id=lms.deployment_id, context_id=lms.context_id
            )
            session.add(row)
            session.flush()
            return row.id
    except IntegrityError:  # a concurrent first launch stored it
        with database.session() as session:
            found = _find(session, platform_id, lms.deployment_id, lms.context_id)
        assert found is not None
        return found


def _slug_part(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower())[:_SLUG_PART].strip("-")


def _own_course(session: Session, platform: LtiPlatform, lms: LmsCourse, row_id: int) -> Course:
    """A new course for an LMS course, named from the LMS's host, the course's label and its
    row (`moodle-school-edu-dl101-7`); never an existing one, whatever it is called."""
    host = urlsplit(platform.issuer).hostname or "lms"
    parts = (_slug_part(host), _slug_part(lms.label or lms.title), str(row_id))
    base = "-".join(part for part in parts if part)
    slug, taken = base, 1
    while session.scalar(select(Course.id).where(Course.slug == slug)) is not None:
        taken += 1
        slug = f"{base}-{taken}"
    course = Course(slug=slug)
    session.add(course)
    session.flush()
    return course


def _platform(session: Session, platform_id: int) -> LtiPlatform:
    platform = session.get(LtiPlatform, platform_id)
    if platform is None:
        raise CommandRefused(f"no platform has id {platform_id}; `autograder lti platforms list`")
    return platform


def _deployment(platform: LtiPlatform, deployment_id: str | None) -> str:
    """The deployment named, or the platform's only one."""
    if deployment_id is None and len(platform.deployment_ids) == 1:
        return platform.deployment_ids[0]
    if deployment_id not in platform.deployment_ids:
        raise CommandRefused(
            f"name one of platform {platform.id}'s deployments with --deployment: "
            f"{', '.join(platform.deployment_ids)}"
        )
    return deployment_id


def _context(
    session: Session, platform: LtiPlatform, deployment_id: str, context_id: str
) -> LtiContext | None:
    row_id = _find(session, platform.id, deployment_id, context_id)
    return None if row_id is None else session.get(LtiContext, row_id)


def bind(
    session: Session,
    platform_id: int,
    context_id: str,
    *,
    deployment_id: str | None = None,
    course: str | None = None,
) -> tuple[LtiContext, Course]:
    """Bind an LMS course (seen already, or not yet) to `course`, or to the platform's."""
    platform = _platform(session, platform_id)
    deployment = _deployment(platform, deployment_id)
    if course is None:
        target = session.get_one(Course, platform.course_id)
    else:
        target = course_named(session, course)
    row = _context(session, platform, deployment, context_id)
    if row is None:
        row = LtiContext(platform_id=platform.id, deployment_id=deployment, context_id=context_id)
        session.add(row)
    elif row.course_id not in (None, target.id):
        bound = session.get_one(Course, row.course_id)
        raise CommandRefused(
            f"context {context_id!r} is bound to the course {bound.slug!r}; unbind it first "
            "(the work done there stays there)"
        )
    row.course_id = target.id
    row.bound_at = row.bound_at or utcnow()
    session.flush()
    return row, target


def unbind(
    session: Session, platform_id: int, context_id: str, *, deployment_id: str | None = None
) -> tuple[LtiContext, Course]:
    """Unbind an LMS course: its launches are refused again; its course keeps its work."""
    platform = _platform(session, platform_id)
    deployment = _deployment(platform, deployment_id)
    row = _context(session, platform, deployment, context_id)
    if row is None or row.course_id is None:
        raise CommandRefused(
            f"context {context_id!r} of platform {platform_id} is bound to no course"
        )
    course = session.get_one(Course, row.course_id)
    row.course_id = None
    row.bound_at = None
    return row, course


@dataclass(frozen=True)
class ContextLine:
    """One LMS course in `autograder lti contexts list`."""

    row: LtiContext
    course: str | None  # the bound course's slug


def listing(session: Session, platform_id: int | None = None) -> list[ContextLine]:
    """Every LMS course seen or bound, by platform, deployment and first sight."""
    query = (
        select(LtiContext, Course.slug)
        .outerjoin(Course, Course.id == LtiContext.course_id)
        .order_by(LtiContext.platform_id, LtiContext.deployment_id, LtiContext.id)
    )
    if platform_id is not None:
        query = query.where(LtiContext.platform_id == platform_id)
    return [ContextLine(row, slug) for row, slug in session.execute(query)]


@dataclass(frozen=True)
class Unbound:
    """A platform whose launches are all refused: it binds no LMS course, by hand or its own."""

    platform: LtiPlatform
    course: str  # the course `bind` binds to unless told otherwise
    earlier_launches: int  # launches stored before contexts were recorded (migration 0009)
    last_lineitem_url: str | None  # the latest of them; its path names the LMS course


def unbound_platforms(session: Session) -> list[Unbound]:
    bound = select(LtiContext.platform_id).where(LtiContext.course_id.is_not(None))
    platforms = session.scalars(
        select(LtiPlatform)
        .where(LtiPlatform.context_policy == ContextPolicy.BOUND, LtiPlatform.id.not_in(bound))
        .order_by(LtiPlatform.id)
    )
    return [_unbound(session, platform) for platform in platforms]


def _unbound(session: Session, platform: LtiPlatform) -> Unbound:
    earlier = (LtiLaunch.platform_id == platform.id) & LtiLaunch.context_id.is_(None)
    count = session.scalar(select(func.count()).select_from(LtiLaunch).where(earlier)) or 0
    last = session.scalar(
        select(LtiLaunch.lineitem_url)
        .where(earlier, LtiLaunch.lineitem_url.is_not(None))
        .order_by(LtiLaunch.id.desc())
        .limit(1)
    )
    course = session.get_one(Course, platform.course_id)
    return Unbound(platform, course.slug, count, last)
