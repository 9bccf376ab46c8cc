"""The LTI launch as a student's browser lives it: `lti1p3platform` (the LMS) launches the real
server (`autograder serve`); Debian's Chromium, driven by Playwright, follows the launch's redirect
to the exercise page, which works as the launched student: the token leaves the address bar, no
student id field, a correct solution is graded and its score lands in the platform's gradebook.
A refused launch's page passes axe-core's WCAG 2.2 A/AA rules and fits a phone's screen.
The screenshot lands in var/screenshots for a person to look at."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest
from app_support import CORRECT, SEED, wait_until
from browser_support import (
    IMAGES,
    SHOTS,
    assert_fits,
    assert_no_axe_violations,
    chromium,
    open_page,
    skip_without_a_browser,
    submit,
    type_solution,
)
from platform_support import Platform, launch_over_http, register_in, serve_platform
from playwright.sync_api import expect
from test_server import free_port, server

from app.core.db import Database

pytestmark = pytest.mark.slow
skip_without_a_browser()


@pytest.fixture
def tool(tmp_path: Path) -> Iterator[httpx.Client]:
    with server(tmp_path, free_port()) as (_, client):
        yield client


@pytest.fixture
def platform(tool: httpx.Client, tmp_path: Path) -> Iterator[Platform]:
    with serve_platform(tool.get("/lti/jwks").json()) as served:
        # What `autograder lti add-platform` and `lti contexts bind` store, in the server's
        # database.
        database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
        try:
            register_in(database, served)
        finally:
            database.close()
        yield served


def launch(tool: httpx.Client, platform: Platform) -> str:
    """The LMS's launch up to the tool's redirect; returns where it sends the browser."""
    platform.next_launch.exercise = SEED
    base = str(tool.base_url).rstrip("/")
    location = launch_over_http(tool, platform)
    assert location.startswith(f"/exercises/{SEED}#lti_session="), location
    return base + location


def test_a_launched_student_solves_the_exercise_and_the_grade_reaches_the_lms(
    tool: httpx.Client, platform: Platform
) -> None:
    exercise_page = launch(tool, platform)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        open_page(page, exercise_page)
        # The token left the address bar; the identity is the launch's, not a typed id.
        assert "lti_session" not in page.url
        assert page.url.endswith(f"/exercises/{SEED}")
        expect(page.locator("#student-id")).to_be_hidden()
        expect(page.locator("#crumbs")).to_be_hidden()  # the launch opens this exercise only

        type_solution(page, CORRECT)
        submit(page)
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

        # The same tab keeps working as the launched student after a reload, its report back.
        page.reload()
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        expect(page.locator("#history li")).to_have_count(1)
        expect(report.locator(".verdict")).to_contain_text("All tests passed")

        # The submission's code comes back into the editor, and the draft with one Undo.
        type_solution(page, "# a draft")
        history.first.locator("button").click()
        page.locator("#load-code").click()
        expect(page.locator(".cm-content")).to_contain_text("class MultiHeadedSelfAttention")
        page.keyboard.press("Control+z")
        expect(page.locator(".cm-content")).to_have_text("# a draft")
    api_calls = [urlparse(url).path for url in requests if "/submissions" in url]
    assert api_calls and all(path.startswith("/lti/submissions") for path in api_calls)
    assert not any("lti_session" in url for url in requests)

    wait_until(lambda: len(platform.scores) == 1)
    (score,) = platform.scores
    assert score["userId"] == "student-42"
    assert score["scoreGiven"] == score["scoreMaximum"] > 0
    assert score["gradingProgress"] == "FullyGraded"
    assert platform.refusals == []


def test_a_refused_login_tells_the_student_what_to_do_in_plain_words(tool: httpx.Client) -> None:
    base = str(tool.base_url).rstrip("/")
    refused = f"{base}/lti/login?iss=https://nobody.test&login_hint=1&target_link_uri=x"
    with chromium() as browser:
        for name, width in (("lti-refused-desktop", 1280), ("lti-refused-phone", 390)):
            page = browser.new_page(viewport={"width": width, "height": 700})
            open_page(page, refused, scripted=False)
            heading = "This exercise cannot be opened from your course"
            expect(page.locator("h1")).to_have_text(heading)
            expect(page.locator("body")).to_contain_text("Tell your instructor")
            expect(page.locator(".reference")).to_have_text(re.compile(r"Reference: [0-9a-f]{8}"))
            expect(page.locator("body")).not_to_contain_text("`")
            assert_no_axe_violations(page, f"the refused launch's page ({name})")
            assert_fits(page, "the refused launch's page", width)
            page.screenshot(path=IMAGES / f"{name}.png")
            page.close()
