"""The course dashboard opened from the LMS: `lti1p3platform` launches the real server as the
course's Instructor, and Debian's Chromium, driven by Playwright, follows the redirect to the
dashboard, which works as the course's staff without a key: the token leaves the address bar,
and the figures shown are the staff API's. The launch brings the course's roster: the students
view lists who never submitted, and reads the roster again when asked."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

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

LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Served]:
    with serve_demo_course(tmp_path_factory.mktemp("serve"), catalog, students=50) as served:
        yield served


@dataclass
class Lms:
    tool: httpx.Client
    platform: Platform


@pytest.fixture(scope="module")
def lms(served: Served) -> Iterator[Lms]:
    """The LMS, registered once with the served tool; its launches offer the course's roster."""
    with (
        httpx.Client(base_url=served.url, timeout=60) as tool,
        serve_platform(tool.get("/lti/jwks").json()) as platform,
    ):
        register_in(served.database, platform, course=COURSE)
        platform.next_launch.offers_roster = True
        platform.roster = [
            {"user_id": "never-1", "name": "Nell Never", "roles": [LEARNER]},
            {"user_id": "teacher-1", "name": "Ivan Instructor", "roles": ["Instructor"]},
        ]
        yield Lms(tool, platform)


def test_an_lms_instructor_launch_opens_the_dashboard_without_a_key(
    browser: Browser, served: Served, lms: Lms
) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    open_page(page, served.url + launch_as_instructor(lms.tool, lms.platform))
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


def test_the_students_view_lists_the_roster_and_reads_it_again_when_asked(
    browser: Browser, served: Served, lms: Lms
) -> None:
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    open_page(page, served.url + launch_as_instructor(lms.tool, lms.platform))
    page.locator('.dash-nav a[data-view="students"]').click()
    status = page.locator("#roster-status")
    expect(status).to_contain_text("DL101: roster read", timeout=20_000)
    page.locator("#student-filter").fill("Nell")
    row = page.locator("#students tbody tr")
    expect(row).to_have_count(1)  # the instructor of the roster is no student
    expect(row).to_have_class("not-submitted")
    expect(row.locator("th")).to_contain_text("Nell Never")
    expect(row.locator("td").first).to_have_text("not submitted")

    lms.platform.roster.append({"user_id": "late-1", "name": "Lou Late", "roles": [LEARNER]})
    page.locator("#roster-sync").click()
    expect(page.locator("#dash-status")).to_contain_text("3 members", timeout=20_000)
    page.locator("#student-filter").fill("Lou")
    expect(page.locator("#students tbody tr")).to_have_count(1)
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
