"""The notebook client's HTML report as Jupyter shows it: a notebook holding the report of a real
grading, exported by nbconvert's lab template (which ships JupyterLab's stylesheet, the one that
right-aligns every cell of a rendered table) and opened in Chromium with every request refused.
Text is left-aligned and numbers right, quoted code is <code>, and the screenshots of
docs/notebook.md land in docs/images."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from app_support import ROOT, SEED, SEED_EXERCISE
from autograder_client import render_html, render_text
from browser_support import skip_without_a_browser
from playwright.sync_api import Browser, Page
from test_cli import AUTOGRADER

pytestmark = pytest.mark.slow
skip_without_a_browser()

IMAGES = ROOT / "docs" / "images"
OUTPUT = ".jp-OutputArea-output.jp-RenderedHTMLCommon"


@pytest.fixture(scope="module")
def notebook_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The exported notebook: one cell that submits, and the report of a wrong solution."""
    graded = subprocess.run(
        [AUTOGRADER, "grade", SEED, str(SEED_EXERCISE / "mistakes/missing_scaling.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert graded.returncode == 1, graded.stderr  # a failing submission
    report = json.loads(graded.stdout)
    notebook = tmp_path_factory.mktemp("notebook") / "report.ipynb"
    notebook.write_text(json.dumps(_notebook(report)), encoding="utf-8")
    exported = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--template", "lab", str(notebook)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert exported.returncode == 0, exported.stderr
    return notebook.with_suffix(".html").read_text(encoding="utf-8")


def _notebook(report: dict[str, Any]) -> dict[str, Any]:
    """A notebook (nbformat 4) whose one cell submitted and shows the client's report."""
    output = {
        "output_type": "execute_result",
        "execution_count": 3,
        "metadata": {},
        "data": {"text/html": render_html(report), "text/plain": render_text(report)},
    }
    cell = {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {},
        "source": f"submit({SEED!r}, MultiHeadedSelfAttention)",
        "outputs": [output],
    }
    return {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [cell]}


def open_notebook(browser: Browser, html: str, width: int) -> Page:
    page = browser.new_page(viewport={"width": width, "height": 900})
    # The template loads require.js and MathJax from the web: refused, nothing leaves.
    page.route("**/*", lambda route: route.abort())
    page.set_content(html)
    return page


def text_align(page: Page, selector: str) -> list[str]:
    aligned: list[str] = page.locator(selector).evaluate_all(
        "cells => cells.map(cell => getComputedStyle(cell).textAlign)"
    )
    return aligned


@pytest.mark.parametrize(
    ("width", "screenshot"), [(1280, "notebook-report.png"), (390, "notebook-report-phone.png")]
)
def test_jupyter_shows_text_left_numbers_right_and_code_as_code(
    browser: Browser, notebook_html: str, width: int, screenshot: str
) -> None:
    page = open_notebook(browser, notebook_html, width)
    table = f"{OUTPUT} .ag-report > table"
    names = text_align(page, f"{table} > tbody > tr > td:nth-child(2)")
    points = text_align(page, f"{table} > tbody > tr > td:nth-child(4)")
    mismatch = text_align(page, f"{table} td table td")
    assert len(names) == 10 and set(names) == {"left"}
    assert set(points) == set(mismatch) == {"right"}
    assert text_align(page, f"{table} > thead th") == ["left"] * 3 + ["right", "left"]
    code = page.locator(f"{OUTPUT} code")
    assert code.count() >= 5 and set(code.all_inner_texts()) == {"output"}
    assert "`" not in page.locator(OUTPUT).inner_text()
    page.screenshot(path=IMAGES / screenshot, full_page=True)
    page.close()
