"""Each LMS course's roster (LTI Names and Role Provisioning), kept per LMS course (LtiContext).

    note_launch     a launch's hook: keeps where the roster is read (the NRPS claim) and, when
                    the stored roster is missing or stale, asks for a sync. The launch only writes
                    a row: the outbox reads the roster, never the launch's request.
    ask_sync        the staff's: a sync of every LMS course bound to the course
    roster_channel  how the outbox sends a due sync: an access token for MEMBERSHIPS_SCOPE from
                    the platform's token URL (pylti1p3, as the grade passback gets its own), every
                    page (app.lti.nrps), and the members stored: a member the LMS no longer lists
                    stays, Deleted, so the work of someone who left keeps its name

A roster is read at an address a launch named: app.core.callback_urls refuses internal ones,
except the hosts of the platform's own registered URLs (the operator chose them; the tool calls
its token and key URLs already) and AUTOGRADER_WEBHOOK_ALLOWED_HOSTS.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import httpx
from pylti1p3.service_connector import ServiceConnector
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.core.callback_urls import CallbackPolicy
from app.core.db import Database
from app.core.models import utcnow
from app.core.settings import AppSettings
from app.lti.adapters import http_session, lms_call
from app.lti.models import (
    MAX_URL,
    LtiContext,
    LtiPlatform,
    LtiRosterMember,
    LtiRosterSync,
    MemberStatus,
    SyncReason,
)
from app.lti.nrps import (
    MEMBERSHIPS_SCOPE,
    NRPS_CLAIM,
    Member,
    Pacing,
    RosterUnreadable,
    read_roster,
)
from app.lti.registrations import to_registration
from app.lti.tool_key import tool_key
from app.outbox.models import OutboxMessage, OutboxStatus
from app.outbox.sender import Channel, Retry, Undelivered

# A sync's claim: longer than a roster of thousands takes, pages waited out after a 429 included.
# A sender that dies mid-read leaves it due again after this.
_CLAIM_S = 900.0


class NoRosterService(Exception):
    """No LMS course bound to the course offered a roster: nothing to sync."""


def memberships_url(body: Mapping[str, object]) -> str | None:
    """The launch's NRPS memberships URL; None when the claim is absent or malformed (a roster
    is a convenience: the launch goes on without one)."""
    claim = body.get(NRPS_CLAIM)
    url = claim.get("context_memberships_url") if isinstance(claim, dict) else None
    if not isinstance(url, str) or len(url) > MAX_URL:
        return None
    return url if urlsplit(url).scheme in ("http", "https") else None


def note_launch(
    database: Database, settings: AppSettings, context_row: int, body: Mapping[str, object]
) -> None:
    """Keep the launch's memberships URL; ask for a sync when none is due and none was asked
    within `lti_roster_stale_s` (a failed one included: launches do not hammer a failing LMS)."""
    url = memberships_url(body)
    since = utcnow() - timedelta(seconds=settings.lti_roster_stale_s)
    with database.session() as session:
        context = session.get_one(LtiContext, context_row)
        if url is not None and context.memberships_url != url:
            context.memberships_url = url
        if context.memberships_url is not None and not _recent_sync(session, context_row, since):
            session.add(LtiRosterSync(context_row=context_row, reason=SyncReason.LAUNCH))


def _recent_sync(session: Session, context_row: int, since: datetime) -> bool:
    found = session.scalar(
        select(LtiRosterSync.id)
        .where(
            LtiRosterSync.context_row == context_row,
            or_(LtiRosterSync.status == OutboxStatus.PENDING, LtiRosterSync.created_at >= since),
        )
        .limit(1)
    )
    return found is not None


def ask_sync(session: Session, course_id: int) -> None:
    """A due sync of each LMS course bound to the course that offers a roster (one due already
    is not asked twice); raises NoRosterService when none offers one."""
    contexts = session.scalars(
        select(LtiContext.id).where(
            LtiContext.course_id == course_id, LtiContext.memberships_url.is_not(None)
        )
    ).all()
    if not contexts:
        raise NoRosterService(
            "no LMS course bound to this course has offered a roster yet: it comes with a "
            "launch from the LMS (Names and Role Provisioning enabled for the tool)"
        )
    for context_row in contexts:
        due = select(LtiRosterSync.id).where(
            LtiRosterSync.context_row == context_row,
            LtiRosterSync.status == OutboxStatus.PENDING,
        )
        if session.scalar(due.limit(1)) is None:
            session.add(LtiRosterSync(context_row=context_row, reason=SyncReason.STAFF))
    session.flush()


def store(session: Session, context_row: int, members: list[Member], now: datetime) -> None:
    """The roster as read: listed members added or updated, the others marked Deleted."""
    stored = {
        row.user_id: row
        for row in session.scalars(
            select(LtiRosterMember).where(LtiRosterMember.context_row == context_row)
        )
    }
    for member in {member.user_id: member for member in members}.values():
        row = stored.pop(member.user_id, None)
        if row is None:
            row = LtiRosterMember(context_row=context_row, user_id=member.user_id)
            session.add(row)
        row.name, row.roles, row.status = member.name, list(member.roles), member.status
        row.synced_at = now
    for gone in stored.values():
        if gone.status is not MemberStatus.DELETED:
            gone.status, gone.synced_at = MemberStatus.DELETED, now


def _policy(settings: AppSettings, platform: LtiPlatform) -> CallbackPolicy:
    registered = (platform.auth_token_url, platform.auth_login_url, platform.key_set_url)
    hosts = {urlsplit(url).hostname for url in registered}
    allowed = [*settings.webhook_allowed_hosts, *(host for host in hosts if host)]
    return CallbackPolicy(allowed, calls="roster reads")


def sync(database: Database, settings: AppSettings, client: httpx.Client, sync_id: int) -> None:
    """Read one LMS course's roster and store it; raise what went wrong."""
    with database.session() as session:
        context_row = session.get_one(LtiRosterSync, sync_id).context_row
        context = session.get_one(LtiContext, context_row)
        platform = session.get_one(LtiPlatform, context.platform_id)
        url = context.memberships_url
    if url is None:
        raise Undelivered("the LMS course offers no roster", permanent=True)
    connector = ServiceConnector(
        to_registration(platform, tool_key(database, settings)), requests_session=http_session()
    )
    token = connector.get_access_token([MEMBERSHIPS_SCOPE])
    pacing = Pacing(max_wait_s=settings.lti_roster_max_wait_s)
    members = read_roster(client, _policy(settings, platform), url, token, pacing)
    with database.session() as session:
        store(session, context_row, members, utcnow())
        session.get_one(LtiRosterSync, sync_id).members = len(members)


def roster_channel(database: Database, settings: AppSettings, client: httpx.Client) -> Channel:
    """Roster syncs as the outbox sends them."""

    def send(sync_id: int) -> None:
        try:
            with lms_call("token"):
                sync(database, settings, client, sync_id)
        except RosterUnreadable as failure:
            error, status, permanent = str(failure), failure.status_code, failure.permanent
            raise Undelivered(error, status, permanent=permanent) from None

    retry = Retry(
        settings.lti_roster_max_attempts,
        settings.lti_score_backoff_s,
        settings.webhook_backoff_max_s,
    )
    return Channel("roster sync", LtiRosterSync, send, retry, _CLAIM_S, receiver=_receiver)


def _receiver(message: OutboxMessage) -> str:
    """One sync of an LMS course at a time."""
    assert isinstance(message, LtiRosterSync)
    return f"roster {message.context_row}"
