"""A course without an LMS, keys required: a student without a link is told how to get in; with
the link an instructor minted (`autograder students link`), they solve the exercise on the page,
reopen a past submission's code, and are signed out once the link is revoked. Real server, real
sandbox, Debian's Chromium; screenshots in var/screenshots."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from app_support import CORRECT, MISSING_SCALING, SEED
from browser_support import (
    SHOTS,
    Deployment,
    keyed_deployment,
    open_page,
    skip_without_a_browser,
    submit,
    type_solution,
)
from playwright.sync_api import Browser, expect

pytestmark = pytest.mark.slow
skip_without_a_browser()


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with keyed_deployment(tmp_path_factory.mktemp("serve")) as course:
        yield course


def test_without_a_link_the_page_says_how_to_get_in(browser: Browser, course: Deployment) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, f"{course.url}/exercises/{SEED}")
    notice = page.locator("#sign-in")
    expect(notice).to_contain_text("Sign in to submit.")
    expect(notice).to_contain_text("personal link your instructor sent you")
    expect(page.locator("#submit")).to_be_disabled()
    expect(page.locator("#history")).to_contain_text("Sign in to see your submissions.")
    expect(page.locator("body")).not_to_contain_text("HTTP 401")
    page.screenshot(path=SHOTS / "student-link-signed-out.png")
    page.close()


def test_a_linked_student_solves_the_exercise_until_the_link_is_revoked(
    browser: Browser, course: Deployment
) -> None:
    link = course.command("students", "link", "--course", "ml-101", "--student", "ada")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, link)  # the list of exercises
    assert "student_token" not in page.url
    expect(page.locator("#who")).to_have_text("Signed in as ada · Sign out")
    page.locator(f'a[href="/exercises/{SEED}"]').click()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#who")).to_contain_text("Signed in as ada")
    expect(page.locator("#student-id")).to_be_hidden()

    type_solution(page, MISSING_SCALING)
    submit(page)
    type_solution(page, CORRECT)
    submit(page)
    expect(page.locator("#report .verdict")).to_contain_text("All tests passed")
    history = page.locator("#history li")
    expect(history).to_have_count(2)

    # The first attempt's code comes back into the editor, with its report.
    history.nth(1).locator("button").click()
    expect(page.locator("#report .verdict")).to_contain_text("Some tests failed")
    scaling = "scores = scores / (attention_dim ** 0.5)"  # what the first attempt lacked
    expect(page.locator(".cm-content")).to_contain_text(scaling)
    page.locator("#load-code").click()
    expect(page.locator(".cm-content")).not_to_contain_text(scaling)
    expect(page.locator(".cm-content")).to_contain_text("scores = q @ torch.transpose(k, 1, 2)")
    page.screenshot(path=SHOTS / "student-link-past-code.png", full_page=True)

    course.command("students", "revoke", "--course", "ml-101", "--student", "ada")
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    notice = page.locator("#sign-in")
    expect(notice).to_contain_text("You are signed out: this student link is not valid")
    expect(page.locator("#submit")).to_be_disabled()
    page.screenshot(path=SHOTS / "student-link-revoked.png")
    page.close()


def test_a_student_sees_the_attempts_left_and_past_them_when_the_next_comes_back(
    browser: Browser, course: Deployment
) -> None:
    key = course.command("keys", "create", "--course", "ml-101", "--role", "instructor")
    policy = httpx.put(
        f"{course.url}/v1/courses/ml-101/exercises/{SEED}/policy",
        json={"gradebook": "best", "attempts": 1, "window_s": 3600},
        headers={"X-API-Key": key},
    )
    assert policy.status_code == 200, policy.text
    link = course.command(
        "students", "link", "--course", "ml-101", "--student", "grace", "--exercise", SEED
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, link)
    attempts = page.locator("#attempts")
    expect(attempts).to_have_text(
        "1 attempt left (1 attempt every hour). A pass, or a fault of the grader, does not count."
    )
    type_solution(page, MISSING_SCALING)
    submit(page)
    expect(attempts).to_contain_text("No attempts left for now (1 attempt every hour).")
    expect(attempts).to_contain_text("The next comes back at")
    page.locator("#submit").click()
    expect(page.locator("#status")).to_contain_text(
        "Not graded: you have used 1 attempt this exercise allows every hour."
    )
    page.screenshot(path=SHOTS / "attempts-used-up.png")
    page.close()


def test_a_student_reads_the_time_left_in_their_time_zone_then_that_it_closed(
    browser: Browser, course: Deployment
) -> None:
    key = course.command("keys", "create", "--course", "ml-101", "--role", "instructor")
    policy_url = f"{course.url}/v1/courses/ml-101/exercises/{SEED}/policy"
    due_at = datetime.now(UTC) + timedelta(days=2, hours=3, minutes=30)
    policy = {"gradebook": "best", "due_at": due_at.isoformat(), "late_policy": "close"}
    assert httpx.put(policy_url, json=policy, headers={"X-API-Key": key}).status_code == 200
    link = course.command(
        "students", "link", "--course", "ml-101", "--student", "hopper", "--exercise", SEED
    )
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo", locale="en-US"
    )
    page = context.new_page()
    open_page(page, link)
    due = page.locator("#due")
    expect(due).to_contain_text("Due ")
    expect(due).to_contain_text("GMT+9")  # the student's zone; the service sent UTC
    expect(due).to_contain_text("2 days 3 hours left (no submission is taken after it).")
    expect(due).to_have_attribute("data-state", "open")

    policy["due_at"] = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    assert httpx.put(policy_url, json=policy, headers={"X-API-Key": key}).status_code == 200
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(due).to_have_attribute("data-state", "closed")
    expect(due).to_contain_text("Closed: this was due ")
    type_solution(page, CORRECT)
    page.locator("#submit").click()
    expect(page.locator("#status")).to_contain_text("Not graded: this exercise was due at ")
    page.screenshot(path=SHOTS / "due-date-closed.png")
    httpx.put(policy_url, json={"gradebook": "best"}, headers={"X-API-Key": key})
    context.close()
