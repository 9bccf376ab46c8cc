"""GET /courses/{course}/dashboard: the shell of the course dashboard, rendered on the server
with no figure in it (the figures come from the staff API, for staff only), its script and
styles from the bundle, and a 404 page for a name no course can have."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_support import ClientFactory
from fastapi.testclient import TestClient

from app.core.settings import AppSettings
from app.ui import page


def dashboard_data(html: str) -> object:
    found = re.search(r'<script type="application/json" id="dashboard-data">(.*?)</script>', html)
    assert found is not None
    return json.loads(found.group(1))


def test_the_shell_names_the_course_and_loads_the_dashboards_bundle(client: TestClient) -> None:
    if not page.assets_built():
        pytest.skip(f"no bundle in {page.DIST}: run `{page.BUILD_HINT}`")
    response = client.get("/courses/ml-101/dashboard")
    assert response.status_code == 200
    html = response.text
    assert "<h1>Course <code>ml-101</code></h1>" in html
    # The open service is the default course's staff, not ml-101's: that page asks for a key.
    assert dashboard_data(html) == {"course": "ml-101", "keysRequired": True}
    default = client.get("/courses/default/dashboard").text
    assert dashboard_data(default) == {"course": "default", "keysRequired": False}
    assert f'<script type="module" src="{page.ASSETS_URL}/dashboard.js"></script>' in html
    for sheet in ("page.css", "dashboard.css"):
        assert f'<link rel="stylesheet" href="{page.ASSETS_URL}/{sheet}">' in html
    # Islands the script fills, each with its room: the views, the sign-in form, the status.
    for island in ('id="view"', 'id="sign-in"', 'id="api-key"', 'id="dash-status"'):
        assert island in html
    # Scripts from the service's own URLs only: nothing inline but the JSON data island.
    assert re.findall(r"<script(?![^>]*(src=|application/json))", html) == []
    assert client.get(f"{page.ASSETS_URL}/dashboard.js").status_code == 200


def test_where_keys_are_required_the_page_knows_it_must_ask_for_one(
    make_client: ClientFactory, settings: AppSettings
) -> None:
    client = make_client(settings.model_copy(update={"require_api_keys": True}))
    html = client.get("/courses/ml-101/dashboard").text
    assert dashboard_data(html) == {"course": "ml-101", "keysRequired": True}


def test_a_name_no_course_can_have_is_a_404_page(client: TestClient) -> None:
    response = client.get("/courses/Not%20a%20course/dashboard")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "No such course" in response.text
    assert "<code>Not a course</code>" in response.text


def test_without_a_bundle_the_dashboard_says_how_to_build_it(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(page, "DIST", tmp_path / "dist")
    html = client.get("/courses/ml-101/dashboard").text
    assert "The dashboard's scripts are not built" in html
    assert "dashboard.js" not in html
