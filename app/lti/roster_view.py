"""A course's rosters as its staff read them: the members of every LMS course bound to it, under
the student ids their launches get, and where each roster's sync stands.

A member is staff when their roster roles make them so, read as a launch's roles are
(app.lti.roles): staff are listed in the roster, never among the students to grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.lti.claims import student_id
from app.lti.models import LtiContext, LtiRosterMember, LtiRosterSync, MemberStatus
from app.lti.roles import holds_staff_role
from app.outbox.models import OutboxStatus


@dataclass(frozen=True)
class Enrolled:
    student_id: str
    member: LtiRosterMember
    staff: bool


def members(session: Session, course_id: int) -> list[Enrolled]:
    """Every roster member of the course's LMS courses, by name then id."""
    rows = session.execute(
        select(LtiRosterMember, LtiContext.platform_id)
        .join(LtiContext, LtiContext.id == LtiRosterMember.context_row)
        .where(LtiContext.course_id == course_id)
        .order_by(LtiRosterMember.name, LtiRosterMember.user_id)
    )
    return [
        Enrolled(student_id(platform_id, row.user_id), row, holds_staff_role(row.roles))
        for row, platform_id in rows
    ]


def enrolled_students(session: Session, course_id: int) -> dict[str, str]:
    """The course's active students (staff left out), student id to name."""
    return {
        one.student_id: one.member.name
        for one in members(session, course_id)
        if one.member.status is MemberStatus.ACTIVE and not one.staff
    }


@dataclass(frozen=True)
class Source:
    """An LMS course bound to the course: its latest sync, and when a sync last succeeded."""

    context: LtiContext
    latest: LtiRosterSync | None
    synced_at: datetime | None


def sources(session: Session, course_id: int) -> list[Source]:
    contexts = session.scalars(
        select(LtiContext).where(LtiContext.course_id == course_id).order_by(LtiContext.id)
    )
    return [_source(session, context) for context in contexts]


def _source(session: Session, context: LtiContext) -> Source:
    of_context = select(LtiRosterSync).where(LtiRosterSync.context_row == context.id)
    latest = session.scalar(of_context.order_by(LtiRosterSync.id.desc()).limit(1))
    delivered = session.scalar(
        select(LtiRosterSync.updated_at)
        .where(
            LtiRosterSync.context_row == context.id,
            LtiRosterSync.status == OutboxStatus.DELIVERED,
        )
        .order_by(LtiRosterSync.id.desc())
        .limit(1)
    )
    return Source(context, latest, delivered)
