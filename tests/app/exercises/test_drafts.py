"""A draft is never shown to a student: a running service (keys required) picks up a new
exercise as a draft, unknown to students (not listed, its page and API 404 as for no such
exercise, a submission to it 404) and shown to staff flagged, who open and submit to it; once
`autograder check-exercise` proves it, students see it; an edit makes it a draft again."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from access_support import Caller, caller, linked_student
from app_support import CORRECT, FakeSandbox, SettingsFactory, wait_until
from exercise_folders import OTHER, SEED, copy_exercise, edit_toml, publish, seed_catalog
from fastapi.testclient import TestClient

from app.core.models import Role
from app.main import create_app
from grader import cli
from grader.catalog import Catalog
from grader.runner import Grader
from grader.settings import GraderSettings

NEW = "new-attention"
UNFINISHED = "FILL IN: one sentence"
NOT_PROVEN = f"not proven: run `autograder check-exercise {NEW}`"


@pytest.fixture
def exercises(tmp_path: Path) -> Path:
    return seed_catalog(tmp_path)


@pytest.fixture
def service(
    exercises: Path, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> Iterator[TestClient]:
    """The service as `autograder serve` builds it with keys required, over `exercises`."""
    settings = make_settings(exercises_dir=exercises, catalog_poll_s=0.05, require_api_keys=True)
    grader = Grader(Catalog.scan(exercises), sandbox, "test-secret")
    with TestClient(create_app(settings, grader=grader)) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200)
        yield client


@pytest.fixture
def staff(service: TestClient) -> Caller:
    return caller(service, "ml-101", Role.INSTRUCTOR)


@pytest.fixture
def students(service: TestClient, staff: Caller) -> list[Caller]:
    """A student by their link, and a key that submits for students."""
    return [linked_student(service, "ml-101", "ada"), caller(service, "ml-101", Role.SUBMITTER)]


def add_unfinished_exercise(exercises: Path) -> Path:
    """A new exercise, its summary still the skeleton's, never proven."""
    folder = copy_exercise(exercises, OTHER, as_slug=NEW)
    (folder / "proof.toml").unlink()
    edit_toml(folder, 'summary = "', f'summary = "{UNFINISHED}... ')
    return folder


def listed(client: TestClient, who: Caller) -> dict[str, Any]:
    """Each exercise the caller is listed, with its `draft`."""
    response = client.get("/v1/exercises", headers=who.headers)
    assert response.status_code == 200, response.text
    return {exercise["slug"]: exercise["draft"] for exercise in response.json()}


def submitted(client: TestClient, who: Caller, exercise: str) -> Any:
    body = {"exercise": exercise, "source": CORRECT, "student_id": "ada"}
    return client.post("/v1/submissions", json=body, headers=who.headers)


def assert_unknown_to(client: TestClient, who: Caller, slug: str) -> None:
    """Answered as an exercise that does not exist: nothing tells a draft from no folder."""
    assert slug not in listed(client, who)
    progress = client.get("/v1/progress", headers=who.headers).json()
    assert slug not in [row["exercise"] for row in progress]
    for path in (f"/v1/exercises/{slug}", f"/v1/exercises/{slug}/attempts"):
        answer = client.get(path, headers=who.headers)
        nowhere = client.get(path.replace(slug, "no-such-exercise"), headers=who.headers)
        assert answer.status_code == nowhere.status_code == 404
        assert answer.json()["detail"] == nowhere.json()["detail"].replace("no-such-exercise", slug)
    answer = submitted(client, who, slug)
    assert answer.status_code == 404, answer.text
    assert answer.json()["type"] == "urn:autograder:problem:unknown-exercise"


def assert_not_on_the_pages(client: TestClient, slug: str) -> None:
    page = client.get("/exercises")
    assert page.status_code == 200
    assert slug not in page.text and UNFINISHED not in page.text
    assert client.get(f"/exercises/{slug}").status_code == 404


