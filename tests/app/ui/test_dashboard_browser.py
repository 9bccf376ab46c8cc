"""The course dashboard as its staff use it, on the real server (`autograder serve`, keys
required) with the demo course seeded (1,000 students, every exercise, up to 20 attempts each):
Debian's Chromium, headless, driven by Playwright. Opened with a key (from an LMS launch:
tests/app/lti/test_lti_dashboard_browser.py), every figure it shows is checked against the staff
API's answer; a student's submission opens with its code beside its report; the policy is saved;
a regrade's progress is followed; every view passes axe-core's WCAG 2.2 A/AA rules, at a
laptop's width and a phone's, where it fits the screen. The screenshots of docs/instructors.md
and docs/accessibility.md land in docs/images."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from app_support import SEED
from browser_support import (
    IMAGES,
    assert_fits,
    assert_no_axe_violations,
    open_page,
    skip_without_a_browser,
)
from dashboard_support import (
    COURSE,
    Served,
    check_overview,
    number,
    percent,
    serve_demo_course,
    sign_in,
)
from playwright.sync_api import Browser, Page, ViewportSize, expect

from grader.catalog import Catalog

pytestmark = pytest.mark.slow
skip_without_a_browser()

LAPTOP = ViewportSize(width=1366, height=768)
TABLET = ViewportSize(width=768, height=1024)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Served]:
    with serve_demo_course(tmp_path_factory.mktemp("serve"), catalog, students=1000) as served:
        yield served


def check_exercise(page: Page, stats: dict[str, Any]) -> None:
    figures = page.locator(".key-figures dd")
    expect(figures.nth(0)).to_have_text(number(stats["submissions"]))
    expect(figures.nth(1)).to_have_text(number(stats["students"]))
    expect(figures.nth(2)).to_contain_text(number(stats["passed_students"]))
    expect(figures.nth(4)).to_have_text(number(stats["outdated_submissions"]))
    histogram = page.locator("#score-histogram table.data tbody td")
    expect(histogram).to_have_text([number(b["students"]) for b in stats["score_histogram"]])
    rates = page.locator("#test-pass-rates table.data tbody td")
    expect(rates).to_have_text(
        [f"{percent(t['pass_rate'])} of {number(t['submissions'])}" for t in stats["tests"]]
    )
    attempts = page.locator("#attempts-to-pass table.data tbody td")
    expect(attempts).to_have_text(
        [number(b["students"]) for b in stats["attempts_to_pass"]["histogram"]]
    )
    misconceptions = stats["misconceptions"]
    failing = misconceptions["failing_students"]
    known = sorted(misconceptions["known"], key=lambda one: -one["students"])
    sentences = page.locator("#misconceptions .sentences li")
    expect(sentences).to_have_count(len(known) + 1)
    for sentence, one in zip(sentences.all()[: len(known)], known, strict=True):
        share = f"{percent(one['students'] / failing)} of failing students"
        counts = f"({number(one['students'])} of {number(failing)})"
        expect(sentence).to_contain_text(f"{share} {counts}")
        expect(sentence).to_contain_text(one["code"])
    unrecognised = misconceptions["unrecognised"]["students"]
    expect(sentences.last).to_contain_text(f"({number(unrecognised)} of {number(failing)})")
    expect(sentences.last).to_contain_text("matched no known mistake")
    properties = page.locator("#properties tbody tr")
    expect(properties).to_have_count(len(stats["properties"]))


def test_an_instructor_with_a_key_sees_the_figures_the_api_gives(
    browser: Browser, served: Served
) -> None:
    page = browser.new_page(viewport=LAPTOP)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(urlparse(request.url).path))
    sign_in(page, served)
    check_overview(page, served)
    # The first exercise anyone tried opens below the table, drawn from one call.
    exercises = served.get("/exercises")["exercises"]
    first = next(one["exercise"] for one in exercises if one["submissions"])
    expect(page.locator(".exercise-detail h2 .slug")).to_have_text(first)
    check_exercise(page, served.get(f"/exercises/{first}/stats"))
    expect(page.locator("#score-histogram canvas")).to_be_visible()
    assert_no_axe_violations(page, "the dashboard's Exercises view, an exercise's figures open")
    page.screenshot(path=IMAGES / "dashboard-laptop.png", full_page=True)

    # Another exercise, and back: the address names the view.
    page.locator(f'#exercises tr[data-exercise="{SEED}"] a').click()
    expect(page.locator(".exercise-detail h2 .slug")).to_have_text(SEED)
    assert page.url.endswith(f"?view=exercises&exercise={SEED}")
    check_exercise(page, served.get(f"/exercises/{SEED}/stats"))
    page.go_back()
    expect(page.locator(".exercise-detail h2 .slug")).to_have_text(first)
    assert all("/students" not in path for path in requests)
    page.close()


def test_the_students_are_paged_and_a_submission_opens_beside_its_report(
    browser: Browser, served: Served
) -> None:
    page = browser.new_page(viewport=LAPTOP)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(urlparse(request.url).path))
    sign_in(page, served, "?view=students")
    expect(page.locator("#students-page")).to_have_text("1,000 students · page 1 of 40")
    expect(page.locator("#students tbody tr")).to_have_count(25)
    assert_no_axe_violations(page, "the dashboard's Students view")
    page.locator("#next-page").click()
    expect(page.locator("#students tbody tr").first).to_have_attribute(
        "data-student", "student-0026"
    )
    # Who to help first: the fewest exercises passed, from the same one answer.
    students = served.get("/students")
    fewest = min(
        (sum(one["passed"] for one in row["exercises"].values()), row["student_id"])
        for row in students["students"]
    )
    page.locator("#student-order").select_option("passed")
    first = page.locator("#students tbody tr").first
    expect(first).to_have_attribute("data-student", fewest[1])
    expect(first.locator("td").first).to_have_text(f"{fewest[0]} of {len(students['exercises'])}")
    page.locator("#student-order").select_option("id")
    page.locator("#student-filter").fill("student-042")
    expect(page.locator("#students-page")).to_have_text("10 students · page 1 of 1")
    # A thousand students, one request.
    assert requests.count(f"/v1/courses/{COURSE}/students") == 1

    page.locator('#students tr[data-student="student-0421"] button').click()
    student = served.get("/students/student-0421")
    rows = page.locator("#student-exercises tbody tr")
    expect(rows).to_have_count(len(student["exercises"]))
    for row, exercise in zip(rows.all(), student["exercises"], strict=True):
        expect(row.locator("td").nth(3)).to_have_text(number(exercise["attempts"]))
    submissions = page.locator("#student-submissions tbody tr")
    expect(submissions).to_have_count(len(student["submissions"]))

    newest = student["submissions"][0]
    page.locator(f'#student-submissions tr[data-submission="{newest["id"]}"] button').click()
    submission = served.api.get(f"/v1/submissions/{newest['id']}").json()
    code = page.locator("#submission-code .cm-content")
    first_line = submission["source"].strip().splitlines()[0]
    expect(code).to_contain_text(first_line)
    expect(code).to_have_attribute("aria-readonly", "true")
    verdict = {"passed": "All tests passed", "failed": "Some tests failed"}
    report = page.locator("#submission-report")
    expect(report.locator(".verdict")).to_contain_text(
        verdict.get(submission["report"]["status"], "")
    )
    expect(report.locator("table.tests tbody tr")).to_have_count(len(submission["report"]["tests"]))
    assert_no_axe_violations(page, "a student's view, a submission open beside its report")
    page.screenshot(path=IMAGES / "dashboard-student.png", full_page=True)
    page.close()


def test_one_students_regrade_is_followed_until_done(browser: Browser, served: Served) -> None:
    student = served.get("/students/student-0007")
    fewest = min(student["exercises"], key=lambda one: one["attempts"])
    page = browser.new_page(viewport=LAPTOP)
    sign_in(page, served, "?view=students&student=student-0007")
    row = page.locator(f'#student-exercises tr[data-exercise="{fewest["exercise"]}"]')
    row.locator("button", has_text="Regrade").click()
    status = page.locator("#dash-status")
    # Graded again in the real sandbox, then the student's view is drawn anew.
    expect(status).to_contain_text(
        f"Regraded {fewest['attempts']} of {fewest['attempts']} submissions", timeout=180_000
    )
    regrades = served.get(f"/regrades?exercise={fewest['exercise']}")["regrades"]
    (regrade,) = [one for one in regrades if one["student_id"] == "student-0007"]
    assert regrade["status"] == "done"
    expect(page.locator("#student-exercises tbody tr")).to_have_count(len(student["exercises"]))
    page.close()


# Every view the navigation offers, and a student's; each drawn once its data is in.
LOADED_MS = 60_000
VIEWS = {
    "exercises": "?view=exercises",
    "students": "?view=students",
    "concepts": "?view=concepts",
    "student": "?view=students&student=student-0007",
}


@pytest.mark.parametrize("width", [1280, 390])
def test_every_view_fits_the_screen_and_passes_the_wcag_rules(
    browser: Browser, served: Served, width: int
) -> None:
    page = browser.new_page(viewport=ViewportSize(width=width, height=844))
    # A thousand students' figures: a busy machine takes more than the usual few seconds.
    sign_in(page, served, VIEWS["exercises"], ready_ms=LOADED_MS)
    page.screenshot(path=IMAGES / f"dashboard-{width}.png")  # docs/accessibility.md's
    for name, path in VIEWS.items():
        if name != "exercises":
            page.goto(served.dashboard + path)  # the key is kept in this tab
            ready = page.locator("body")
            expect(ready).to_have_attribute("data-ready", "true", timeout=LOADED_MS)
        what = f"the dashboard's {name} view at {width} px"
        assert_fits(page, what, width)
        assert_no_axe_violations(page, what)
    page.close()


def test_on_a_tablet_the_page_fits_the_screen(browser: Browser, served: Served) -> None:
    page = browser.new_page(viewport=TABLET)
    sign_in(page, served)
    expect(page.locator("#timeline canvas")).to_be_visible()
    # Nothing wider than the screen: tables scroll in their own box, figures stack.
    assert page.evaluate("document.documentElement.scrollWidth") <= TABLET["width"]
    page.screenshot(path=IMAGES / "dashboard-tablet.png", full_page=True)
    page.close()


def test_the_gradebook_downloads_with_the_pages_credential(
    browser: Browser, served: Served
) -> None:
    page = browser.new_page(viewport=LAPTOP, accept_downloads=True)
    sign_in(page, served)
    with page.expect_download() as download:
        page.locator("#gradebook").click()
    path = download.value.path()
    expected = served.api.get(f"/v1/courses/{COURSE}/gradebook.csv").content
    assert Path(path).read_bytes() == expected
    page.close()


def test_a_regrade_started_on_the_page_shows_its_progress(browser: Browser, served: Served) -> None:
    page = browser.new_page(viewport=LAPTOP)
    sign_in(page, served, f"?exercise={SEED}")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#regrade").click()
    progress = page.locator("#regrade-progress")
    expect(progress).to_be_visible()
    expect(page.locator("#regrade-status")).to_contain_text("Regrading")
    expect(page.locator("#regrade")).to_be_disabled()
    regrades = served.get(f"/regrades?exercise={SEED}")["regrades"]
    (regrade,) = [one for one in regrades if one["student_id"] is None]
    assert regrade["total"] == served.get(f"/exercises/{SEED}/stats")["submissions"]
    expect(progress).to_have_attribute("max", str(regrade["total"]))
    assert_no_axe_violations(page, "the dashboard, a regrade under way")
    page.screenshot(path=IMAGES / "dashboard-regrade.png")

    # A reload finds the regrade under way; cancelled, the page says how far it got.
    page.reload()
    expect(page.locator("#sign-in")).to_be_hidden()
    expect(page.locator("#regrade-status")).to_contain_text("Regrading")
    cancelled = served.api.delete(f"/v1/courses/{COURSE}/regrades/{regrade['id']}")
    assert cancelled.status_code == 200, cancelled.text
    expect(page.locator("#regrade-status")).to_contain_text("Cancelled after")
    expect(page.locator("#regrade")).to_be_enabled()
    page.close()


def test_the_policy_form_saves_and_the_figures_follow(browser: Browser, served: Served) -> None:
    exercise = served.get("/exercises")["exercises"][2]["exercise"]
    page = browser.new_page(viewport=LAPTOP)
    sign_in(page, served, f"?exercise={exercise}")
    expect(page.locator("#policy-gradebook")).to_have_value("best")
    page.locator("#policy-gradebook").select_option("latest")
    page.locator("#policy-attempts").fill("5")
    page.locator("#policy button[type=submit]").click()
    expect(page.locator("#policy-status")).to_have_text(
        "Give both the attempts and the hours, or neither."
    )
    page.locator("#policy-hours").fill("24")
    page.locator("#policy button[type=submit]").click()
    expect(page.locator("#dash-status")).to_have_text("Policy saved.")
    policy = served.get(f"/exercises/{exercise}/policy")
    assert policy == {
        "gradebook": "latest",
        "attempts": 5,
        "window_s": 24 * 3600,
        "due_at": None,
        "late_policy": "accept",
        "penalty_per_day": None,
        "lms_due_at": None,
    }
    # The figures were drawn again with the latest scores.
    expect(page.locator(".exercise-detail > p.facts")).to_contain_text("latest score")
    check_exercise(page, served.get(f"/exercises/{exercise}/stats"))
    reset = {"gradebook": "best", "attempts": None, "window_s": None}
    policy_url = f"/v1/courses/{COURSE}/exercises/{exercise}/policy"
    assert served.api.put(policy_url, json=reset).is_success
    page.close()


def test_a_key_of_another_course_is_asked_to_sign_in_again(
    browser: Browser, served: Served
) -> None:
    page = browser.new_page(viewport=LAPTOP)
    open_page(page, f"{served.url}/courses/another-course/dashboard")
    page.locator("#api-key").fill(served.key)
    page.locator("#sign-in button[type=submit]").click()
    expect(page.locator("#sign-in-error")).to_contain_text(
        "Not signed in as staff of another-course"
    )
    expect(page.locator("#view")).to_be_empty()
    assert_no_axe_violations(page, "the dashboard's sign-in, a key refused")
    page.close()
