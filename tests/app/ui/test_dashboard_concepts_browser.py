"""The dashboard's concepts view on the real server with the demo course seeded, in Debian's
Chromium driven by Playwright: its curves, the students who hold each concept now and where,
every number as the staff API gives it, and its files downloaded with the page's credential.
The screenshot of docs/instructors.md lands in docs/images."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import IMAGES, skip_without_a_browser
from dashboard_support import COURSE, Served, number, percent, serve_demo_course, sign_in
from playwright.sync_api import Browser, ViewportSize, expect

from grader.catalog import Catalog

pytestmark = pytest.mark.slow
skip_without_a_browser()

LAPTOP = ViewportSize(width=1366, height=768)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Served]:
    with serve_demo_course(tmp_path_factory.mktemp("serve"), catalog, students=200) as served:
        yield served


def test_the_concepts_view_shows_the_figures_the_api_gives(
    browser: Browser, served: Served
) -> None:
    figures = served.get("/concepts")
    held = [one for one in figures["concepts"] if any(one["weekly"])]
    page = browser.new_page(viewport=LAPTOP)
    sign_in(page, served)
    page.locator('.dash-nav a[data-view="concepts"]').click()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    assert page.url.endswith("?view=concepts")

    expect(page.locator("#concept-curves canvas")).to_be_visible()
    weeks = page.locator("#concept-curves table.data tbody th")
    expect(weeks).to_have_text([f"week of {week['start']}" for week in figures["weeks"]])
    rows = page.locator("#concept-exercises tbody tr")
    expect(rows).to_have_count(len(held))
    students = figures["students"]
    for row, one in zip(rows.all(), held, strict=True):
        expect(row.locator("th")).to_have_text(one["concept"].replace("-", " "))
        share = f"{percent(one['students'] / students)} of students"
        expect(row).to_contain_text(f"{share} ({number(one['students'])} of {number(students)})")
        for slug, count in one["exercises"].items():
            expect(row).to_contain_text(f"{slug}: {number(count)}")
    now = page.locator("#concepts-now table.data tbody td")
    expect(now).to_have_text([number(one["students"]) for one in held if one["students"]])
    page.screenshot(path=IMAGES / "dashboard-concepts.png", full_page=True)
    page.close()


@pytest.mark.parametrize("file_format", ["csv", "json"])
def test_the_concept_figures_download_with_the_page_s_credential(
    browser: Browser, served: Served, file_format: str
) -> None:
    page = browser.new_page(viewport=LAPTOP, accept_downloads=True)
    sign_in(page, served, "?view=concepts")
    with page.expect_download() as download:
        page.locator(f"#concepts-{file_format}").click()
    assert download.value.suggested_filename == f"{COURSE}-concepts.{file_format}"
    expected = served.api.get(f"/v1/courses/{COURSE}/concepts.{file_format}").content
    assert Path(download.value.path()).read_bytes() == expected
    page.close()
