"""The LMS's due date, against the test LMS over real HTTP: read from the launch's line item
(its endDateTime), else from the launch's custom `due_at`; and the score posted back with the
course's late penalty."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from app_support import CORRECT, SEED, SettingsFactory, wait_until
from fastapi.testclient import TestClient
from platform_support import Platform
from tool_support import launch_student, registered_platform, serve_tool

from app.core.models import DEFAULT_COURSE_ID, utcnow
from app.courses.models import ExercisePolicy, LatePolicy
from app.lti.due_dates import CUSTOM_CLAIM, DUE_AT_VARIABLE
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


def penalise(tool: TestClient, percent_per_day: float) -> None:
    with tool.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        session.add(
            ExercisePolicy(
                course_id=DEFAULT_COURSE_ID,
                exercise=SEED,
                late_policy=LatePolicy.PENALTY,
                penalty_per_day=percent_per_day,
            )
        )


def due(tool: TestClient, token: str) -> dict[str, Any]:
    answer = tool.get("/lti/due", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_the_line_item_s_end_date_is_the_due_date_and_the_lms_gets_the_penalised_score(
    tool: TestClient, platform: Platform
) -> None:
    end = (utcnow() - timedelta(hours=25)).replace(microsecond=0)
    platform.lineitem = {"label": "Attention", "scoreMaximum": 100, "endDateTime": end.isoformat()}
    penalise(tool, 10)
    token = launch_student(tool, platform)

    shown = due(tool, token)
    accepted = tool.post(
        "/lti/submissions", json={"source": CORRECT}, headers={"Authorization": f"Bearer {token}"}
    )

    assert (shown["source"], shown["state"]) == ("lms", "late")
    assert datetime.fromisoformat(shown["due_at"]) == end
    assert accepted.status_code == 202, accepted.text
    wait_until(lambda: len(platform.scores) == 1)
    (score,) = platform.scores
    assert score["scoreGiven"] == pytest.approx(0.8 * score["scoreMaximum"])
    assert score["comment"].startswith("Late by 2 days: 8 of 10 after 20% off (10 before).")
    assert platform.refusals == []


def test_without_a_readable_line_item_the_launch_s_custom_due_date_is_taken(
    tool: TestClient, platform: Platform
) -> None:
    due_at = (utcnow() + timedelta(days=3)).replace(microsecond=0)
    platform.next_launch.claims = {CUSTOM_CLAIM: {"exercise": SEED, "due_at": due_at.isoformat()}}
    penalise(tool, 10)
    token = launch_student(tool, platform)

    shown = due(tool, token)
    tool.post(
        "/lti/submissions", json={"source": CORRECT}, headers={"Authorization": f"Bearer {token}"}
    )

    assert (shown["source"], shown["state"]) == ("lms", "open")
    assert datetime.fromisoformat(shown["due_at"]) == due_at
    wait_until(lambda: len(platform.scores) == 1)
    assert platform.scores[0]["scoreGiven"] == platform.scores[0]["scoreMaximum"]


def test_an_unfilled_substitution_variable_is_no_due_date(
    tool: TestClient, platform: Platform
) -> None:
    platform.next_launch.claims = {CUSTOM_CLAIM: {"exercise": SEED, "due_at": DUE_AT_VARIABLE}}
    token = launch_student(tool, platform)

    assert due(tool, token)["state"] == "none"
