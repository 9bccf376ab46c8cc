"""The API's docs pages without internet: /docs (Swagger UI) and /redoc (ReDoc) on the real server
(`autograder serve`), Debian's Chromium with every request to another host aborted. Each page
runs under the service's Content-Security-Policy with nothing refused, asks no other host for
anything, lists every operation of the OpenAPI document, passes axe-core's WCAG 2.2 A/AA rules
and fits its screen. The screenshots of docs/service.md land in docs/images."""

from __future__ import annotations

import httpx
import pytest
from app_support import ROOT
from browser_support import (
    assert_fits,
    assert_no_axe_violations,
    offline,
    open_page,
    skip_without_a_browser,
)
from playwright.sync_api import Browser, expect

pytestmark = pytest.mark.slow
skip_without_a_browser()

IMAGES = ROOT / "docs" / "images"


def operations(base_url: str) -> list[str]:
    """Every operation as both pages show it: the method, then the path on the next line."""
    paths = httpx.get(f"{base_url}/openapi.json").json()["paths"]
    return [f"{method.upper()}\n{path}\n" for path, item in paths.items() for method in item]


@pytest.mark.parametrize(
    ("path", "width", "screenshot"),
    [
        ("/docs", 1280, "api-docs.png"),
        ("/docs", 390, "api-docs-phone.png"),
        ("/redoc", 1280, "api-reference.png"),
        ("/redoc", 390, "api-reference-phone.png"),
    ],
)
def test_the_docs_page_lists_every_operation_offline(
    browser: Browser, base_url: str, path: str, width: int, screenshot: str
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    attempted = offline(page, base_url)
    open_page(page, f"{base_url}{path}")
    expect(page.locator("body")).to_contain_text("/v1/submissions/{submission_id}")
    shown = page.inner_text("body")
    expected = operations(base_url)
    assert "POST\n/v1/submissions\n" in expected
    assert [operation for operation in expected if operation not in shown] == []
    assert attempted == []
    assert_no_axe_violations(page, f"{path} at {width} px")
    assert_fits(page, path, width)
    page.screenshot(path=IMAGES / screenshot)
