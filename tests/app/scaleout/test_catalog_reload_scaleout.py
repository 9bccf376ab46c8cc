"""Scale-out: `autograder serve` and an `autograder worker`, separate processes sharing an
exercises folder, each pick up an added, changed and broken exercise without a restart: the
worker grades with the version the folder now holds, or the last good one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_support import CORRECT
from exercise_folders import OTHER, SEED, copy_exercise, edit_toml, seed_catalog
from scaleout_support import RedisNamespace, redis_namespace
from stack_support import Stack, running_stack, stack_env, wait_for

from grader.spec import load_exercise

pytestmark = pytest.mark.slow


@pytest.fixture
def exercises(tmp_path: Path) -> Path:
    return seed_catalog(tmp_path)


@pytest.fixture
def redis_ns() -> Iterator[RedisNamespace]:
    with redis_namespace() as namespace:
        yield namespace


@pytest.fixture
def stack(
    tmp_path: Path, exercises: Path, postgres_url: str, redis_ns: RedisNamespace
) -> Iterator[Stack]:
    env = stack_env(
        tmp_path / "var", redis_ns, postgres_url,
        AUTOGRADER_EXERCISES_DIR=str(exercises), AUTOGRADER_CATALOG_POLL_S="0.2",
    )  # fmt: skip
    with running_stack(tmp_path, env, redis_ns, workers=1) as stack:
        yield stack


def graded_version(stack: Stack, exercise: str, source: str) -> str:
    response = stack.http.post(
        "/v1/submissions?wait=true", json={"exercise": exercise, "source": source}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["report"]["exercise_version"] == body["exercise_version"]
    return str(body["exercise_version"])


def served(stack: Stack, slug: str) -> str | None:
    response = stack.http.get(f"/v1/exercises/{slug}")
    return str(response.json()["version"]) if response.status_code == 200 else None


def degraded(stack: Stack) -> list[str]:
    readiness = stack.http.get("/readyz")
    assert readiness.status_code == 200, readiness.text
    return [exercise["slug"] for exercise in readiness.json()["degraded_exercises"]]


def worker_logged(stack: Stack, text: str) -> bool:
    return text in stack.log_of("w1")


def test_the_api_and_the_worker_follow_the_folder(stack: Stack, exercises: Path) -> None:
    copy_exercise(exercises, OTHER)
    added = load_exercise(exercises / OTHER).version
    wait_for("the API serves it", lambda: served(stack, OTHER) == added)
    wait_for("the worker serves it", lambda: worker_logged(stack, f"{OTHER}: serving version"))
    assert graded_version(stack, OTHER, "x = 1") == added

    good = load_exercise(exercises / SEED).version
    edit_toml(exercises / SEED, 'name = "batch 1, 2 heads"', 'name = "one batch, 2 heads"')
    changed = load_exercise(exercises / SEED).version
    wait_for("the API serves the change", lambda: served(stack, SEED) == changed)
    replaced = f"{SEED}: version {changed} replaces {good}"
    wait_for("the worker serves the change", lambda: worker_logged(stack, replaced))
    assert graded_version(stack, SEED, CORRECT) == changed

    edit_toml(exercises / SEED, "framework =", "frameworks =")
    broken = f"{SEED} is broken (serving last good version {changed})"
    wait_for("the worker keeps the last good version", lambda: worker_logged(stack, broken))
    wait_for("the API says so", lambda: degraded(stack) == [SEED])
    assert served(stack, SEED) == changed
    assert graded_version(stack, SEED, CORRECT) == changed
