"""Every way a login, a launch or a deep-linking choice is refused answers the same page: plain
words for the student (what happened, what to do, a reference) and the reason in one log line
under that reference. The refusals other modules test on the way (a tampered or replayed launch,
an unregistered platform, malformed claims, oversized login parameters, too many logins, no
public URL, a deep-linking return URL) use the same check, tool_support.refusal_reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from app_support import CORRECT, SEED, FakeSandbox, SettingsFactory, wait_until
from exercise_folders import OTHER, copy_exercise, seed_catalog
from fastapi.testclient import TestClient
from platform_support import Platform, post_launch, start_launch
from tool_support import refusal_reason, registered_platform, serve_tool

from grader.catalog import Catalog
from grader.runner import Grader


@pytest.fixture
def tool(make_settings: SettingsFactory, grader: Grader) -> Iterator[TestClient]:
    with serve_tool(make_settings(), grader) as client:
        yield client


@pytest.fixture
def platform(tool: TestClient) -> Iterator[Platform]:
    with registered_platform(tool) as served:
        yield served


def test_a_launch_without_its_token_asks_to_open_the_exercise_again(
    tool: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    answer = tool.post("/lti/launch", data={})
    assert refusal_reason(answer, caplog, 400) == "the launch carries no id_token or no state"
    assert "open the exercise again" in answer.text


def test_a_launch_of_an_unknown_login_asks_to_open_the_exercise_again(
    tool: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    answer = tool.post("/lti/launch", data={"state": "forged", "id_token": "a.b.c"})
    assert refusal_reason(answer, caplog, 400) == "this launch's login is unknown or was used"


def test_a_link_to_an_exercise_the_grader_lacks_sends_the_student_to_the_instructor(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.next_launch.exercise = "no-such-exercise"
    answer = post_launch(tool, start_launch(tool, platform))
    assert "'no-such-exercise'" in refusal_reason(answer, caplog, 404)
    assert "Tell your instructor" in answer.text


@pytest.fixture
def tool_with_a_draft(
    tmp_path: Path, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> Iterator[TestClient]:
    """The seed exercise published, and another never proven."""
    exercises = seed_catalog(tmp_path)
    (copy_exercise(exercises, OTHER) / "proof.toml").unlink()
    grader = Grader(Catalog.scan(exercises), sandbox, "test-secret")
    settings = make_settings(exercises_dir=exercises, catalog_poll_s=0.05)
    with serve_tool(settings, grader) as client:
        yield client


def test_a_link_to_a_draft_tells_the_student_it_is_not_published_yet(
    tool_with_a_draft: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with registered_platform(tool_with_a_draft) as platform:
        platform.next_launch.exercise = OTHER
        answer = post_launch(tool_with_a_draft, start_launch(tool_with_a_draft, platform))
    assert refusal_reason(answer, caplog, 404) == (
        f"the resource link names the exercise {OTHER!r}, a draft: not proven: run "
        f"`autograder check-exercise {OTHER}`"
    )
    assert "This exercise is not published yet" in answer.text


def test_a_launched_student_cannot_submit_once_the_exercise_is_a_draft(
    tool_with_a_draft: TestClient,
) -> None:
    with registered_platform(tool_with_a_draft) as platform:
        platform.next_launch.exercise = SEED
        answer = post_launch(tool_with_a_draft, start_launch(tool_with_a_draft, platform))
    token = parse_qs(urlparse(answer.headers["location"]).fragment)["lti_session"][0]
    api = tool_with_a_draft.app.state.api  # type: ignore[attr-defined]
    (api.settings.exercises_dir / SEED / "proof.toml").unlink()
    wait_until(lambda: SEED in api.catalog.drafts())
    submitted = tool_with_a_draft.post(
        "/lti/submissions", json={"source": CORRECT}, headers={"Authorization": f"Bearer {token}"}
    )
    assert submitted.status_code == 404, submitted.text
    assert submitted.json()["type"] == "urn:autograder:problem:unknown-exercise"


def test_deep_linking_offers_published_exercises_alone(tool_with_a_draft: TestClient) -> None:
    """A link to a draft would be one its students can't open."""
    with registered_platform(tool_with_a_draft) as platform:
        platform.next_launch.kind = "deep-link"
        picker = post_launch(tool_with_a_draft, start_launch(tool_with_a_draft, platform))
    assert picker.status_code == 200, picker.text
    assert f"value='{SEED}'" in picker.text
    assert OTHER not in picker.text


def test_an_anonymous_launch_is_refused_in_plain_words(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.next_launch.exercise = SEED
    platform.next_launch.claims = {"sub": None}
    answer = post_launch(tool, start_launch(tool, platform))
    assert "Must have a user (sub)" in refusal_reason(answer, caplog, 403)


def test_a_forged_deep_linking_choice_is_refused_in_plain_words(
    tool: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    answer = tool.post("/lti/deep-link", data={"context": "forged", "exercise": SEED})
    assert "not valid any more" in refusal_reason(answer, caplog, 400)


def test_a_launch_from_an_lms_course_bound_to_none_of_ours_says_who_links_it(
    tool: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    platform.next_launch.exercise = SEED
    platform.next_launch.context_id = "course-9"
    answer = post_launch(tool, start_launch(tool, platform))
    reason = refusal_reason(answer, caplog, 403)
    assert "'Deep learning'" in reason and "context 'course-9'" in reason
    assert "autograder lti contexts bind" in reason
    assert "tell your instructor" in answer.text and "whoever runs the grader" in answer.text
