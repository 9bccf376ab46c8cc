"""The embedded service over an exercises folder of its own: a broken exercise answers 503 with
its faults while the rest is served and /readyz stays ready, and an added, changed, broken or
removed exercise is picked up without a restart (app.grading.catalog_watch)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_support import CORRECT, FakeSandbox, SettingsFactory, wait_until
from exercise_folders import OTHER, SEED, copy_exercise, edit_toml, seed_catalog
from fastapi.testclient import TestClient

from app.main import create_app
from grader.catalog import Catalog
from grader.runner import Grader
from grader.spec import load_exercise

TYPO = "broken/exercise.toml: frameworks: no such field (a typo?)"
NO_REFERENCE = (
    "no-reference/exercise.toml: reference: an importable module (reference/nowhere.py not found)"
)


@pytest.fixture
def exercises(tmp_path: Path) -> Path:
    return seed_catalog(tmp_path)


@pytest.fixture
def service(
    exercises: Path, make_settings: SettingsFactory, sandbox: FakeSandbox
) -> Iterator[TestClient]:
    """The service as `autograder serve` builds it, over `exercises` and the fake sandbox."""
    settings = make_settings(exercises_dir=exercises, catalog_poll_s=0.05)
    grader = Grader(Catalog.scan(exercises), sandbox, "test-secret")
    with TestClient(create_app(settings, grader=grader)) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200)
        yield client


def readiness(client: TestClient) -> dict[str, Any]:
    response = client.get("/readyz")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def graded(client: TestClient, exercise: str, source: str = CORRECT) -> dict[str, Any]:
    response = client.post(
        "/v1/submissions?wait=true", json={"exercise": exercise, "source": source}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture
def with_broken(exercises: Path) -> Path:
    """Two broken copies of another exercise: one with a typo, one with no reference module."""
    edit_toml(copy_exercise(exercises, OTHER, as_slug="broken"), "framework =", "frameworks =")
    no_reference = copy_exercise(exercises, OTHER, as_slug="no-reference")
    edit_toml(no_reference, "reference.scaled_dot_product_attention", "reference.nowhere")
    return exercises


def test_a_broken_exercise_answers_503_with_its_faults_and_the_rest_is_served(
    with_broken: Path, service: TestClient
) -> None:
    body = readiness(service)
    assert body["status"] == "ready"
    assert body["degraded_exercises"] == [
        {"slug": "broken", "serving": None, "problems": [TYPO]},
        {"slug": "no-reference", "serving": None, "problems": [NO_REFERENCE]},
    ]
    assert [exercise["slug"] for exercise in service.get("/v1/exercises").json()] == [SEED]
    for response in (
        service.get("/v1/exercises/broken"),
        service.post("/v1/submissions", json={"exercise": "broken", "source": CORRECT}),
    ):
        assert response.status_code == 503
        assert response.json()["type"] == "urn:autograder:problem:exercise-unavailable"
        assert TYPO in response.json()["detail"]
    page = service.get("/exercises/broken")
    assert page.status_code == 503 and TYPO in page.text
    assert graded(service, SEED)["report"]["status"] == "passed"


def test_reports_and_the_api_show_the_version_graded_with(
    exercises: Path, service: TestClient
) -> None:
    version = load_exercise(exercises / SEED).version
    assert service.get(f"/v1/exercises/{SEED}").json()["version"] == version
    submission = graded(service, SEED)
    assert submission["exercise_version"] == version
    assert submission["report"]["exercise_version"] == version
    assert service.get(f"/v1/submissions/{submission['id']}").json()["exercise_version"] == version


def version_served(client: TestClient, slug: str) -> str | None:
    response = client.get(f"/v1/exercises/{slug}")
    return str(response.json()["version"]) if response.status_code == 200 else None


def test_an_added_changed_and_removed_exercise_is_served_without_a_restart(
    exercises: Path, service: TestClient
) -> None:
    copy_exercise(exercises, OTHER)
    wait_until(lambda: version_served(service, OTHER) is not None)
    assert graded(service, OTHER, "x = 1")["report"]["exercise_version"] == version_served(
        service, OTHER
    )

    before = version_served(service, SEED)
    edit_toml(exercises / SEED, 'name = "batch 1, 2 heads"', 'name = "one batch, 2 heads"')
    changed = load_exercise(exercises / SEED).version
    wait_until(lambda: version_served(service, SEED) == changed)
    assert changed != before
    report = graded(service, SEED)["report"]
    assert report["exercise_version"] == changed
    assert "one batch, 2 heads" in [test["name"] for test in report["tests"]]

    shutil.rmtree(exercises / OTHER)
    wait_until(lambda: service.get(f"/v1/exercises/{OTHER}").status_code == 404)


def test_a_change_that_fails_its_check_keeps_the_last_good_version_serving(
    exercises: Path, service: TestClient
) -> None:
    good = version_served(service, SEED)
    edit_toml(exercises / SEED, "framework =", "frameworks =")
    wait_until(lambda: readiness(service)["degraded_exercises"] != [])
    [degraded] = readiness(service)["degraded_exercises"]
    assert degraded == {
        "slug": SEED,
        "serving": good,
        "problems": [f"{SEED}/exercise.toml: frameworks: no such field (a typo?)"],
    }
    assert version_served(service, SEED) == good
    assert graded(service, SEED)["report"]["exercise_version"] == good

    edit_toml(exercises / SEED, "frameworks =", "framework =")
    wait_until(lambda: readiness(service)["degraded_exercises"] == [])
    assert version_served(service, SEED) == good


def test_a_broken_exercise_is_served_once_fixed(with_broken: Path, service: TestClient) -> None:
    edit_toml(with_broken / "broken", "frameworks =", "framework =")
    wait_until(lambda: version_served(service, "broken") is not None)
    degraded = readiness(service)["degraded_exercises"]
    assert [exercise["slug"] for exercise in degraded] == ["no-reference"]
