"""No input makes the service answer 500: hypothesis-made bodies, paths, queries and headers.

The app here grades over an inert sandbox (every call "raises"): generated sources are never
executed, only accepted, stored, judged and reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from app_support import SEED, keep_traffic_local
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from app.core.settings import AppSettings
from app.main import create_app
from grader.catalog import Catalog
from grader.contract import CallOutcome, Execution, Job, RaisedError, Termination
from grader.runner import Grader
from grader.sandbox.interface import Layer


class InertSandbox:
    parallel_runs = 1

    def run(self, job: Job) -> Execution:
        error = RaisedError("RuntimeError", "not run")
        outcomes = {c.id: CallOutcome(call_id=c.id, outputs=None, error=error) for c in job.calls}
        return Execution(Termination.COMPLETED, outcomes)

    def layers(self) -> list[Layer]:
        return []

    def close(self) -> None:
        pass


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def fuzz_client(
    request: pytest.FixtureRequest, catalog: Catalog, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """The app on SQLite, then on PostgreSQL (which refuses NUL in text, unlike SQLite)."""
    data_dir = tmp_path_factory.mktemp("fuzz")
    database_url = (
        f"sqlite:///{data_dir / 'fuzz.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("module_postgres_url")
    )
    app_settings = AppSettings(
        data_dir=data_dir,
        database_url=database_url,
        secret=SecretStr("fuzz"),
        max_source_bytes=4096,
        rate_limit_per_key=0,
        rate_limit_per_student=0,
        queue_capacity=10_000,
        allowed_hosts="testserver",
        webhook_allowed_hosts=["127.0.0.1"],  # so that a callback URL gets past the check
    )
    grader = Grader(catalog, InertSandbox(), "fuzz")
    # Drawn text may spell a host name: it must not be looked up in DNS.
    with pytest.MonkeyPatch.context() as monkeypatch:
        keep_traffic_local(monkeypatch, lambda name: None)
        app = create_app(app_settings, grader=grader)
        with TestClient(app, raise_server_exceptions=False) as client:
            yield client


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
fields = st.sampled_from(["exercise", "source", "student_id", "callback_url"]) | st.text(
    max_size=10
)
field_values = json_values | st.sampled_from(
    [SEED, "x = 1", "http://127.0.0.1:9/h", "ftp://x", "", "a" * 5000]
)
# Mostly near-valid requests (a known exercise, text in every field), so that what lies past
# the schema (the size check, the database, grading, the report) is reached, not just the 422.
# Text with what databases and encoders choke on: NUL, lone surrogates, control characters.
awkward_text = st.text(
    st.characters(codec=None, exclude_categories=()) | st.sampled_from(["\x00", "\ud800", "é"]),
    max_size=300,
)
near_valid = st.fixed_dictionaries(
    {"exercise": st.just(SEED) | st.text(max_size=20), "source": awkward_text},
    optional={
        "student_id": awkward_text | json_values,
        "callback_url": st.sampled_from(["http://127.0.0.1:9/h", "ftp://x", "http://"])
        | st.text(max_size=30),
    },
)
bodies = near_valid | st.dictionaries(fields, field_values, max_size=5) | json_values
header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=40
)

fuzzed = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _ok(response: Any) -> None:
    assert response.status_code < 500, (response.status_code, response.text)
    if response.status_code >= 400:
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["status"] == response.status_code


@fuzzed
@given(body=bodies, wait=st.booleans(), key=st.none() | header_text)
@example(body={"exercise": SEED, "source": "a\x00"}, wait=False, key=None)
@example(body={"exercise": SEED, "source": "x", "student_id": "\ud800"}, wait=False, key="\x00")
def test_any_json_body_gets_a_non_5xx_answer(
    fuzz_client: TestClient, body: object, wait: bool, key: str | None
) -> None:
    headers: dict[bytes, bytes] = {b"Content-Type": b"application/json"}
    if key is not None:
        headers[b"Idempotency-Key"] = key.encode("latin-1")  # any byte a header may carry
    response = fuzz_client.post(
        "/v1/submissions",
        params={"wait": "true"} if wait else {},
        content=json.dumps(body),
        headers=headers,
    )
    _ok(response)


@fuzzed
@given(
    raw=st.binary(max_size=300),
    content_type=st.sampled_from(["application/json", "text/plain", ""]),
)
def test_any_bytes_get_a_non_5xx_answer(
    fuzz_client: TestClient, raw: bytes, content_type: str
) -> None:
    _ok(fuzz_client.post("/v1/submissions", content=raw, headers={"Content-Type": content_type}))


@fuzzed
@example(segment="\x00", query={"student_id": "\x00", "exercise": "\x00", "cursor": "\x00"})
@given(
    segment=st.text(max_size=60),
    query=st.dictionaries(
        st.sampled_from(["student_id", "exercise", "cursor", "limit", "wait", "x"]),
        st.text(max_size=30),
        max_size=4,
    ),
)
def test_any_path_and_query_get_a_non_5xx_answer(
    fuzz_client: TestClient, segment: str, query: dict[str, str]
) -> None:
    segment = quote(segment, safe="")  # any character reaches the route, percent-encoded
    for path in (
        f"/v1/exercises/{segment}",
        f"/v1/submissions/{segment}",
        f"/v1/submissions/{segment}/results.json",
        "/v1/submissions",
    ):
        _ok(fuzz_client.get(path, params=query))
