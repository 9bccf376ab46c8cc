"""LTI 1.3 end to end against `lti1p3platform` as the LMS: launch → submit → grade → the score
in the platform's gradebook; the deep-linking round trip; and the refusals (a tampered
signature, a replayed launch, a missing state cookie, an id_token without expiry or for another
client, a deep-linking return URL that is not https), each a clear page. What the tool stores
from a login or a launch is bounded: test_lti_storage.py."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import httpx
import jwt
import pytest
from app_support import CORRECT, MISSING_SCALING, SEED, SettingsFactory, wait_until
from fastapi.testclient import TestClient
from platform_support import (
    CLIENT_ID,
    CONTEXT_ID,
    ISSUER,
    NextLaunch,
    Platform,
    post_launch,
    start_launch,
)
from sqlalchemy import select
from tool_support import launch_student, refusal_reason, registered_platform, serve_tool

from app.access.api_keys import create_key
from app.core.models import Role
from app.lti.contexts import bind, unbind
from app.lti.models import LtiScorePost
from app.outbox.models import OutboxStatus
from grader.runner import Grader

pytestmark = pytest.mark.slow  # two servers and real HTTP between them


@pytest.fixture
def tool(make_settings: SettingsFactory, grader: Grader) -> Iterator[TestClient]:
    with serve_tool(make_settings(lti_score_backoff_s=0.05), grader) as client:
        yield client


@pytest.fixture
def platform(tool: TestClient) -> Iterator[Platform]:
    with registered_platform(tool) as served:
        yield served


def score_posts(tool: TestClient) -> list[LtiScorePost]:
    api = tool.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        return list(session.scalars(select(LtiScorePost)))


def test_a_launched_students_grade_lands_in_the_platforms_gradebook(
    tool: TestClient, platform: Platform
) -> None:
    token = launch_student(tool, platform)
    accepted = tool.post(
        "/lti/submissions", json={"source": CORRECT}, headers={"Authorization": f"Bearer {token}"}
    )
    assert accepted.status_code == 202, accepted.text
    wait_until(lambda: len(platform.scores) == 1)
    (score,) = platform.scores
    assert score["lineitem"] == "1"
    assert score["userId"] == "student-42"
    assert score["scoreGiven"] == score["scoreMaximum"] > 0
    assert score["activityProgress"] == "Completed"
    assert score["gradingProgress"] == "FullyGraded"
    assert "passed" in score["comment"]
    assert platform.refusals == []
    wait_until(lambda: score_posts(tool)[0].status is OutboxStatus.DELIVERED)
    # The submission is the LTI user's, and that user (only) can read it back.
    mine = tool.get(
        f"/lti/submissions/{accepted.json()['id']}", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert mine["student_id"].startswith("lti:") and mine["student_id"].endswith(":student-42")
    assert mine["report"]["status"] == "passed"
    history = tool.get("/lti/submissions", headers={"Authorization": f"Bearer {token}"}).json()
    assert [item["id"] for item in history["items"]] == [accepted.json()["id"]]


def test_a_failed_post_is_retried_and_a_wrong_answer_gets_its_comment(
    tool: TestClient, platform: Platform
) -> None:
    platform.score_failures = [503, 500]
    token = launch_student(tool, platform)
    tool.post(
        "/lti/submissions",
        json={"source": MISSING_SCALING},
        headers={"Authorization": f"Bearer {token}"},
    )
    wait_until(lambda: len(platform.scores) == 1)
    (score,) = platform.scores
    assert score["scoreGiven"] < score["scoreMaximum"]
    assert "Not passed:" in score["comment"]
    wait_until(lambda: score_posts(tool)[0].attempts == 3)


def test_a_submission_needs_a_valid_session_token(tool: TestClient, platform: Platform) -> None:
    for headers in ({}, {"Authorization": "Bearer forged.token.value"}):
        answer = tool.post("/lti/submissions", json={"source": CORRECT}, headers=headers)
        assert answer.status_code == 401
        assert answer.headers["content-type"] == "application/problem+json"


def test_deep_linking_returns_a_signed_resource_link_with_a_line_item(
    tool: TestClient, platform: Platform
) -> None:
    platform.next_launch.kind = "deep-link"
    picker = post_launch(tool, start_launch(tool, platform))
    assert picker.status_code == 200, picker.text
    assert "Choose an exercise" in picker.text
    assert f"value='{SEED}'" in picker.text
    context = picker.text.split("name='context' value='", 1)[1].split("'", 1)[0]
    answer = tool.post("/lti/deep-link", data={"context": context, "exercise": SEED})
    assert answer.status_code == 200, answer.text
    action = answer.text.split("action='", 1)[1].split("'", 1)[0]
    assert action == f"{platform.url}/deep-link-return"
    jwt_value = answer.text.split("name='JWT' value='", 1)[1].split("'", 1)[0]
    assert httpx.post(action, data={"JWT": jwt_value}, timeout=10).status_code == 200
    (item,) = platform.content_items
    assert item["type"] == "ltiResourceLink"
    assert item["url"] == "https://testserver/lti/launch"
    assert item["custom"] == {"exercise": SEED, "due_at": "$ResourceLink.submission.endDateTime"}
    assert item["lineItem"]["resourceId"] == SEED
    assert item["lineItem"]["scoreMaximum"] > 0
    claims = jwt.decode(jwt_value, options={"verify_signature": False})
    assert claims["aud"] == [ISSUER]


def test_a_tampered_id_token_is_refused_with_a_page(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.next_launch.exercise = SEED
    form = start_launch(tool, platform)
    header, body, signature = form.id_token.split(".")
    form.id_token = f"{header}.{body}.{signature[:-6]}AAAAAA"
    answer = post_launch(tool, form)
    assert "signature does not verify" in refusal_reason(answer, caplog, 403)
    assert "This exercise did not open" in answer.text


def test_a_replayed_launch_is_refused(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.next_launch.exercise = SEED
    form = start_launch(tool, platform)
    assert post_launch(tool, form).status_code == 303
    again = post_launch(tool, form)
    assert "used already" in refusal_reason(again, caplog, 403)
    assert "open the exercise again" in again.text


def test_without_the_state_cookie_the_launch_offers_a_new_window(
    tool: TestClient, platform: Platform
) -> None:
    platform.next_launch.exercise = SEED
    form = start_launch(tool, platform)
    tool.cookies.clear()  # what a browser that blocks third-party cookies sends
    answer = post_launch(tool, form)
    assert answer.status_code == 401
    assert answer.headers["content-type"].startswith("text/html")
    assert "Open in a new window" in answer.text
    link = answer.text.split("class='button' href='", 1)[1].split("'", 1)[0].replace("&amp;", "&")
    assert "target='_blank'" in answer.text
    restarted = urlparse(link)
    assert restarted.path == "/lti/login"
    params = parse_qs(restarted.query)
    assert params["iss"] == [ISSUER] and params["lti1p3_new_window"] == ["1"]
    # Followed in a top-level window, that login leads to a launch that works.
    again = tool.get(f"{restarted.path}?{restarted.query}", follow_redirects=False)
    assert again.status_code == 302


def test_the_login_sets_a_cross_site_state_cookie(tool: TestClient, platform: Platform) -> None:
    login = urlparse(platform.login_url("https://testserver/lti/login", "hint"))
    answer = tool.get(f"{login.path}?{login.query}", follow_redirects=False)
    cookie = answer.headers["set-cookie"].lower()
    assert "samesite=none" in cookie and "secure" in cookie and "httponly" in cookie


def test_an_unregistered_platform_is_refused_with_a_page(
    tool: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    answer = tool.get("/lti/login?iss=https://nobody.test&login_hint=1&target_link_uri=x")
    reason = refusal_reason(answer, caplog, 400)
    assert reason.startswith("login refused: ")
    assert "autograder lti add-platform" in reason
    assert "Tell your instructor" in answer.text


def test_the_canvas_configuration_names_the_tools_urls(tool: TestClient) -> None:
    config = tool.get("/lti/canvas.json").json()
    assert config["oidc_initiation_url"] == "https://testserver/lti/login"
    assert config["target_link_uri"] == "https://testserver/lti/launch"
    assert config["public_jwk_url"] == "https://testserver/lti/jwks"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in config["scopes"]
    # The roster (Names and Role Provisioning): without the scope Canvas grants no token for it.
    roster = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
    assert roster in config["scopes"]


def test_a_launched_students_malformed_source_is_refused_as_by_the_api(
    tool: TestClient, platform: Platform
) -> None:
    token = launch_student(tool, platform)
    auth = {"Authorization": f"Bearer {token}"}
    nul = tool.post("/lti/submissions", json={"source": "x = 1\x00"}, headers=auth)
    assert nul.status_code == 422
    assert nul.headers["content-type"] == "application/problem+json"
    huge = tool.post("/lti/submissions", json={"source": "#" * 300_000}, headers=auth)
    assert huge.status_code == 413


@pytest.mark.parametrize(
    ("next_launch", "reason"),
    [
        (NextLaunch(expires=False), "the id_token has no expiry (exp)"),
        (
            NextLaunch(claims={"aud": [CLIENT_ID, "another-tool"], "azp": None}),
            "the id_token has several audiences and no azp among them",
        ),
        (
            NextLaunch(claims={"aud": ["another-tool", CLIENT_ID], "azp": "another-tool"}),
            "Registration not found",
        ),
        (NextLaunch(claims={"azp": "another-tool"}), "the id_token's azp is not its audience"),
    ],
)
def test_an_id_token_without_expiry_or_for_another_client_is_refused(
    tool: TestClient,
    platform: Platform,
    caplog: pytest.LogCaptureFixture,
    next_launch: NextLaunch,
    reason: str,
) -> None:
    platform.next_launch = next_launch
    platform.next_launch.exercise = SEED
    form = start_launch(tool, platform)
    assert reason in refusal_reason(post_launch(tool, form), caplog, 403)


def test_several_audiences_with_our_azp_are_accepted(tool: TestClient, platform: Platform) -> None:
    platform.next_launch.claims = {"aud": ["another-tool", CLIENT_ID], "azp": CLIENT_ID}
    launch_student(tool, platform)


@pytest.mark.parametrize(
    "return_url",
    [
        "javascript:alert(document.domain)",
        "data:text/html,<script>alert(1)</script>",
        "http://lms.example.edu/deep-link-return",
        "https:///no-host",
    ],
)
def test_a_deep_linking_return_url_must_be_https(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture, return_url: str
) -> None:
    platform.next_launch.kind = "deep-link"
    platform.next_launch.deep_link_return_url = return_url
    answer = post_launch(tool, start_launch(tool, platform))
    assert "not an https URL" in refusal_reason(answer, caplog, 400)
    assert "name='context'" not in answer.text


def test_the_deep_linking_answer_posts_itself_with_a_script_of_the_tools_own(
    tool: TestClient, platform: Platform
) -> None:
    platform.next_launch.kind = "deep-link"
    picker = post_launch(tool, start_launch(tool, platform))
    context = picker.text.split("name='context' value='", 1)[1].split("'", 1)[0]
    answer = tool.post("/lti/deep-link", data={"context": context, "exercise": SEED})
    assert "<script src='/lti/return.js'></script>" in answer.text
    script = tool.get("/lti/return.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert "getElementById('return').submit()" in script.text


def test_a_launched_students_work_belongs_to_the_course_its_lms_course_is_bound_to(
    tool: TestClient, platform: Platform
) -> None:
    api = tool.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:  # the operator moves the LMS course to ml-101
        unbind(session, 1, CONTEXT_ID)
        bind(session, 1, CONTEXT_ID, course="ml-101")
        _, instructor = create_key(session, "staff", course="ml-101", role=Role.INSTRUCTOR)
    token = launch_student(tool, platform)
    submitted = tool.post(
        "/lti/submissions", json={"source": CORRECT}, headers={"Authorization": f"Bearer {token}"}
    ).json()["id"]
    listing = tool.get("/v1/submissions", headers={"X-API-Key": instructor}).json()
    assert [item["id"] for item in listing["items"]] == [submitted]
    # The open loopback mode is the default course's admin: another course's work is unknown.
    assert tool.get(f"/v1/submissions/{submitted}").status_code == 404
