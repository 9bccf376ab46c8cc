"""The OpenAPI document: every route's every response carries an example, and every
reference resolves."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient


def _component(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "items" in schema:
        return _component(spec, schema["items"])
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        component: dict[str, Any] = spec["components"]["schemas"][name]
        return component
    return schema


def test_every_response_has_an_example(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    missing = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                for media_type, content in response.get("content", {}).items():
                    if "example" in content or content.get("examples"):
                        continue
                    if _component(spec, content.get("schema", {})).get("examples"):
                        continue
                    missing.append(f"{method.upper()} {path} {status} {media_type}")
    assert missing == []


def test_every_reference_resolves(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    text = json.dumps(spec)
    names = {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}
    assert names <= set(spec["components"]["schemas"])
    assert "ProblemDetail" in names
