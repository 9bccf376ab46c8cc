"""The LTI launch as a student's browser lives it: `lti1p3platform` (the LMS) launches the real
server (`autograder serve`); Debian's Chromium, driven by Playwright, follows the launch's redirect
to the exercise page, which works as the launched student: the token leaves the address bar, no
student id field, a correct solution is graded and its score lands in the platform's gradebook.
The screenshot lands in var/screenshots for a person to look at."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest
from app_support import ROOT, SEED, wait_until
from platform_support import CLIENT_ID, DEPLOYMENT_ID, ISSUER, Platform, serve_platform
from test_server import free_port, server

from app.db import Database
from app.lti.registrations import add_platform
from app.ui import page as ui_page

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = ROOT / "var" / "screenshots"
CORRECT = (ROOT / "exercises" / SEED / "solutions" / "neetcode_common_answer.py").read_text()

if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium)",
        allow_module_level=True,
    )
if not ui_page.assets_built():
    pytest.skip(
        f"the page's bundle is not built: run `{ui_page.BUILD_HINT}`", allow_module_level=True
    )

from playwright.sync_api import expect, sync_playwright  # noqa: E402


@pytest.fixture
def tool(tmp_path: Path) -> Iterator[httpx.Client]:
    with server(tmp_path, free_port()) as (_, client):
        yield client


@pytest.fixture
def platform(tool: httpx.Client, tmp_path: Path) -> Iterator[Platform]:
    with serve_platform(tool.get("/lti/jwks").json()) as served:
        # What `autograder lti add-platform` stores, in the server's database.
        database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
        try:
            with database.session() as session:
                add_platform(
                    session,
                    ISSUER,
                    CLIENT_ID,
                    [DEPLOYMENT_ID],
                    f"{served.url}/auth",
                    f"{served.url}/token",
                    f"{served.url}/jwks",
                )
        finally:
            database.close()
        yield served


def launch(tool: httpx.Client, platform: Platform) -> str:
    """The LMS's launch up to the tool's redirect; returns where it sends the browser."""
    platform.next_launch.exercise = SEED
    base = str(tool.base_url).rstrip("/")
    login = urlparse(platform.login_url(f"{base}/lti/login", "hint"))
    answer = tool.get(f"{login.path}?{login.query}", follow_redirects=False)
    assert answer.status_code == 302, answer.text
    form = httpx.get(answer.headers["location"], timeout=10).text
    fields = dict(re.findall(r"name='(\w+)' value='([^']*)'", form))
    # The state cookie is Secure and this tool is on plain http: carried by hand.
    cookie = "; ".join(f"{name}={value}" for name, value in answer.cookies.items())
    launched = tool.post(
        "/lti/launch",
        data={"id_token": fields["id_token"], "state": fields["state"]},
        headers={"Cookie": cookie},
        follow_redirects=False,
    )
    assert launched.status_code == 303, launched.text
    location: str = launched.headers["location"]
    assert location.startswith(f"/exercises/{SEED}#lti_session="), location
    return base + location


def test_a_launched_student_solves_the_exercise_and_the_grade_reaches_the_lms(
    tool: httpx.Client, platform: Platform
) -> None:
    exercise_page = launch(tool, platform)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(exercise_page)
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        # The token left the address bar; the identity is the launch's, not a typed id.
        assert "lti_session" not in page.url
        assert page.url.endswith(f"/exercises/{SEED}")
        expect(page.locator("#student-id")).to_be_hidden()

        page.locator(".cm-content").click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(CORRECT)
        page.locator("#submit").click()
        expect(page.locator("#status")).to_contain_text("Graded", timeout=60_000)
        report = page.locator("#report")
        expect(report.locator(".verdict")).to_contain_text("All tests passed")
        expect(report).not_to_contain_text("null")  # no diagnosis: no section, not "null"
        history = page.locator("#history li")
        expect(history).to_have_count(1)
        expect(history.first).to_contain_text("passed, 10 / 10")
        page.screenshot(path=SHOTS / "lti-launch-passed.png", full_page=True)
        # docs/images/lti-launch.png: what the student sees, the workspace alone.
        top, end = page.locator("#solution").bounding_box(), history.first.bounding_box()
        assert top is not None and end is not None
        height = end["y"] + end["height"] + 16 - top["y"]
        page.screenshot(
            path=SHOTS / "lti-launch.png", full_page=True, clip={**top, "height": height}
        )

        # The same tab keeps working as the launched student after a reload.
        page.reload()
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        expect(page.locator("#history li")).to_have_count(1)
        browser.close()
    assert errors == []
    api_calls = [urlparse(url).path for url in requests if "/submissions" in url]
    assert api_calls and all(path.startswith("/lti/submissions") for path in api_calls)
    assert not any("lti_session" in url for url in requests)

    wait_until(lambda: len(platform.scores) == 1)
    (score,) = platform.scores
    assert score["userId"] == "student-42"
    assert score["scoreGiven"] == score["scoreMaximum"] > 0
    assert score["gradingProgress"] == "FullyGraded"
    assert platform.refusals == []
