"""/docs and /redoc are the service's own pages, in place of FastAPI's (a CDN, an inline script):
every script and stylesheet they name is a file of the page's bundle, under /ui/assets, no script
is inline, and no URL in them points to another host."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.ui import page

LINKED = re.compile(r'<(?:script|link)\b[^>]*?(?:src|href)="([^"]*)"')


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_docs_page_loads_only_the_bundle(client: TestClient, path: str) -> None:
    if not page.assets_built():
        pytest.skip(f"no bundle in {page.DIST}: run `{page.BUILD_HINT}`")
    response = client.get(path)
    assert response.status_code == 200
    html = response.text
    assert "//" not in html  # no URL names a host
    assert html.count("<script") == len(re.findall(r'<script [^>]*src="', html)) == 2
    assert 'data-spec-url="/openapi.json"' in html
    assets = [url for url in LINKED.findall(html) if url != "data:,"]  # data:, the empty icon
    assert len(assets) >= 3  # the library, its starter, their stylesheets
    for url in assets:
        assert url.startswith(f"{page.ASSETS_URL}/")
        assert client.get(url).status_code == 200


def test_without_the_bundle_the_docs_page_says_how_to_build_it(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(page, "DIST", tmp_path)
    html = client.get("/redoc").text
    assert escape(page.BUILD_HINT) in html
    assert "<script" not in html
    assert '<a href="/openapi.json">/openapi.json</a>' in html
