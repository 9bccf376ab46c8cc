"""What the hidden tests did, on the dashboard: a submission graded in the real sandbox, opened
from its student's page, shows a row per hidden test (the input set, the inputs' shapes, the
error it raised) under its report; a submission the grader kept nothing for says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_support import IMAGES, skip_without_a_browser
from dashboard_support import Served, serve_demo_course, sign_in
from playwright.sync_api import Browser, ViewportSize, expect

from grader.catalog import Catalog

pytestmark = pytest.mark.slow
skip_without_a_browser()

SDPA = "scaled-dot-product-attention"
STUDENT = "student-0001"
# Raises on every test, with words its inputs decide.
RAISES = """import torch


def scaled_dot_product(q, k, v, mask=None):
    raise ValueError(f"seen {q.sum().item():.6f}")
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Served]:
    with serve_demo_course(tmp_path_factory.mktemp("serve"), catalog, students=2) as served:
        yield served


def test_a_submission_opens_with_what_each_hidden_test_did(
    browser: Browser, served: Served
) -> None:
    body = {"exercise": SDPA, "source": RAISES, "student_id": STUDENT}
    graded = served.api.post("/v1/submissions?wait=true", json=body)
    assert graded.status_code == 200, graded.text
    submission_id = graded.json()["id"]
    detail = served.get(f"/submissions/{submission_id}/hidden-tests")["hidden"]
    seeded = next(
        one["id"]
        for one in served.get(f"/students/{STUDENT}")["submissions"]
        if one["id"] != submission_id
    )
    page = browser.new_page(viewport=ViewportSize(width=1366, height=900))
    sign_in(page, served, f"?view=students&student={STUDENT}")

    page.locator(f'#student-submissions tr[data-submission="{seeded}"] button').click()
    expect(page.locator("#hidden-tests")).to_contain_text("Nothing kept for this submission")
    page.locator(f'#student-submissions tr[data-submission="{submission_id}"] button').click()

    rows = page.locator("#hidden-tests-table tbody tr")
    expect(rows).to_have_count(len(detail["tests"]))
    for row, test in zip(rows.all(), detail["tests"], strict=True):
        expect(row.locator("th")).to_have_text(test["name"])
        expect(row.locator("td").nth(0)).to_have_text("raised an error")
        expect(row.locator("td").nth(1)).to_have_text(str(test["input_set"]))
        shape = test["inputs"][0]["shape"]
        expect(row.locator("td").nth(2)).to_contain_text(f"[{', '.join(map(str, shape))}]")
        expect(row.locator("td").nth(3)).to_contain_text(test["error"]["message"])
    page.locator("#hidden-tests").screenshot(path=IMAGES / "dashboard-hidden-tests.png")
    page.close()