def test_a_new_exercise_is_a_draft_students_never_see_and_staff_try(
    exercises: Path, service: TestClient, staff: Caller, students: list[Caller]
) -> None:
    add_unfinished_exercise(exercises)
    wait_until(lambda: NEW in listed(service, staff))

    assert listed(service, staff) == {SEED: None, NEW: NOT_PROVEN}
    shown = service.get(f"/v1/exercises/{NEW}", headers=staff.headers)
    assert shown.status_code == 200 and shown.json()["draft"] == NOT_PROVEN
    assert submitted(service, staff, NEW).status_code == 202
    ready = service.get("/readyz").json()
    assert ready["draft_exercises"] == [{"slug": NEW, "reason": NOT_PROVEN}]
    for student in students:
        assert listed(service, student) == {SEED: None}
        assert_unknown_to(service, student, NEW)
    assert_not_on_the_pages(service, NEW)


def test_a_published_exercise_edited_is_a_draft_until_published_again(
    exercises: Path,
    service: TestClient,
    staff: Caller,
    students: list[Caller],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "app.grading.catalog_watch")
    edit_toml(exercises / SEED, 'name = "batch 1, 2 heads"', 'name = "one batch, 2 heads"')
    wait_until(lambda: listed(service, staff)[SEED] is not None)

    assert listed(service, staff)[SEED].startswith("changed since its proof of ")
    for student in students:
        assert_unknown_to(service, student, SEED)
    assert_not_on_the_pages(service, SEED)

    publish(exercises / SEED)
    wait_until(lambda: SEED in listed(service, students[0]))
    assert listed(service, staff) == {SEED: None}
    assert submitted(service, students[0], SEED).status_code == 202
    assert service.get(f"/exercises/{SEED}").status_code == 200
    logged = [record.getMessage() for record in caplog.records]
    assert any(f"exercise {SEED} is a draft, which students do not see: " in m for m in logged)
    assert f"exercise {SEED}: published" in logged


def test_students_work_is_not_regraded_with_a_draft(
    exercises: Path, service: TestClient, staff: Caller
) -> None:
    edit_toml(exercises / SEED, 'name = "batch 1, 2 heads"', 'name = "one batch, 2 heads"')
    wait_until(lambda: listed(service, staff)[SEED] is not None)
    answer = service.post(
        f"/v1/courses/ml-101/exercises/{SEED}/regrades", json={}, headers=staff.headers
    )
    assert answer.status_code == 409, answer.text
    assert answer.json()["type"] == "urn:autograder:problem:exercise-draft"


def test_where_the_service_runs_open_its_pages_flag_a_draft(
    exercises: Path, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> None:
    """Open, every caller is the service's admin (on /v1 too): the author trying a draft."""
    add_unfinished_exercise(exercises)
    grader = Grader(Catalog.scan(exercises), sandbox, "test-secret")
    with TestClient(create_app(make_settings(exercises_dir=exercises), grader=grader)) as client:
        listing = client.get("/exercises").text
        draft = client.get(f"/exercises/{NEW}")
        published = client.get(f"/exercises/{SEED}").text
    command = f"<code>autograder check-exercise {NEW}</code>"
    assert f"<strong>Draft:</strong> not proven: run {command}" in listing
    assert listing.count("Draft:") == 1
    assert draft.status_code == 200
    assert "Draft: students do not see this exercise." in draft.text and command in draft.text
    assert "draft-notice" not in published


@pytest.mark.slow
def test_check_exercise_publishes_a_draft_to_a_running_service(
    exercises: Path,
    service: TestClient,
    staff: Caller,
    students: list[Caller],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = add_unfinished_exercise(exercises)
    edit_toml(folder, f"{UNFINISHED}... ", "")  # finished: what a proof checks first
    wait_until(lambda: NEW in listed(service, staff))
    assert NEW not in listed(service, students[0])
    monkeypatch.setattr(
        "grader.settings.get_settings", lambda: GraderSettings(exercises_dir=exercises)
    )

    assert cli.main(["check-exercise", NEW]) == 0

    wait_until(lambda: NEW in listed(service, students[0]))
    assert listed(service, staff) == {SEED: None, NEW: None}
    assert NEW in service.get("/exercises").text
    edit_toml(folder, 'summary = "', 'summary = "Edited. ')
    wait_until(lambda: NEW not in listed(service, students[0]))
    assert listed(service, staff)[NEW].startswith("changed since its proof of ")
