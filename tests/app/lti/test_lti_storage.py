"""What a client or a platform sends that the tool stores is bounded, on SQLite and on
PostgreSQL (where a value longer than its column fails the insert): logins are small, few per
address, short-lived and purged; a launch's user id, line item and grade service claim are
checked, and a malformed one is a page that says so, never a 500; so is the LMS course (context)
it comes from, recorded as the operator will read it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse

import pytest
from app_support import SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient
from platform_support import CLIENT_ID, ISSUER, SCORE_SCOPE, Platform, post_launch, start_launch
from scaleout_support import redis_namespace
from sqlalchemy import func, select
from tool_support import refusal_reason, registered_platform, serve_tool

from app.core.models import utcnow
from app.lti.claims import AGS_CLAIM, CONTEXT_CLAIM
from app.lti.models import LtiContext, LtiLaunch, LtiLogin
from grader.runner import Grader

pytestmark = pytest.mark.slow

LOGINS_PER_MINUTE = 3
LOGIN_TTL_S = 120


@pytest.fixture
def tool(make_settings: SettingsFactory, grader: Grader, database_url: str) -> Iterator[TestClient]:
    settings = make_settings(
        database_url=database_url,
        lti_login_rate_per_client=LOGINS_PER_MINUTE,
        lti_login_ttl_s=LOGIN_TTL_S,
    )
    with serve_tool(settings, grader) as client:
        yield client


@pytest.fixture
def platform(tool: TestClient) -> Iterator[Platform]:
    with registered_platform(tool) as served:
        yield served


def logins(tool: TestClient) -> list[LtiLogin]:
    with tool.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        return list(session.scalars(select(LtiLogin)))


def launches(tool: TestClient) -> int:
    with tool.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        return session.scalar(select(func.count()).select_from(LtiLaunch)) or 0


def login(tool: TestClient, platform: Platform) -> Any:
    url = urlparse(platform.login_url("https://testserver/lti/login", "hint"))
    return tool.get(f"{url.path}?{url.query}", follow_redirects=False)


@pytest.mark.parametrize("name", ["login_hint", "lti_message_hint", "target_link_uri"])
def test_an_oversized_login_parameter_is_refused_and_not_stored(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    params = {
        "iss": ISSUER,
        "client_id": CLIENT_ID,
        "login_hint": "student-42",
        "target_link_uri": "https://testserver/lti/launch",
        name: "x" * 1_000_000,  # under the form parser's own limit of a field (1 MiB)
    }
    answer = tool.post("/lti/login", data=params, follow_redirects=False)
    reason = refusal_reason(answer, caplog, 400)
    assert reason == f"the login's {name} is longer than 4096 characters"
    assert logins(tool) == []


def test_a_login_lives_minutes_and_expired_ones_are_purged(
    tool: TestClient, platform: Platform
) -> None:
    with tool.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        session.add(
            LtiLogin(
                state="expired",
                nonce="expired",
                login_params={"login_hint": "x" * 4096},
                expires_at=utcnow() - timedelta(minutes=1),
            )
        )
    answer = login(tool, platform)
    assert answer.status_code == 302
    assert f"max-age={LOGIN_TTL_S}" in answer.headers["set-cookie"].lower()
    (row,) = logins(tool)
    assert row.state != "expired"
    lifetime = row.expires_at - utcnow()
    assert timedelta(seconds=LOGIN_TTL_S - 10) < lifetime <= timedelta(seconds=LOGIN_TTL_S)


def test_logins_are_limited_per_client_address(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(LOGINS_PER_MINUTE):
        assert login(tool, platform).status_code == 302
    refused = login(tool, platform)
    assert "started too many launches" in refusal_reason(refused, caplog, 429)
    assert "Wait a minute" in refused.text
    assert 0 < int(refused.headers["retry-after"]) <= 60 / LOGINS_PER_MINUTE + 1
    assert len(logins(tool)) == LOGINS_PER_MINUTE


def test_replicas_on_redis_share_each_client_address_s_logins(
    make_settings: SettingsFactory, grader: Grader, postgres_url: str
) -> None:
    with redis_namespace() as ns, ExitStack() as replicas:
        settings = make_settings(
            database_url=postgres_url,
            broker_url=ns.url,
            redis_prefix=ns.prefix,
            lti_login_rate_per_client=LOGINS_PER_MINUTE,
        )
        first, second = (replicas.enter_context(serve_tool(settings, grader)) for _ in range(2))
        platform = replicas.enter_context(registered_platform(first))
        answers = [login(replica, platform) for replica in (first, second, first, second)]
        assert [answer.status_code for answer in answers] == [302] * LOGINS_PER_MINUTE + [429]
        assert any(key.startswith(f"{ns.prefix}rate:") for key in ns.stored_keys())


def refused_launch(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture, expected: str
) -> None:
    platform.next_launch.exercise = SEED
    answer = post_launch(tool, start_launch(tool, platform))
    assert expected in refusal_reason(answer, caplog, 400)
    assert launches(tool) == 0


@pytest.mark.parametrize(
    "ags",
    [
        "not an object",
        {"scope": SCORE_SCOPE, "lineitem": "https://lms.test/lineitems/1"},
        {"scope": [SCORE_SCOPE, 7], "lineitem": "https://lms.test/lineitems/1"},
        {"scope": [SCORE_SCOPE], "lineitem": 5},
        {"scope": [SCORE_SCOPE], "lineitem": "https://lms.test/" + "x" * 2048},
    ],
)
def test_a_malformed_grade_service_claim_is_refused_with_a_page(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture, ags: Any
) -> None:
    platform.next_launch.claims = {AGS_CLAIM: ags}
    refused_launch(tool, platform, caplog, "the platform sent it malformed")


def test_an_overlong_user_id_is_refused_with_a_page(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.next_launch.user_id = "u" * 256
    refused_launch(
        tool, platform, caplog, "user id (sub) is not a string of at most 255 characters"
    )


def test_a_user_id_and_line_item_as_long_as_their_columns_are_stored(
    tool: TestClient, platform: Platform
) -> None:
    platform.next_launch.user_id = "u" * 255
    lineitem = "https://lms.test/" + "x" * (2048 - len("https://lms.test/"))
    platform.next_launch.claims = {AGS_CLAIM: {"scope": [SCORE_SCOPE], "lineitem": lineitem}}
    platform.next_launch.exercise = SEED
    answer = post_launch(tool, start_launch(tool, platform))
    assert answer.status_code == 303, answer.text
    assert launches(tool) == 1


@pytest.mark.parametrize(
    "context",
    [
        "not an object",
        {"title": "no id"},
        {"id": 7},
        {"id": ""},
        {"id": "c" * 256},
        {"id": "course-1\x1b]8;;https://evil.test\x07"},
    ],
)
def test_a_malformed_lms_course_is_refused_with_a_page(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture, context: Any
) -> None:
    platform.next_launch.claims = {CONTEXT_CLAIM: context}
    refused_launch(tool, platform, caplog, "the platform sent it malformed")


def test_a_launch_that_names_no_lms_course_is_refused_with_a_page(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.next_launch.claims = {CONTEXT_CLAIM: None}
    platform.next_launch.exercise = SEED
    answer = post_launch(tool, start_launch(tool, platform))
    assert "names no LMS course" in refusal_reason(answer, caplog, 400)


def test_an_lms_course_is_recorded_printable_and_as_long_as_its_columns(
    tool: TestClient, platform: Platform
) -> None:
    """What the LMS's instructors wrote reaches an operator's terminal: no control character."""
    platform.next_launch.exercise = SEED
    platform.next_launch.context_id = "c" * 255
    platform.next_launch.context_title = "Deep\x1b[2J learning\t" + "t" * 1000
    platform.next_launch.context_label = "DL\n101"
    assert post_launch(tool, start_launch(tool, platform)).status_code == 403  # bound to none
    with tool.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        seen = session.scalars(select(LtiContext).where(LtiContext.course_id.is_(None))).one()
    assert seen.context_id == "c" * 255
    assert seen.title == ("Deep?[2J learning?" + "t" * 1000)[:255]
    assert seen.label == "DL?101"
    assert seen.refused_launches == 1


def test_beyond_loopback_the_tools_urls_come_from_the_public_url_not_the_host(
    make_client: ClientFactory, make_settings: SettingsFactory, caplog: pytest.LogCaptureFixture
) -> None:
    login = {"iss": "https://lms.test", "login_hint": "h", "target_link_uri": "https://x/"}
    unset = make_client(make_settings(host="0.0.0.0", allowed_hosts="testserver"))
    refused = unset.post("/lti/login", data=login)
    assert "set AUTOGRADER_PUBLIC_URL" in refusal_reason(refused, caplog, 503)
    public = "https://grader.example.edu"
    configured = make_client(make_settings(host="0.0.0.0", public_url=public))
    assert configured.post("/lti/login", data=login).status_code != 503
    config = configured.get("/lti/canvas.json").json()  # asked as testserver
    assert config["target_link_uri"] == f"{public}/lti/launch"
