"""Storage models of LTI 1.3: platform registrations, the LMS courses (contexts) bound to ours,
the tool's key, logins in flight, launches, the score posts that carry grades back, and each LMS
course's roster (Names and Role Provisioning: app.lti.roster). Same metadata as app.core.models;
migrations 0002, 0009 and 0012."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.core.models import (
    DEFAULT_COURSE_ID,
    Base,
    JSONDocument,
    UTCDateTime,
    new_id,
    stored_enum,
    utcnow,
)
from app.outbox.models import OutboxMessage

# Lengths of the columns that hold a platform's user ids and URLs (launches refuse longer ones).
MAX_USER_ID = 255
MAX_URL = 2048
# Length of a context's id (longer ones are refused) and of its title and label (cut to it).
MAX_CONTEXT_TEXT = 255


class ContextPolicy(StrEnum):
    """What a platform's launch from an LMS course (context) bound to none of ours gets."""

    BOUND = "bound"  # refused: an operator binds contexts by hand (`autograder lti contexts`)
    OWN = "own"  # a new course of its own, bound to that context by its first launch


class LtiPlatform(Base):
    """An LMS that may launch the tool, added with `autograder lti add-platform`."""

    __tablename__ = "lti_platforms"
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # The course `autograder lti contexts bind` binds its contexts to when it names none (before
    # contexts, every launch's course; launches now go to their context's course, LtiContext).
    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", ondelete="CASCADE"), default=DEFAULT_COURSE_ID
    )
    context_policy: Mapped[ContextPolicy] = mapped_column(
        stored_enum(ContextPolicy), default=ContextPolicy.BOUND, server_default="bound"
    )
    issuer: Mapped[str] = mapped_column(String(255))
    client_id: Mapped[str] = mapped_column(String(255))
    # The deployment ids this registration accepts (a launch with another one is refused).
    deployment_ids: Mapped[list[str]] = mapped_column(JSONDocument)
    auth_login_url: Mapped[str] = mapped_column(String(MAX_URL))
    auth_token_url: Mapped[str] = mapped_column(String(MAX_URL))
    key_set_url: Mapped[str] = mapped_column(String(MAX_URL))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LtiContext(Base):
    """An LMS course a platform launches from (the launch's context claim), per deployment: bound
    to one of our courses, or seen and refused (`course_id` None). Its title and label are the
    last launch's, so an operator recognises it (`autograder lti contexts list`)."""

    __tablename__ = "lti_contexts"
    __table_args__ = (UniqueConstraint("platform_id", "deployment_id", "context_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    deployment_id: Mapped[str] = mapped_column(String(255))
    context_id: Mapped[str] = mapped_column(String(MAX_CONTEXT_TEXT))
    course_id: Mapped[int | None] = mapped_column(ForeignKey("courses.id", ondelete="SET NULL"))
    title: Mapped[str] = mapped_column(String(MAX_CONTEXT_TEXT), default="")
    label: Mapped[str] = mapped_column(String(MAX_CONTEXT_TEXT), default="")
    # Launches refused while it was bound to no course.
    refused_launches: Mapped[int] = mapped_column(Integer, default=0)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # None: never launched
    bound_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Where its roster is read (the latest launch's NRPS claim); None: no launch offered one.
    memberships_url: Mapped[str | None] = mapped_column(String(MAX_URL))


class LtiToolKey(Base):
    """The tool's RSA key: made once, on first need, and shared by every replica."""

    __tablename__ = "lti_tool_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # always 1: one key
    private_pem: Mapped[str] = mapped_column(Text)  # encrypted: app.lti.tool_key
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LtiLogin(Base):
    """One OIDC login in flight: its state and nonce. A launch consumes it once (`used_at`),
    which refuses a replayed id_token; its parameters restart the login in a new window when
    the browser withheld the state cookie."""

    __tablename__ = "lti_logins"

    state: Mapped[str] = mapped_column(String(64), primary_key=True)
    nonce: Mapped[str] = mapped_column(String(128), unique=True)
    login_params: Mapped[dict[str, str]] = mapped_column(JSONDocument)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class LtiLaunch(Base):
    """A validated resource-link launch: who, which exercise, and where the grade goes."""

    __tablename__ = "lti_launches"

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    deployment_id: Mapped[str] = mapped_column(String(255))
    # The context claim's id (None: a launch stored before contexts were recorded, migration 0009).
    context_id: Mapped[str | None] = mapped_column(String(MAX_CONTEXT_TEXT))
    user_id: Mapped[str] = mapped_column(String(MAX_USER_ID))  # the platform's `sub`
    exercise: Mapped[str] = mapped_column(String(100))
    # The AGS claim: the line item's URL and the scopes granted (none: no grade passback).
    lineitem_url: Mapped[str | None] = mapped_column(String(MAX_URL))
    ags_scopes: Mapped[list[str]] = mapped_column(JSONDocument)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LtiScorePost(OutboxMessage, Base):
    """A launched student's submission and the post of its score to the line item."""

    __tablename__ = "lti_score_posts"

    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), unique=True
    )
    launch_id: Mapped[str] = mapped_column(ForeignKey("lti_launches.id", ondelete="CASCADE"))


class MemberStatus(StrEnum):
    """A roster member's status, in the NRPS words (a member the LMS no longer lists: Deleted)."""

    ACTIVE = "Active"
    INACTIVE = "Inactive"
    DELETED = "Deleted"


class LtiRosterMember(Base):
    """One member of an LMS course's roster, as its latest sync read it."""

    __tablename__ = "lti_roster_members"
    __table_args__ = (UniqueConstraint("context_row", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    context_row: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(MAX_USER_ID))  # a launch's `sub`
    name: Mapped[str] = mapped_column(String(MAX_CONTEXT_TEXT), default="")
    roles: Mapped[list[str]] = mapped_column(JSONDocument)
    status: Mapped[MemberStatus] = mapped_column(stored_enum(MemberStatus))
    synced_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SyncReason(StrEnum):
    """Who asked for a roster sync."""

    STAFF = "staff"  # the course's staff (the staff API, the dashboard)
    LAUNCH = "launch"  # a launch that found the roster missing or stale


class LtiRosterSync(OutboxMessage, Base):
    """A read of an LMS course's roster, asked for by its staff or by a launch that found it
    missing or stale, sent by the outbox; `members` is what it read once delivered."""

    __tablename__ = "lti_roster_syncs"

    context_row: Mapped[int] = mapped_column(
        ForeignKey("lti_contexts.id", ondelete="CASCADE"), index=True
    )
    reason: Mapped[SyncReason] = mapped_column(stored_enum(SyncReason))
    members: Mapped[int | None] = mapped_column(Integer)
