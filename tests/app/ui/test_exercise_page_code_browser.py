"""The exercise page around the student's code, in Debian's Chromium on the real server: the lines
a report points at are marked in the editor and said; a reload mid-grading comes back to the
report; a past submission's code is reopened and the draft is one Undo away; long lines wrap; a
phone switches between statement, code and report in one tap. The screenshots of docs/web.md
land in docs/images."""

from __future__ import annotations

import re

import pytest
from app_support import CORRECT, MISSING_SCALING, SEED
from browser_support import (
    IMAGES,
    SHOTS,
    open_page,
    phone,
    skip_without_a_browser,
    submit,
    type_solution,
)
from playwright.sync_api import Browser, Page, Route, expect

pytestmark = pytest.mark.slow
skip_without_a_browser()

# The correct solution with one line broken: `def forward(...)` (line 14) loses its colon.
SYNTAX_ERROR = CORRECT.replace("-> torch.Tensor:\n", "-> torch.Tensor\n", 1)
# ...or with forward raising at line 15.
RAISES = CORRECT.replace("head_outputs = []\n", "head_outputs = [] + 1\n", 1)
# A wrong solution that takes its time, so that it is still being graded when the page reloads.
SLOW = MISSING_SCALING.replace(
    "super().__init__()\n", "super().__init__()\n        sum(range(2_000_000))\n", 1
)
LONG_LINE = f"{CORRECT}\n\ndef note():\n    return '{'a long line, ' * 17}'\n"


# Where each visual row of the editor's line holding `marker` starts, and where its first
# non-blank character is.
ROWS_OF_A_LINE = """(marker) => {
  const lines = [...document.querySelectorAll(".cm-line")];
  const line = lines.find((candidate) => candidate.textContent.includes(marker));
  const all = document.createRange();
  all.selectNodeContents(line);
  const rows = new Map();
  for (const box of all.getClientRects()) {
    if (box.width === 0) continue;
    const top = Math.round(box.top);
    rows.set(top, Math.min(rows.get(top) ?? Infinity, box.left));
  }
  const texts = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
  for (let node = texts.nextNode(); node; node = texts.nextNode()) {
    const at = node.data.search(/\\S/);
    if (at < 0) continue;
    const first = document.createRange();
    first.setStart(node, at);
    first.setEnd(node, at + 1);
    return [[...rows.values()], first.getBoundingClientRect().left];
  }
}"""


def marked_lines(page: Page) -> list[int]:
    """The numbers of the editor's lines a report marks (the gutter's markers)."""
    numbers: list[int] = page.evaluate(
        """() => [...document.querySelectorAll(".cm-editor .cm-line")]
            .map((line, i) => (line.querySelector(".cm-lintRange-error") ? i + 1 : 0))
            .filter(Boolean)"""
    )
    return numbers


