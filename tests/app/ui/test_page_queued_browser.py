"""A student whose submission waits in line sees their place and an estimate on the exercise
page, and the page follows it by long poll (GET ?wait) to its report: the real server with one
grading slot, held by slow submissions of other students."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from app_support import CORRECT, MISSING_SCALING, SEED
from browser_support import (
    IMAGES,
    assert_no_axe_violations,
    open_page,
    skip_without_a_browser,
    type_solution,
)
from playwright.sync_api import Browser, Request, expect
from test_server import free_port, server

pytestmark = pytest.mark.slow
skip_without_a_browser()

# A few seconds of work in each sandboxed child, well within the exercise's CPU limit.
SLOW = f"sum(range(60_000_000))\n{MISSING_SCALING}"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    with server(tmp_path_factory.mktemp("serve"), port, AUTOGRADER_SANDBOX_SLOTS="1"):
        yield f"http://127.0.0.1:{port}"


def test_a_queued_submission_shows_its_place_in_line(browser: Browser, base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=120) as api:
        for student in ("pace-1", "pace-2"):  # a recent pace to estimate from
            graded = api.post(
                "/v1/submissions?wait=true",
                json={"exercise": SEED, "source": CORRECT, "student_id": student},
            )
            assert graded.status_code == 200, graded.text
        for student in ("busy-1", "busy-2"):  # the one slot is held, and one waits behind it
            ahead = api.post(
                "/v1/submissions", json={"exercise": SEED, "source": SLOW, "student_id": student}
            )
            assert ahead.status_code == 202, ahead.text

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    asked: list[str] = []

    def note(request: Request) -> None:
        if re.search(r"/v1/submissions/[^/?]+", request.url):
            asked.append(request.url)

    page.on("request", note)
    open_page(page, f"{base_url}/exercises/{SEED}")
    type_solution(page, CORRECT)
    page.locator("#submit").click()
    status = page.locator("#status")
    # The estimate's words depend on how fast the two graded first went: any of them will do.
    expect(status).to_contain_text(
        re.compile(r"Queued: \d+(st|nd|rd|th) in line, (about \d+ (s|min)|any moment now)")
    )
    assert_no_axe_violations(page, "the exercise page, its submission queued")
    page.screenshot(path=IMAGES / "page-queued.png")
    expect(status).to_contain_text("Graded", timeout=90_000)
    assert any(url.endswith("?wait=25") for url in asked), asked
