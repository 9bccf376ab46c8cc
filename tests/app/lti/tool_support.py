"""The tool as the LTI tests run it: on https (its state cookie is Secure, SameSite=None: a
browser sends it only there), with a platform registered, served on loopback. Each module wires
these into its fixtures with its own settings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from app_support import SEED
from fastapi.testclient import TestClient
from platform_support import Platform, post_launch, register, serve_platform, start_launch

from app.core.settings import AppSettings
from app.main import create_app
from grader.runner import Grader


@contextmanager
def serve_tool(settings: AppSettings, grader: Grader) -> Iterator[TestClient]:
    with TestClient(create_app(settings, grader=grader), base_url="https://testserver") as client:
        yield client


# What only an operator says: none of it belongs on a page a student reads.
OPERATOR_WORDS = ("`", "AUTOGRADER_", "autograder ", "id_token", "JWT", "claim", "Traceback")


def refusal_reason(answer: Any, caplog: pytest.LogCaptureFixture, status: int) -> str:
    """A refusal answered as it must be: a page in a student's words (what happened, what to do,
    a reference, and nothing of the reason), and the reason in one log record under that
    reference. Returns the reason."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    page = unescape(answer.text)
    assert "your course" in page
    reference = re.search(r"Reference: ([0-9a-f]{8})", page)
    assert reference is not None, page
    (record,) = [r for r in caplog.records if getattr(r, "reference", None) == reference[1]]
    assert (record.levelname, getattr(record, "event", None)) == ("WARNING", "lti_refused")
    reason: str = getattr(record, "reason", "")
    assert reason and reason not in page
    assert [word for word in OPERATOR_WORDS if word in page] == []
    return reason


@contextmanager
def registered_platform(tool: TestClient) -> Iterator[Platform]:
    with serve_platform(tool.get("/lti/jwks").json()) as served:
        register(tool, served)
        yield served


def launch_student(tool: TestClient, platform: Platform) -> str:
    """A student's launch of the seed exercise; returns the page's session token."""
    platform.next_launch.exercise = SEED
    answer = post_launch(tool, start_launch(tool, platform))
    assert answer.status_code == 303, answer.text
    page = urlparse(answer.headers["location"])
    assert page.path == f"/exercises/{SEED}"
    token: str = parse_qs(page.fragment)["lti_session"][0]
    return token
