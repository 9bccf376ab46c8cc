"""GET /v1/exercises: what a student may see, and nothing of the hidden tests."""

from __future__ import annotations

from app_support import SEED
from fastapi.testclient import TestClient

from grader.catalog import Catalog
from grader.input_specs import RandomTensor
from grader.spec import Visibility


def test_the_list_has_every_exercise(client: TestClient, catalog: Catalog) -> None:
    response = client.get("/v1/exercises")
    assert response.status_code == 200
    assert [row["slug"] for row in response.json()] == catalog.slugs()


def test_an_exercise_shows_statement_starter_and_visible_signatures_only(
    client: TestClient, catalog: Catalog
) -> None:
    body = client.get(f"/v1/exercises/{SEED}").json()
    exercise = catalog.get(SEED)
    assert body["statement"] == exercise.statement
    assert body["starter"] == exercise.starter
    visible = [t for t in exercise.spec.tests if t.visibility is Visibility.VISIBLE]
    hidden = [t for t in exercise.spec.tests if t.visibility is Visibility.HIDDEN]
    assert [t["name"] for t in body["visible_tests"]] == [t.name for t in visible]
    first_input = visible[0].inputs[0]
    assert isinstance(first_input, RandomTensor)
    assert body["visible_tests"][0]["inputs"][0]["shape"] == list(first_input.shape)
    assert body["visible_tests"][0]["init"] == visible[0].init
    assert body["hidden_test_count"] == len(hidden) > 0
    # what a submission may import, as the policy reads the exercise's libraries
    assert {"torch", "torch.nn.functional", "torchtyping", "typing"} <= set(body["allowed_imports"])
    text = client.get(f"/v1/exercises/{SEED}").text
    for test in hidden:
        assert test.name not in text
    fields = {"name", "points", "init", "inputs", "steps", "mode", "decimals", "entry"}
    assert all(set(test) == fields for test in body["visible_tests"])


def test_an_unknown_exercise_is_a_404_problem(client: TestClient) -> None:
    response = client.get("/v1/exercises/attention")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {
        "type": "urn:autograder:problem:unknown-exercise",
        "title": "Unknown exercise",
        "status": 404,
        "detail": "no exercise is called 'attention'",
        "instance": "/v1/exercises/attention",
    }
