"""The course dashboard opened from the LMS: `lti1p3platform` launches the real server as the
course's Instructor, and Debian's Chromium, driven by Playwright, follows the redirect to the
dashboard, which works as the course's staff without a key: the token leaves the address bar,
and the figures shown are the staff API's."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from app_support import SEED
from browser_support import open_page, skip_without_a_browser
from dashboard_support import COURSE, Served, check_overview, serve_demo_course
from platform_support import Platform, launch_over_http, register_in, serve_platform
from playwright.sync_api import Browser, expect

from app.lti.roles import ROLES_CLAIM
from grader.catalog import Catalog

pytestmark = pytest.mark.slow
skip_without_a_browser()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Served]:
    with serve_demo_course(tmp_path_factory.mktemp("serve"), catalog, students=50) as served:
        yield served


def test_an_lms_instructor_launch_opens_the_dashboard_without_a_key(
    browser: Browser, served: Served
) -> None:
    with (
        httpx.Client(base_url=served.url, timeout=60) as tool,
        serve_platform(tool.get("/lti/jwks").json()) as platform,
    ):
        register_in(served.database, platform, course=COURSE)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        open_page(page, served.url + launch_as_instructor(tool, platform))
        # The token left the address bar; the page works as the course's staff.
        assert "staff_session" not in page.url
        expect(page.locator("#sign-in")).to_be_hidden()
        expect(page.locator("#who")).to_contain_text("Signed in from your course")
        expect(page.locator(".exercise-detail h2 .slug")).to_have_text(SEED)
        check_overview(page, served)
        # The tab keeps the session across a reload.
        page.reload()
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        expect(page.locator("#sign-in")).to_be_hidden()
        check_overview(page, served)
        page.close()


def launch_as_instructor(tool: httpx.Client, platform: Platform) -> str:
    """The LMS's launch of the SEED exercise's link, by its instructor, up to the redirect."""
    platform.next_launch.exercise = SEED
    platform.next_launch.user_id = "teacher-1"
    platform.next_launch.claims = {
        ROLES_CLAIM: ["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"]
    }
    location = launch_over_http(tool, platform)
    assert location.startswith(f"/courses/{COURSE}/dashboard?exercise={SEED}#staff_session=")
    return location
