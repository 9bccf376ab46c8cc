"""The list of exercises as a student finds it: `/` leads there with the student link's token,
and each exercise says, in words, where this student stands (passed, the best score so far, not
tried), whatever other students did. Real server, real sandbox, Debian's Chromium, at desktop and
phone sizes, with axe-core's WCAG 2.2 A/AA rules; the screenshots of docs/web.md land in
docs/images."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from app_support import CORRECT, ROOT, SEED
from browser_support import (
    IMAGES,
    Deployment,
    assert_fits,
    assert_no_axe_violations,
    keyed_deployment,
    open_page,
    skip_without_a_browser,
)
from playwright.sync_api import Browser, Page, expect
from test_server import free_port, server

pytestmark = pytest.mark.slow
skip_without_a_browser()

OTHER = "scaled-dot-product-attention"
OTHER_FOLDER = ROOT / "exercises" / OTHER


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with keyed_deployment(tmp_path_factory.mktemp("serve")) as course:
        yield course


def graded(course: Deployment, link: str, exercise: str, source: str) -> dict[str, Any]:
    """The report of `source` submitted as the student of `link`."""
    token = link.partition("#student_token=")[2]
    response = httpx.post(
        f"{course.url}/v1/submissions?wait=true",
        json={"exercise": exercise, "source": source},
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    assert response.status_code == 200, response.text
    report: dict[str, Any] = response.json()["report"]
    return report


def standing(page: Page, exercise: str) -> Any:
    return page.locator(f'.catalog li[data-exercise="{exercise}"] .progress')


def test_a_student_lands_on_the_list_and_reads_where_they_stand(
    browser: Browser, course: Deployment
) -> None:
    def link(student: str) -> str:
        return course.command("students", "link", "--course", "ml-101", "--student", student)

    ada, grace = link("ada"), link("grace")
    assert graded(course, ada, SEED, CORRECT)["status"] == "passed"
    wrong = graded(course, ada, OTHER, (OTHER_FOLDER / "mistakes/missing_scaling.py").read_text())
    assert wrong["status"] == "failed"
    right = (OTHER_FOLDER / "solutions/add_mask_then_softmax.py").read_text()
    assert graded(course, grace, OTHER, right)["status"] == "passed"  # grace's, not ada's
    best = f"{wrong['score']:g} / {wrong['max_score']:g}"

    home = ada.replace("/exercises#", "/#")  # `/` keeps the fragment that carries the token
    for name, width, height in (("catalog-desktop", 1280, 800), ("catalog-phone", 390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        open_page(page, home)
        assert page.url == f"{course.url}/exercises"
        expect(page.locator("#who")).to_have_text("Signed in as ada · Sign out")
        expect(standing(page, SEED)).to_have_text("Your status: Passed")
        expect(standing(page, OTHER)).to_have_text(f"Your status: In progress · best {best}")
        untried = page.locator('.catalog .progress[data-status="not_tried"]')
        expect(untried.first).to_have_text("Your status: Not tried")
        assert untried.count() == page.locator(".catalog li").count() - 2
        assert_no_axe_violations(page, f"the list of exercises, signed in ({name})")
        assert_fits(page, "the list of exercises", width)
        page.screenshot(path=IMAGES / f"{name}.png", full_page=True)
        page.close()


def test_without_a_link_the_list_says_how_to_get_in_and_claims_no_status(
    browser: Browser, course: Deployment
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    open_page(page, f"{course.url}/")
    expect(page.locator("#sign-in")).to_contain_text("Sign in to submit.")
    expect(page.locator(".catalog li").first).to_be_visible()
    expect(page.locator(".catalog .progress").first).to_be_hidden()
    assert_no_axe_violations(page, "the list of exercises, signed out")
    page.close()


def test_on_an_open_service_the_list_follows_the_id_this_browser_submits_as(
    browser: Browser, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with server(tmp_path, port) as (_, api):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        open_page(page, f"{base}/exercises/{SEED}")  # it makes up this browser's id
        student = page.locator("#student-id").input_value()
        submitted = {"exercise": SEED, "source": CORRECT, "student_id": student}
        assert api.post("/v1/submissions?wait=true", json=submitted).status_code == 200
        someone_else = {**submitted, "exercise": OTHER, "student_id": "someone-else"}
        assert api.post("/v1/submissions", json=someone_else).status_code == 202
        open_page(page, f"{base}/")
        expect(standing(page, SEED)).to_have_text("Your status: Passed")
        expect(standing(page, OTHER)).to_have_text("Your status: Not tried")
        page.close()
