"""Migration 0009 on a database that already graded LMS students, on SQLite and PostgreSQL:
nothing graded is lost or moved, no binding is guessed (past launches never recorded their LMS
course), and `autograder lti contexts list` has what the operator needs to bind it."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import MetaData, Table, select

from app.core.db import Database, migrate
from app.core.models import Submission
from app.lti.contexts import bind, unbound_platforms
from app.lti.models import ContextPolicy, LtiContext, LtiLaunch, LtiPlatform, LtiScorePost

SUBMISSION = "01JD8Z6Q3M9V7N4K2P5R8T1W0X"
LAUNCH = "01JD8Z6Q3M9V7N4K2P5R8T1W0Y"
LINEITEM = "https://moodle.test/mod/lti/services.php/42/lineitems/7/lineitem?type_id=1"


def graded_before_contexts(database: Database) -> None:
    """What 0008 held after a launched student was graded in the platform's course ml-101."""
    now = datetime.now(UTC)
    tables = MetaData()
    courses, platforms, launches, submissions, posts = (
        Table(name, tables, autoload_with=database.engine)
        for name in ("courses", "lti_platforms", "lti_launches", "submissions", "lti_score_posts")
    )
    with database.engine.begin() as connection:
        connection.execute(courses.insert().values(id=2, slug="ml-101", created_at=now))
        connection.execute(
            platforms.insert().values(
                id=1, course_id=2, issuer="https://moodle.test", client_id="c1",
                deployment_ids=["1"], auth_login_url="https://moodle.test/auth",
                auth_token_url="https://moodle.test/token", key_set_url="https://moodle.test/jwks",
                created_at=now,
            )
        )  # fmt: skip
        connection.execute(
            launches.insert().values(
                id=LAUNCH, platform_id=1, deployment_id="1", user_id="sub-1", exercise="e",
                lineitem_url=LINEITEM, ags_scopes=["score"], created_at=now,
            )
        )  # fmt: skip
        connection.execute(
            submissions.insert().values(
                id=SUBMISSION, course_id=2, exercise="e", student_id="lti:1:sub-1", source="s",
                status="done", attempts=1, created_at=now, charged=True,
            )
        )  # fmt: skip
        connection.execute(
            posts.insert().values(
                submission_id=SUBMISSION, launch_id=LAUNCH, status="delivered", attempts=1,
                next_attempt_at=now, created_at=now, updated_at=now,
            )
        )  # fmt: skip


def test_lti_data_graded_before_contexts_stays_where_it_was(database_url: str) -> None:
    database = Database.from_url(database_url)
    try:
        migrate(database.engine, "0008")
        graded_before_contexts(database)
        migrate(database.engine)
        with database.session() as session:
            submission = session.get_one(Submission, SUBMISSION)
            assert (submission.course_id, submission.student_id) == (2, "lti:1:sub-1")
            launch = session.get_one(LtiLaunch, LAUNCH)
            assert (launch.context_id, launch.lineitem_url) == (None, LINEITEM)
            (post,) = session.scalars(select(LtiScorePost))
            assert (post.submission_id, post.launch_id) == (SUBMISSION, LAUNCH)
            platform = session.get_one(LtiPlatform, 1)
            assert (platform.course_id, platform.context_policy) == (2, ContextPolicy.BOUND)
            # Nothing says which LMS course the launches came from: no binding is guessed.
            assert list(session.scalars(select(LtiContext))) == []
            (waiting,) = unbound_platforms(session)
            assert (waiting.course, waiting.earlier_launches) == ("ml-101", 1)
            assert waiting.last_lineitem_url == LINEITEM  # its path names Moodle's course 42
            # The operator binds it; the platform then waits for nothing.
            row, course = bind(session, 1, "42")
            assert (row.deployment_id, course.slug) == ("1", "ml-101")
            assert unbound_platforms(session) == []
    finally:
        database.close()
