"""The wire schemas of a course's roster (app.staff.roster_router): the members of its LMS
courses, and where each roster's sync stands."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.lti.models import MemberStatus, SyncReason
from app.lti.roster_view import Enrolled, Source
from app.outbox.models import OutboxStatus

_LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
EXAMPLE: dict[str, Any] = {
    "sources": [
        {
            "context_id": "course-v1:DL101",
            "title": "Deep learning",
            "label": "DL101",
            "offers_roster": True,
            "synced_at": "2026-12-06T09:00:02Z",
            "latest": {
                "status": "delivered",
                "reason": "launch",
                "attempts": 1,
                "members": 2,
                "error": None,
                "requested_at": "2026-12-06T09:00:00Z",
                "updated_at": "2026-12-06T09:00:02Z",
            },
        }
    ],
    "members": [
        {
            "student_id": "lti:1:8f3a",
            "user_id": "8f3a",
            "name": "Ada Lovelace",
            "roles": [_LIS + "Learner"],
            "status": "Active",
            "staff": False,
            "synced_at": "2026-12-06T09:00:02Z",
        },
        {
            "student_id": "lti:1:77c0",
            "user_id": "77c0",
            "name": "Tess Assistant",
            "roles": [_LIS.removesuffix("#") + "/Instructor#TeachingAssistant"],
            "status": "Active",
            "staff": True,
            "synced_at": "2026-12-06T09:00:02Z",
        },
    ],
}


class RosterSyncPublic(BaseModel):
    status: OutboxStatus = Field(description="pending (due or under way), delivered or failed")
    reason: SyncReason = Field(description="who asked: the course's staff, or a launch")
    attempts: int
    members: int | None = Field(description="members read, once delivered")
    error: str | None = Field(description="why the latest attempt failed")
    requested_at: datetime
    updated_at: datetime


class RosterSourcePublic(BaseModel):
    """An LMS course bound to the course."""

    context_id: str
    title: str
    label: str
    offers_roster: bool = Field(description="a launch named where its roster is read")
    synced_at: datetime | None = Field(description="when a sync last succeeded")
    latest: RosterSyncPublic | None

    @classmethod
    def of(cls, source: Source) -> RosterSourcePublic:
        context, sync = source.context, source.latest
        latest = None
        if sync is not None:
            latest = RosterSyncPublic(
                status=sync.status,
                reason=sync.reason,
                attempts=sync.attempts,
                members=sync.members,
                error=sync.last_error,
                requested_at=sync.created_at,
                updated_at=sync.updated_at,
            )
        return cls(
            context_id=context.context_id,
            title=context.title,
            label=context.label,
            offers_roster=context.memberships_url is not None,
            synced_at=source.synced_at,
            latest=latest,
        )


class RosterMemberPublic(BaseModel):
    student_id: str = Field(description="the id their launches' submissions get")
    user_id: str = Field(description="the LMS's id of the user")
    name: str
    roles: list[str]
    status: MemberStatus
    staff: bool = Field(description="their roles make them staff, as a launch's would")
    synced_at: datetime

    @classmethod
    def of(cls, enrolled: Enrolled) -> RosterMemberPublic:
        member = enrolled.member
        return cls(
            student_id=enrolled.student_id,
            user_id=member.user_id,
            name=member.name,
            roles=member.roles,
            status=member.status,
            staff=enrolled.staff,
            synced_at=member.synced_at,
        )


class CourseRoster(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [EXAMPLE]})

    sources: list[RosterSourcePublic]
    members: list[RosterMemberPublic]
