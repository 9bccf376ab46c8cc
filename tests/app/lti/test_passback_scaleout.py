"""Grade passback on the scale-out path, for real: a worker grades a launched student's
submission, the API posts the score, and an LMS that is down (its score endpoint fails) gets
the score once it recovers, from the API started again after a SIGKILL. Processes on the local
Redis and PostgreSQL, the platform on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from app_support import CORRECT, SEED
from platform_support import DEPLOYMENT_ID, Platform, register_in, serve_platform
from scaleout_support import redis_namespace
from sqlalchemy import select
from stack_support import Stack, running_stack, stack_env, wait_for

from app.core.db import Database
from app.lti.models import LtiLaunch, LtiScorePost
from app.lti.passback import SCORE_SCOPE, track
from app.outbox.models import OutboxStatus

pytestmark = pytest.mark.slow


@pytest.fixture
def stack(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> Iterator[Stack]:
    data_dir = tmp_path_factory.mktemp("passback")
    with redis_namespace() as redis_ns:
        env = stack_env(data_dir, redis_ns, postgres_url, AUTOGRADER_LTI_SCORE_BACKOFF_S="2")
        with running_stack(data_dir, env, redis_ns, workers=1) as stack:
            yield stack


@pytest.fixture
def database(postgres_url: str) -> Iterator[Database]:
    database = Database.from_url(postgres_url)
    yield database
    database.close()


def launched(database: Database, platform: Platform) -> str:
    """A launch as the tool stores it after the platform launched student-42 into the seed."""
    platform_id = register_in(database, platform)
    with database.session() as session:
        launch = LtiLaunch(
            platform_id=platform_id,
            deployment_id=DEPLOYMENT_ID,
            user_id="student-42",
            exercise=SEED,
            lineitem_url=platform.lineitem_url(),
            ags_scopes=[SCORE_SCOPE],
        )
        session.add(launch)
        session.flush()
        return launch.id


def score_post(database: Database) -> LtiScorePost | None:
    with database.session() as session:
        return session.scalars(select(LtiScorePost)).one_or_none()


def test_an_lms_that_is_down_gets_the_score_from_the_restarted_api(
    stack: Stack, database: Database
) -> None:
    jwks = stack.http.get("/lti/jwks").json()
    with serve_platform(jwks) as platform:
        platform.score_failures = [503]
        launch_id = launched(database, platform)
        submission_id = stack.http.post(
            "/v1/submissions", json={"exercise": SEED, "source": CORRECT}
        ).json()["id"]
        with database.session() as session:
            track(session, submission_id, launch_id)  # as /lti/submissions does

        def first_failed() -> bool:
            post = score_post(database)
            return post is not None and (post.attempts, post.last_status_code) == (1, 503)

        wait_for("the worker grades it and the first post fails", first_failed, 120)
        stack.kill_api()  # long before its 2 s backoff ends
        assert platform.scores == []
        stack.start_api()
        wait_for("the restarted API posts the score", lambda: len(platform.scores) == 1)
    (score,) = platform.scores
    assert score["userId"] == "student-42"
    assert score["scoreGiven"] == score["scoreMaximum"] > 0
    post = score_post(database)
    assert post is not None
    assert (post.status, post.attempts) == (OutboxStatus.DELIVERED, 2)
