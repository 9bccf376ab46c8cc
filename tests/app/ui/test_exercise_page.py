"""GET /exercises/{slug}: the page a student works on, rendered on the server around the
bundle's islands; a 404 page for an unknown slug; framable by the LMS, not by any site."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_support import SEED, ClientFactory
from fastapi.testclient import TestClient

from app.core.settings import AppSettings
from app.ui import page
from grader.catalog import Catalog


def test_the_page_renders_the_statement_and_carries_the_starter(
    client: TestClient, catalog: Catalog
) -> None:
    response = client.get(f"/exercises/{SEED}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "<h1>Multi-Headed Self-Attention</h1>" in html
    # Code blocks highlighted on the server (Pygments' classes), markdown as HTML; a block
    # focusable, so that the keyboard scrolls one wider than the page.
    assert '<pre tabindex="0"><code class="language-python"><span class="k">class</span>' in html
    assert "<strong>B</strong> is the batch size" in html
    data = re.search(r'<script type="application/json" id="exercise-data">(.*?)</script>', html)
    assert data is not None
    assert json.loads(data.group(1))["starter"] == catalog.get(SEED).starter
    for island in ('id="editor"', 'id="submit"', 'id="report"', 'id="history"', 'id="due"'):
        assert island in html
    assert 'role="status" aria-live="polite"' in html
    assert '<label for="student-id">' in html
    assert '<a href="/exercises">All exercises</a>' in html  # the way back to the list
    # The narrow screen's tab bar waits for the script: without it, every pane shows.
    assert (
        '<div class="pane-tabs" id="pane-tabs" role="tablist" aria-label="What to show" hidden>'
        in html
    )
    for pane in ("statement", "code", "report"):
        assert f'id="pane-{pane}"' in html and f'aria-controls="pane-{pane}"' in html


def test_formulas_are_left_as_tex_for_katex(client: TestClient) -> None:
    html = client.get("/exercises/scaled-dot-product-attention").text
    assert '<div class="math block">' in html
    assert r"\sqrt{d_k}" in html


def test_an_unknown_exercise_is_a_404_page(client: TestClient) -> None:
    response = client.get("/exercises/no-such-thing")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "No such exercise" in response.text
    assert "<code>no-such-thing</code>" in response.text


@pytest.mark.parametrize("slug", [SEED, "no-such-thing"])
def test_only_the_lms_may_frame_the_page(client: TestClient, slug: str) -> None:
    response = client.get(f"/exercises/{slug}")
    assert "x-frame-options" not in response.headers
    # No platform registered, none configured: the service itself only (tests/app/
    # test_security_headers.py has the platforms').
    assert response.headers["content-security-policy"].endswith("frame-ancestors 'self'")


def test_without_a_bundle_the_page_says_how_to_build_it(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(page, "DIST", tmp_path / "dist")
    html = client.get(f"/exercises/{SEED}").text
    assert "The page's scripts are not built" in html
    assert "npm ci &amp;&amp; npm run build" in html
    assert "page.js" not in html
    # The statement still reads.
    assert "<h1>Multi-Headed Self-Attention</h1>" in html


def test_without_a_bundle_an_asset_is_a_404_that_says_how_to_build_it(
    make_client: ClientFactory,
    settings: AppSettings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(page, "DIST", tmp_path / "dist")
    client = make_client(settings)
    answers = [client.get(f"{page.ASSETS_URL}/page.js")]  # no folder at all
    (tmp_path / "dist").mkdir()
    answers.append(client.get(f"{page.ASSETS_URL}/page.js"))  # an empty one
    for response in answers:
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/problem+json"
        assert page.BUILD_HINT in response.json()["detail"]


def test_the_bundle_is_served_when_built(client: TestClient) -> None:
    if not page.assets_built():
        pytest.skip(f"no bundle in {page.DIST}: run `{page.BUILD_HINT}`")
    html = client.get(f"/exercises/{SEED}").text
    assert f'src="{page.ASSETS_URL}/page.js"' in html
    response = client.get(f"{page.ASSETS_URL}/page.js")
    assert response.status_code == 200
    assert "javascript" in response.headers["content-type"]
