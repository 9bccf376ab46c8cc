"""A regrade end to end, as an instructor lives it: students' work is graded and its scores sit
in the LMS's gradebook (`lti1p3platform`, over real HTTP on loopback) and at a webhook receiver;
the instructor fixes the exercise (one test is worth more, another less: the same total), asks
for a regrade, and the changed scores flow back: posted again to the gradebook and announced as
`submission.regraded`. The scores that stayed the same send nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from app_support import (
    CORRECT,
    SEED_EXERCISE,
    FakeSandbox,
    Receiver,
    SettingsFactory,
    wait_until,
    webhook_receiver,
)
from exercise_folders import SEED, edit_toml, publish, seed_catalog
from fastapi.testclient import TestClient
from platform_support import Platform, post_launch, start_launch
from sqlalchemy import select
from tool_support import registered_platform, serve_tool

from app.lti.models import LtiScorePost
from app.outbox.models import OutboxStatus, WebhookDelivery
from grader.catalog import Catalog
from grader.runner import Grader
from grader.spec import load_exercise

pytestmark = pytest.mark.slow  # two servers and real HTTP between them

REGRADES = f"/v1/courses/default/exercises/{SEED}/regrades"
# Heads of the full attention size: right with one head only, so it passes "one head" alone.
ONE_HEAD_ONLY = (SEED_EXERCISE / "mistakes/full_size_heads.py").read_text()


@pytest.fixture
def exercises(tmp_path: Path) -> Path:
    return seed_catalog(tmp_path)


@pytest.fixture
def tool(
    exercises: Path, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> Iterator[TestClient]:
    settings = make_settings(
        exercises_dir=exercises,
        catalog_poll_s=0.05,
        regrade_poll_s=0.05,
        lti_score_backoff_s=0.05,
        webhook_allowed_hosts=["127.0.0.1"],
    )
    with serve_tool(settings, Grader(Catalog.scan(exercises), sandbox, "test-secret")) as client:
        yield client


@pytest.fixture
def platform(tool: TestClient) -> Iterator[Platform]:
    with registered_platform(tool) as served:
        yield served


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as served:
        yield served


def launched_student(tool: TestClient, platform: Platform) -> dict[str, str]:
    platform.next_launch.exercise = SEED
    answer = post_launch(tool, start_launch(tool, platform))
    assert answer.status_code == 303, answer.text
    token = parse_qs(urlparse(answer.headers["location"]).fragment)["lti_session"][0]
    return {"Authorization": f"Bearer {token}"}


def settled(tool: TestClient) -> bool:
    """Whether every score post and webhook delivery recorded so far has landed."""
    api = tool.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        statuses = [
            *session.scalars(select(LtiScorePost.status)),
            *session.scalars(select(WebhookDelivery.status)),
        ]
    return all(status is OutboxStatus.DELIVERED for status in statuses)


def regraded(tool: TestClient) -> dict[str, Any]:
    """Ask for a regrade of the exercise and wait for its end."""
    created = tool.post(REGRADES, json={})
    assert created.status_code == 202, created.text
    path = f"/v1/courses/default/regrades/{created.json()['id']}"
    wait_until(lambda: tool.get(path).json()["status"] == "done")
    body: dict[str, Any] = tool.get(path).json()
    return body


def test_a_fixed_exercise_regraded_posts_the_changed_scores_to_the_lms_and_the_webhook(
    tool: TestClient, platform: Platform, receiver: Receiver, exercises: Path
) -> None:
    student = launched_student(tool, platform)
    for source in (ONE_HEAD_ONLY, CORRECT):
        assert tool.post("/lti/submissions", json={"source": source}, headers=student).is_success
    hooked = {
        source: tool.post(
            "/v1/submissions?wait=true",
            json={"exercise": SEED, "source": source, "callback_url": receiver.url},
        ).json()["id"]
        for source in (ONE_HEAD_ONLY, CORRECT)
    }
    wait_until(lambda: len(platform.scores) == 2 and len(receiver.requests) == 2)
    wait_until(lambda: settled(tool))
    first_wrong = next(score for score in platform.scores if score["scoreGiven"] == 1.0)

    before = tool.get(f"/v1/exercises/{SEED}").json()["version"]
    # The fix: "one head" (the one test that heads of the full size pass) is worth more,
    # "batch 1, 2 heads" less; the total stays 10.
    edit_toml(exercises / SEED, 'name = "one head"\n', 'name = "one head"\npoints = 1.5\n')
    edit_toml(
        exercises / SEED, 'name = "batch 1, 2 heads"\n', 'name = "batch 1, 2 heads"\npoints = 0.5\n'
    )
    publish(exercises / SEED)  # as its author would, before its students' work is regraded
    version = load_exercise(exercises / SEED).version
    wait_until(lambda: served(tool) == (version, None))

    regrade = regraded(tool)
    assert (regrade["reason"], regrade["total"], regrade["graded"], regrade["changed"]) == (
        "new-version",
        4,
        4,
        2,
    )
    wait_until(lambda: len(platform.scores) == 3 and len(receiver.requests) == 3)
    wait_until(lambda: settled(tool))
    assert len(platform.scores) == 3 and len(receiver.requests) == 3  # unchanged: nothing sent
    assert platform.refusals == []

    posted = platform.scores[-1]
    assert (posted["scoreGiven"], posted["scoreMaximum"]) == (1.5, 10.0)
    assert posted["userId"] == first_wrong["userId"]
    assert posted["timestamp"] > first_wrong["timestamp"]  # the newer score, for the platform
    announced = receiver.requests[-1]
    assert announced.headers["X-Autograder-Event"] == "submission.regraded"
    body = json.loads(announced.body)
    assert body["id"] == hooked[ONE_HEAD_ONLY]
    assert (body["status"], body["exercise_version"], body["report"]["score"]) == (
        "done",
        version,
        1.5,
    )
    assert [json.loads(r.body)["id"] for r in receiver.requests[:2]] == list(hooked.values())
    history = tool.get(f"/v1/courses/default/submissions/{hooked[ONE_HEAD_ONLY]}/history")
    (past,) = history.json()["past_reports"]
    assert (past["score"], past["exercise_version"]) == (1.0, before)


def served(tool: TestClient) -> tuple[str, str | None]:
    """The seed exercise's version served, and why it is a draft (None: published)."""
    shown = tool.get(f"/v1/exercises/{SEED}").json()
    return shown["version"], shown["draft"]