def test_a_syntax_error_and_a_raising_line_are_marked_and_said(
    browser: Browser, base_url: str
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{base_url}/exercises/{SEED}")
    type_solution(page, SYNTAX_ERROR)
    submit(page)
    said = "Graded: refused, 0 / 10 (line 14 marked in the editor)"  # the reason is in the report
    expect(page.locator("#status")).to_have_text(said)
    expect(page.locator("#history li").first).to_contain_text(": refused, 0 / 10")
    expect(page.locator("#report .verdict")).to_contain_text("line 14: syntax error")
    expect(page.locator(".cm-gutter-lint .cm-lint-marker-error")).to_have_count(1)
    assert marked_lines(page) == [14]
    page.screenshot(path=IMAGES / "exercise-page-syntax-error.png")

    # Hovering the marked line says what the report said.
    page.locator(".cm-lintRange-error").hover()
    expect(page.locator(".cm-tooltip-lint")).to_contain_text("syntax error")

    # Putting the colon back takes the mark away.
    page.locator(".cm-lintRange-error").click()
    page.keyboard.press("End")
    page.keyboard.type(":")
    expect(page.locator(".cm-lintRange-error")).to_have_count(0)

    type_solution(page, RAISES)
    submit(page)
    expect(page.locator("#status")).to_contain_text("(line 15 marked in the editor)")
    raised = page.locator("#report tbody tr", has_text="raised TypeError at line 15")
    expect(raised.first).to_be_visible()
    assert marked_lines(page) == [15]
    page.close()

    context = phone(browser)
    page = context.new_page()
    open_page(page, f"{base_url}/exercises/{SEED}")
    page.get_by_role("tab", name="Code").tap()
    type_solution(page, SYNTAX_ERROR)
    submit(page)
    expect(page.locator("#report")).to_be_focused()  # the report pane, the status out of sight
    page.get_by_role("tab", name="Code").tap()
    assert marked_lines(page) == [14]
    page.screenshot(path=IMAGES / "exercise-page-syntax-error-phone.png")
    context.close()


def still_running_at_first(page: Page) -> list[str]:
    """The service's first answer about a submission says it is still running, as a slower
    grader's would, so the reloaded page has to follow it; returns the statuses the page read."""
    polled: list[str] = []

    def answer(route: Route) -> None:
        response = route.fetch()
        submission = response.json()
        if not polled:
            submission = {**submission, "status": "running", "finished_at": None, "report": None}
        polled.append(submission["status"])
        route.fulfill(response=response, json=submission)

    page.route(re.compile(r"/v1/submissions/[^/?]+(\?wait=\d+)?$"), answer)  # a long poll too
    return polled


def test_a_reload_mid_grading_comes_back_to_the_report(browser: Browser, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{base_url}/exercises/{SEED}")
    type_solution(page, SLOW)
    page.locator("#submit").click()
    expect(page.locator("#status")).to_contain_text(re.compile("Queued|Running"))
    polled = still_running_at_first(page)
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator(".cm-content")).to_contain_text("sum(range(2_000_000))")
    report = page.locator("#report")
    expect(report.locator(".verdict")).to_contain_text("Some tests failed", timeout=60_000)
    history = page.locator("#history li")
    expect(history.first).to_contain_text("failed, ")
    expect(history.first).not_to_contain_text("running")
    expect(page.locator("#load-code")).to_be_hidden()  # the editor holds that code already
    # Followed live, whatever the grader's speed: told "running" first, then polled to the end.
    assert (polled[0], polled[-1]) == ("running", "done")
    page.screenshot(path=IMAGES / "exercise-page-restored.png")

    # The same student's next visit, on a phone: the latest report is one tap away.
    context = phone(browser, page.context.storage_state())
    page.close()
    page = context.new_page()
    open_page(page, f"{base_url}/exercises/{SEED}")
    page.get_by_role("tab", name="Report").tap()
    expect(page.locator("#report .verdict")).to_contain_text("Some tests failed")
    expect(page.locator("#status")).to_contain_text("Your latest submission: ")
    page.screenshot(path=IMAGES / "exercise-page-restored-phone.png")
    context.close()


def test_a_past_submission_is_reopened_and_the_draft_comes_back(
    browser: Browser, base_url: str
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{base_url}/exercises/{SEED}")
    type_solution(page, SYNTAX_ERROR)
    submit(page)
    type_solution(page, CORRECT)
    submit(page)
    draft = "# my draft, not submitted"
    type_solution(page, draft)

    history = page.locator("#history li")
    expect(history).to_have_count(2)
    history.nth(1).locator("button").click()
    report = page.locator("#report")
    expect(report.locator(".verdict")).to_contain_text("Your submission was refused")
    expect(page.locator(".cm-content")).to_have_text(draft)  # nothing replaced unasked
    page.locator("#load-code").click()
    expect(page.locator(".cm-content")).to_contain_text("class MultiHeadedSelfAttention")
    expect(page.locator("#load-code")).to_be_hidden()
    assert marked_lines(page) == [14]  # the report shown is this code's

    history.nth(0).locator("button").click()
    expect(report.locator(".verdict")).to_contain_text("All tests passed")
    page.locator(".cm-content").click()
    page.keyboard.press("Control+z")
    expect(page.locator(".cm-content")).to_have_text(draft)
    page.close()


def test_a_long_line_wraps_on_a_laptop(browser: Browser, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{base_url}/exercises/{SEED}")
    type_solution(page, LONG_LINE)
    scroller = page.locator(".cm-scroller")
    clipped = scroller.evaluate("(node) => node.scrollWidth - node.clientWidth")
    assert clipped <= 0
    line = page.locator(".cm-line", has_text="return 'a long line").bounding_box()
    editor = page.locator("#editor").bounding_box()
    assert line is not None and editor is not None
    assert line["height"] > 40  # more than one row
    assert line["x"] + line["width"] <= editor["x"] + editor["width"]
    rows, indented_at = page.evaluate(ROWS_OF_A_LINE, "return 'a long line")
    assert len(rows) > 1 and min(rows[1:]) >= indented_at - 1  # wrapped under `return`
    page.screenshot(path=SHOTS / "long-line-wrapped.png")
    page.close()


def test_a_phone_reaches_the_editor_in_one_tap(browser: Browser, base_url: str) -> None:
    context = phone(browser)
    page = context.new_page()
    open_page(page, f"{base_url}/exercises/{SEED}")
    tabs = page.get_by_role("tab")
    expect(tabs).to_have_text(["Statement", "Code", "Report"])
    expect(page.get_by_role("tab", name="Statement")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#editor")).to_be_hidden()
    page.screenshot(path=IMAGES / "exercise-page-phone-tabs.png")

    page.get_by_role("tab", name="Code").tap()
    expect(page.locator(".cm-content")).to_be_in_viewport()
    expect(page.locator(".statement")).to_be_hidden()

    # From the keyboard: arrows move between the tabs, and the pane follows.
    page.get_by_role("tab", name="Code").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Report")).to_be_focused()
    expect(page.get_by_role("tabpanel")).to_contain_text("Past submissions")

    # The bar stays at the top while the statement scrolls.
    page.keyboard.press("Home")
    page.evaluate("window.scrollBy(0, 2000)")
    expect(page.get_by_role("tablist")).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    context.close()

    wide = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(wide, f"{base_url}/exercises/{SEED}")
    expect(wide.get_by_role("tablist")).to_be_hidden()
    expect(wide.locator(".statement")).to_be_visible()
    expect(wide.locator(".cm-content")).to_be_visible()
    wide.close()
