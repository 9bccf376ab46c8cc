"""An operator's first hour on an open service (loopback, no keys), in Debian's Chromium: the
dashboard URL `autograder demo-course` prints opens the course's figures (no 404 before a key is
typed), and an exercise page opened `?as_student=` tries the attempt budget as a student meets
it. Real server, real sandbox; screenshots in var/screenshots."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from app_support import MISSING_SCALING, SEED
from browser_support import SHOTS, open_page, skip_without_a_browser, submit, type_solution
from playwright.sync_api import Browser, expect
from test_server import AUTOGRADER, free_port, server

pytestmark = pytest.mark.slow
skip_without_a_browser()


@pytest.fixture(scope="module")
def open_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The service's URL, and the environment its commands run with (as the operator's shell)."""
    data_dir, port = tmp_path_factory.mktemp("serve"), free_port()
    env = {**os.environ, "AUTOGRADER_DATA_DIR": str(data_dir), "AUTOGRADER_PORT": str(port)}
    with server(Path(data_dir), port):
        yield f"http://127.0.0.1:{port}", env


def test_the_url_demo_course_prints_opens_the_dashboard(
    browser: Browser, open_service: tuple[str, dict[str, str]]
) -> None:
    base, env = open_service
    made = subprocess.run(
        [AUTOGRADER, "demo-course", "demo", "--students", "20"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    url = made.stdout.splitlines()[-1]
    assert url.startswith(f"{base}/courses/demo/dashboard#key="), url
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, url)
    assert "key=" not in page.url  # taken out of the address bar
    expect(page.locator("#sign-in")).to_be_hidden()
    expect(page.locator("#course tbody tr").first).to_be_visible()
    expect(page.locator("body")).not_to_contain_text("404")
    page.screenshot(path=SHOTS / "operator-demo-dashboard.png")

    # The bare URL, in a fresh tab with no key: asked for one, not told off with a 404.
    bare = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(bare, f"{base}/courses/demo/dashboard")
    expect(bare.locator("#sign-in")).to_be_visible()
    expect(bare.locator("#sign-in-error")).to_be_empty()
    expect(bare.locator("body")).not_to_contain_text("404")
    page.close()
    bare.close()


def test_acting_as_a_student_the_page_meets_the_attempt_budget(
    browser: Browser, open_service: tuple[str, dict[str, str]]
) -> None:
    base, _ = open_service
    policy = httpx.put(  # the open service is the default course's staff
        f"{base}/v1/courses/default/exercises/{SEED}/policy",
        json={"gradebook": "best", "attempts": 1, "window_s": 3600},
    )
    assert policy.status_code == 200, policy.text
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{base}/exercises?as_student=ada")
    page.locator(f'a[href$="/exercises/{SEED}?as_student=ada"]').click()  # still acting
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#who")).to_have_text(
        "Acting as student ada (attempt budgets apply) · Act as staff again"
    )
    attempts = page.locator("#attempts")
    expect(attempts).to_contain_text("1 attempt left (1 attempt every hour).")
    type_solution(page, MISSING_SCALING)
    submit(page)
    expect(attempts).to_contain_text("No attempts left for now (1 attempt every hour).")
    page.locator("#submit").click()
    expect(page.locator("#status")).to_contain_text(
        "Not graded: you have used 1 attempt this exercise allows every hour."
    )
    expect(page.locator("#history li")).to_have_count(1)
    page.screenshot(path=SHOTS / "operator-acting-as-student.png")
    page.close()
