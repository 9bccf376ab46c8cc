"""Migration 0012 (the LMS rosters) on a database with a bound LMS course, on SQLite and
PostgreSQL: the course keeps its binding, offers no roster until a launch names one, and takes
a roster and its sync."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import MetaData, Table

from app.core.db import Database, migrate
from app.lti import roster
from app.lti.models import LtiContext, LtiRosterSync, MemberStatus, SyncReason
from app.lti.nrps import Member
from app.lti.roster_view import enrolled_students, sources


def bound_before_rosters(database: Database) -> None:
    """What 0011 held: a platform whose LMS course 42 is bound to the course ml-101."""
    now = datetime.now(UTC)
    tables = MetaData()
    courses, platforms, contexts = (
        Table(name, tables, autoload_with=database.engine)
        for name in ("courses", "lti_platforms", "lti_contexts")
    )
    with database.engine.begin() as connection:
        connection.execute(courses.insert().values(id=2, slug="ml-101", created_at=now))
        connection.execute(
            platforms.insert().values(
                id=1, course_id=2, issuer="https://moodle.test", client_id="c1",
                deployment_ids=["1"], auth_login_url="https://moodle.test/auth",
                auth_token_url="https://moodle.test/token", key_set_url="https://moodle.test/jwks",
                created_at=now, context_policy="bound",
            )
        )  # fmt: skip
        connection.execute(
            contexts.insert().values(
                id=5, platform_id=1, deployment_id="1", context_id="42", course_id=2,
                title="Deep learning", label="DL101", refused_launches=0, bound_at=now,
            )
        )  # fmt: skip


def test_a_bound_lms_course_takes_a_roster_after_the_migration(database_url: str) -> None:
    database = Database.from_url(database_url)
    try:
        migrate(database.engine, "0011")
        bound_before_rosters(database)
        migrate(database.engine)
        with database.session() as session:
            context = session.get_one(LtiContext, 5)
            assert (context.course_id, context.memberships_url) == (2, None)
            # No launch named a roster yet: staff are told so, nothing is synced.
            (source,) = sources(session, 2)
            assert (source.latest, source.synced_at) == (None, None)
            context.memberships_url = "https://moodle.test/nrps/42"
            session.add(LtiRosterSync(context_row=5, reason=SyncReason.STAFF))
            learner = ("http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",)
            member = Member("sub-1", "Ada", learner, MemberStatus.ACTIVE)
            roster.store(session, 5, [member], datetime.now(UTC))
        with database.session() as session:
            assert enrolled_students(session, 2) == {"lti:1:sub-1": "Ada"}
    finally:
        database.close()
