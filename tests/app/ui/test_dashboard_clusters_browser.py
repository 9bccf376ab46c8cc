"""Staff name the largest group of unexplained wrong answers on the dashboard, on the real server
with the demo course seeded (Debian's Chromium, headless, driven by Playwright): the groups shown
are the API's, the share of "matched no known mistake" falls, and a student's past report shows
the new diagnosis. The screenshot docs/instructors.md shows lands in docs/images."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from app_support import SEED
from browser_support import IMAGES, assert_no_axe_violations, skip_without_a_browser
from dashboard_support import Served, number, serve_demo_course, sign_in
from playwright.sync_api import Browser, ViewportSize, expect

from grader.catalog import Catalog

pytestmark = pytest.mark.slow
skip_without_a_browser()

LAPTOP = ViewportSize(width=1366, height=900)
# The exercise's figures, its groups and a student's page, each drawn from a few calls.
SLOW_MS = 20_000
MESSAGE = "Your attention is right on the visible tests but not at an edge of the input."
FIX = "Try a batch of one and a single token: no axis may be squeezed away."


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Served]:
    with serve_demo_course(tmp_path_factory.mktemp("serve"), catalog, students=300) as served:
        yield served


def test_staff_name_the_largest_unexplained_group_and_the_past_is_rediagnosed(
    browser: Browser, served: Served
) -> None:
    served.get("/exercises")  # each exercise's known mistakes read once, before the clock runs
    before = served.get(f"/exercises/{SEED}/stats")["misconceptions"]
    groups = served.get(f"/exercises/{SEED}/clusters")["clusters"]
    largest = groups[0]
    page = browser.new_page(viewport=LAPTOP)
    sign_in(page, served, f"?view=exercises&exercise={SEED}", ready_ms=SLOW_MS)
    shown = page.locator("#clusters article.cluster")
    expect(shown).to_have_count(len(groups))
    for article, group in zip(shown.all(), groups, strict=True):
        expect(article).to_have_attribute("data-key", group["key"])
        expect(article.locator("h4")).to_contain_text(f"{number(group['students'])} students")
    with_excerpt = next(i for i, group in enumerate(groups) if group["examples"][0]["excerpts"])
    excerpt = groups[with_excerpt]["examples"][0]["excerpts"][0]
    table = shown.nth(with_excerpt).locator(".cluster-example").first.locator("table.data")
    expect(table.locator("tbody td").nth(1)).to_have_text(str(excerpt["actual"][0]))
    shown.nth(with_excerpt).scroll_into_view_if_needed()

    first = shown.first
    first.locator("summary", has_text="Name this group").click()
    first.locator("input[name=code]").fill("edge-of-the-input")
    first.locator("textarea[name=message]").fill(MESSAGE)
    first.locator("textarea[name=fix]").fill(FIX)
    first.locator("input[value=output-contract]").check()
    assert_no_axe_violations(page, "the dashboard's unexplained groups, one being named")
    page.locator("#clusters").screenshot(path=IMAGES / "dashboard-clusters.png")
    first.locator("button[type=submit]").click()

    status = page.locator("#dash-status")
    expect(status).to_contain_text("Named edge-of-the-input", timeout=SLOW_MS)
    after = served.get(f"/exercises/{SEED}/stats")["misconceptions"]
    unknown = before["unrecognised"]["students"]
    # Its students are explained, but for those with another unexplained wrong answer too.
    fewer = after["unrecognised"]["students"]
    assert unknown - largest["students"] <= fewer < unknown
    sentences = page.locator("#misconceptions .sentences li")
    expect(sentences.last).to_contain_text(
        f"({number(fewer)} of {number(after['failing_students'])})"
    )
    expect(page.locator("#misconceptions")).to_contain_text("edge-of-the-input")
    expect(page.locator("#clusters .named")).to_contain_text(MESSAGE)
    expect(page.locator("#clusters article.cluster")).to_have_count(len(groups) - 1)

    # A student of the group, before the naming: their report now says it.
    past = largest["examples"][-1]
    page.goto(f"{served.dashboard}?view=students&student={past['student_id']}")
    row = page.locator(f'#student-submissions tr[data-submission="{past["submission_id"]}"]')
    row.locator("button").click(timeout=SLOW_MS)
    report = page.locator("#submission-report .diagnosis")
    expect(report).to_contain_text(MESSAGE)
    expect(report).to_contain_text(FIX)
    page.close()
