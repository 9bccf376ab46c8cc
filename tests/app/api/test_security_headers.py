"""Every response carries the security headers: a Content-Security-Policy that runs scripts from
the service's own URLs only, `nosniff`, and a frame-ancestors list of the registered LMS
platforms' origins and AUTOGRADER_FRAME_ANCESTORS, never `*`."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from app_support import SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient

from app.api import security_headers
from app.lti.registrations import add_platform
from app.ui import page

SCHOOL = "https://school.instructure.com"


def register(client: TestClient, issuer: str, login_url: str) -> None:
    with client.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        add_platform(session, issuer, "client-1", ["1"], login_url, login_url, login_url)


@pytest.fixture
def client(make_client: ClientFactory, make_settings: SettingsFactory) -> TestClient:
    client = make_client(make_settings(frame_ancestors=[SCHOOL]))
    register(client, "https://canvas.instructure.com", "https://sso.canvaslms.com/api/lti/auth")
    return client


def frame_ancestors(headers: Mapping[str, str]) -> list[str]:
    policy = headers["content-security-policy"]
    (directive,) = [d.strip() for d in policy.split(";") if "frame-ancestors" in d]
    return directive.split()[1:]


PATHS = [
    "/v1/exercises",
    f"/exercises/{SEED}",
    "/exercises/no-such-thing",
    "/docs",
    "/redoc",
    "/lti/jwks",
    "/lti/login?iss=https://nobody.test&login_hint=1&target_link_uri=x",
    "/healthz",
    "/no-such-route",
]


@pytest.mark.parametrize("path", PATHS)
def test_every_response_carries_the_security_headers(client: TestClient, path: str) -> None:
    response = client.get(path)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self';" in policy
    assert "object-src 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "x-frame-options" not in response.headers  # frame-ancestors says who may frame


def test_the_registered_platforms_and_the_setting_may_frame_the_pages(client: TestClient) -> None:
    ancestors = frame_ancestors(client.get(f"/exercises/{SEED}").headers)
    assert ancestors == [
        "'self'",
        "https://canvas.instructure.com",
        SCHOOL,
        "https://sso.canvaslms.com",
    ]
    assert "*" not in ancestors


def test_a_platform_registered_later_may_frame_once_the_list_is_refreshed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "https://moodle.example.edu" not in frame_ancestors(client.get("/healthz").headers)
    register(client, "https://moodle.example.edu", "https://moodle.example.edu/mod/lti/auth.php")
    # Read once per TTL: not yet.
    assert "https://moodle.example.edu" not in frame_ancestors(client.get("/healthz").headers)
    monkeypatch.setattr(security_headers, "PLATFORM_ORIGINS_TTL_S", 0.0)
    assert "https://moodle.example.edu" in frame_ancestors(client.get("/healthz").headers)


def test_a_frame_ancestor_that_is_not_an_origin_is_refused(make_settings: SettingsFactory) -> None:
    with pytest.raises(ValueError, match="frame_ancestors"):
        make_settings(frame_ancestors=["https://a.example; script-src *"])


def test_the_page_loads_its_scripts_from_the_service_only(client: TestClient) -> None:
    html = client.get(f"/exercises/{SEED}").text
    # Inline scripts would not run under script-src 'self': the only script elements are the
    # bundle (when built) and the exercise's data, which is JSON, not a script.
    scripts = html.count("<script")
    assert scripts == html.count('<script type="application/json"') + int(page.assets_built())
