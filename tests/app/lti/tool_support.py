"""The tool as the LTI tests run it: on https (its state cookie is Secure, SameSite=None: a
browser sends it only there), with a platform registered, served on loopback. Each module wires
these into its fixtures with its own settings."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi.testclient import TestClient
from platform_support import Platform, register, serve_platform

from app.main import create_app
from app.settings import AppSettings
from grader.runner import Grader


@contextmanager
def serve_tool(settings: AppSettings, grader: Grader) -> Iterator[TestClient]:
    with TestClient(create_app(settings, grader=grader), base_url="https://testserver") as client:
        yield client


@contextmanager
def registered_platform(tool: TestClient) -> Iterator[Platform]:
    with serve_platform(tool.get("/lti/jwks").json()) as served:
        register(tool, served)
        yield served
