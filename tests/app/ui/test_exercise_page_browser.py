"""The exercise page as a person uses it: Debian's Chromium, headless, driven by Playwright, on
the real server (`autograder serve`, real sandbox). Type a correct and a wrong solution, submit,
read the report and the history; by keyboard alone; then on a phone-sized screen and inside an
iframe. Each state passes axe-core's WCAG 2.2 A/AA rules. Screenshots land in var/screenshots for
a person to look at."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from app_support import CORRECT, MISSING_SCALING, SEED
from browser_support import (
    IMAGES,
    SHOTS,
    assert_fits,
    assert_no_axe_violations,
    open_page,
    phone,
    skip_without_a_browser,
    submit,
    type_solution,
)
from playwright.sync_api import Browser, Locator, Page, expect
from test_server import free_port, server

pytestmark = pytest.mark.slow
skip_without_a_browser()


# The port of the LMS's course page that frames the exercise page: an allowed frame ancestor.
COURSE_PORT = free_port()


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    course = f'["http://localhost:{COURSE_PORT}"]'
    with server(tmp_path_factory.mktemp("serve"), port, AUTOGRADER_FRAME_ANCESTORS=course):
        yield f"http://127.0.0.1:{port}"


def test_a_student_solves_the_seed_exercise(browser: Browser, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{base_url}/exercises/{SEED}")
    expect(page.locator("h1")).to_have_text("Multi-Headed Self-Attention")
    expect(page.locator(".cm-content")).to_contain_text("class MultiHeadedSelfAttention")

    # Keyboard first: the skip link, then the editor it leads to.
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()

    type_solution(page, CORRECT)
    submit(page)
    report = page.locator("#report")
    expect(report.locator(".verdict")).to_contain_text("All tests passed")
    expect(report.locator(".verdict")).to_contain_text("10 of 10 tests passed")
    expect(report.locator("tbody tr.failed")).to_have_count(0)
    assert_no_axe_violations(page, "the exercise page with a passed report")
    page.screenshot(path=SHOTS / "desktop-passed.png", full_page=True)

    type_solution(page, MISSING_SCALING)
    submit(page)
    expect(report.locator(".verdict")).to_contain_text("Some tests failed")
    expect(report.locator(".diagnosis")).to_contain_text("without the 1/sqrt(d) scaling")
    first = report.locator("tbody tr", has_text="batch 1, 2 heads")
    expect(first.locator(".badge")).to_have_text("wrong output")
    compare = first.locator("table.compare")
    expect(compare.locator("th")).to_have_text(["Expected", "Your output"])
    expect(compare.locator("caption")).to_contain_text("First mismatch, at index [")
    expect(first.locator("p.message")).to_contain_text("max abs error")  # said there only
    expect(first.locator(".facts")).to_have_count(0)
    hidden = report.locator("tbody tr", has=page.locator(".tag", has_text="hidden"))
    expect(hidden.first).to_contain_text("hidden test: pass or fail only")
    expect(hidden.locator("table.compare")).to_have_count(0)
    assert_no_axe_violations(page, "the exercise page with a failed report")
    page.screenshot(path=SHOTS / "desktop-missing-scaling.png", full_page=True)
    page.locator("#report-heading").scroll_into_view_if_needed()
    page.screenshot(path=IMAGES / "exercise-page.png")  # docs/web.md's first picture

    # Past submissions, newest first; opening one shows its report again.
    history = page.locator("#history li")
    expect(history).to_have_count(2)
    expect(history.nth(0)).to_contain_text("failed, 0 / 10")  # no hidden point either
    expect(history.nth(1)).to_contain_text("passed, 10 / 10")
    history.nth(1).locator("button").click()
    expect(report.locator(".verdict")).to_contain_text("All tests passed")

    # The draft survives a reload.
    page.wait_for_timeout(500)
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    # The editor renders the lines in view: bring it into view, scrolled to the draft's end.
    page.locator("#editor").scroll_into_view_if_needed()
    page.locator(".cm-scroller").evaluate("(node) => node.scrollTo(0, node.scrollHeight)")
    expect(page.locator(".cm-content")).to_contain_text("scores = nn.functional.softmax")
    expect(page.locator(".cm-content")).not_to_contain_text("(attention_dim ** 0.5)")
    expect(page.locator("#history li")).to_have_count(2)
    page.close()


def tab_into(page: Page, target: Locator, presses: int = 12) -> None:
    """Press Tab until the focus is on `target` or inside it."""
    for _ in range(presses):
        if target.evaluate("(node) => node.contains(document.activeElement)"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{presses} presses of Tab never reached {target}")


def test_a_student_submits_and_hears_the_verdict_by_keyboard_alone(
    browser: Browser, base_url: str
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{base_url}/exercises/{SEED}")
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    page.keyboard.press("Enter")  # to the editor's section, past the statement
    editor = page.get_by_role("textbox", name="Code editor: your solution")
    tab_into(page, editor)
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(CORRECT)
    expect(editor).to_contain_text("class MultiHeadedSelfAttention")
    # Tab indents in the editor; after Esc it moves on. Typing asks for completions, and an Esc
    # while they are pending closes them instead: a second Esc is safe either way.
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Submit")).to_be_focused()
    page.keyboard.press("Enter")

    # The verdict is said by a polite live region, as assistive technology reads it.
    status = page.get_by_role("status").filter(has_text="Graded")
    expect(status).to_have_text("Graded: passed, 10 / 10", timeout=60_000)
    expect(status).to_have_attribute("aria-live", "polite")
    expect(status).to_match_aria_snapshot('- status: "Graded: passed, 10 / 10"')
    report = page.get_by_role("region", name="Report")
    expect(report).to_contain_text("All tests passed")
    tab_into(page, report)  # and the keyboard goes on into it
    page.close()


def test_the_page_works_on_a_phone(browser: Browser, base_url: str) -> None:
    context = phone(browser)
    page = context.new_page()
    open_page(page, f"{base_url}/exercises/{SEED}")
    page.get_by_role("tab", name="Code").tap()
    type_solution(page, MISSING_SCALING)
    submit(page)
    expect(page.locator("#report .diagnosis")).to_be_visible()  # the Report pane, shown
    assert_fits(page, "the exercise page on a phone")
    assert_no_axe_violations(page, "the exercise page on a phone, its Report pane shown")
    page.screenshot(path=SHOTS / "phone-missing-scaling.png", full_page=True)
    page.evaluate("document.getElementById('report-heading').scrollIntoView()")
    page.screenshot(path=IMAGES / "exercise-page-390.png")  # docs/accessibility.md's
    context.close()


@contextmanager
def course_page(html: str, port: int = COURSE_PORT) -> Iterator[str]:
    """A page of another origin (an LMS's course page) on loopback: Chromium lets only a local
    page frame a local address."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{httpd.server_address[1]}/course"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_page_works_inside_an_iframe(browser: Browser, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    iframe = (
        f'<h1>Course</h1><iframe src="{base_url}/exercises/{SEED}" title="exercise" '
        'style="width:100%;height:780px"></iframe>'
    )
    with course_page(iframe) as lms:
        page.goto(lms)
        frame = page.frame_locator("iframe")
        expect(frame.locator("body")).to_have_attribute("data-ready", "true")
        frame.locator(".cm-content").click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(CORRECT)
        frame.locator("#submit").click()
        expect(frame.locator("#report .verdict")).to_contain_text(
            "All tests passed", timeout=60_000
        )
        page.screenshot(path=SHOTS / "iframe-passed.png")
    page.close()


def test_a_site_that_is_not_an_allowed_frame_ancestor_cannot_frame_the_page(
    browser: Browser, base_url: str
) -> None:
    page = browser.new_page()
    refusals: list[str] = []
    page.on("console", lambda message: refusals.append(message.text))
    iframe = f'<iframe src="{base_url}/exercises/{SEED}" title="exercise"></iframe>'
    with course_page(iframe, port=free_port()) as elsewhere:
        page.goto(elsewhere)
        expect(page.frame_locator("iframe").locator("body")).not_to_have_attribute(
            "data-ready", "true"
        )
    assert any("frame-ancestors" in refusal for refusal in refusals), refusals
    page.close()
