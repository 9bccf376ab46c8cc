"""What the browser tests share: Debian's Chromium, headless, driven by Playwright (never a browser
a tool downloads); the page's bundle; screenshots in var/screenshots for a person to look at (and
in docs/images, those the docs show); a phone's screen; the accessibility checks (axe-core's WCAG
2.2 A/AA rules, no sideways scrolling); and the few gestures a student makes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest
from app_support import ROOT
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Route,
    StorageState,
    expect,
    sync_playwright,
)
from test_server import AUTOGRADER, free_port, server

from app.ui import page as ui_page

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = ROOT / "var" / "screenshots"
IMAGES = ROOT / "docs" / "images"  # the screenshots the docs show
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"  # web/package.json's
# Every rule of WCAG 2.0, 2.1 and 2.2 at levels A and AA (axe-core's tags; 2.2 added AA rules only).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def skip_without_a_browser() -> None:
    """At a browser test module's top: skip it, saying why, where it cannot run."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium)",
            allow_module_level=True,
        )
    if not ui_page.assets_built():
        pytest.skip(
            f"the page's bundle is not built: run `{ui_page.BUILD_HINT}`", allow_module_level=True
        )


@contextmanager
def chromium() -> Iterator[Browser]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@dataclass(frozen=True)
class Deployment:
    """A served autograder that requires keys, with course ml-101 and its instructor."""

    url: str
    env: dict[str, str]  # what `autograder` commands of this deployment run with

    def command(self, *args: str) -> str:
        """The last line `autograder ARGS` prints (a key, a link)."""
        result = subprocess.run(
            [AUTOGRADER, *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return result.stdout.strip().splitlines()[-1]


@contextmanager
def keyed_deployment(data_dir: Path) -> Iterator[Deployment]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "AUTOGRADER_DATA_DIR": str(data_dir),
        "AUTOGRADER_SECRET": "integration",  # the server's (test_server.server)
        "AUTOGRADER_PUBLIC_URL": url,
    }
    with server(data_dir, port, AUTOGRADER_REQUIRE_API_KEYS="true", AUTOGRADER_PUBLIC_URL=url):
        deployment = Deployment(url, env)
        deployment.command("keys", "create", "--course", "ml-101", "--role", "instructor")
        yield deployment


def phone(browser: Browser, storage_state: StorageState | None = None) -> BrowserContext:
    """A phone's screen, 390 px wide, touch first; with another context's `storage_state`, the
    same student's browser."""
    return browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        storage_state=storage_state,
    )


def open_page(page: Page, url: str, *, scripted: bool = True) -> None:
    """Open a page of the service and wait until its script is ready (a page without one:
    loaded); nothing may fail on the way, nor be blocked by the Content-Security-Policy (an
    inline script or style, eval)."""
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            errors.append(message.text)

    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", on_console)
    page.goto(url)
    if scripted:
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
    assert errors == []


def offline(page: Page, base_url: str) -> list[str]:
    """Cut `page` off from every host but the service's, as if there were no internet: each
    request elsewhere is aborted, and its URL lands in the list returned."""
    attempted: list[str] = []
    service = urlparse(base_url).netloc

    def answer(route: Route) -> None:
        if urlparse(route.request.url).netloc == service:
            route.continue_()
        else:
            attempted.append(route.request.url)
            route.abort()

    page.route("**/*", answer)
    return attempted


def type_solution(page: Page, source: str) -> None:
    page.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)


def submit(page: Page) -> None:
    page.locator("#submit").click()
    expect(page.locator("#status")).to_contain_text("Graded", timeout=60_000)


def assert_no_axe_violations(page: Page, what: str) -> None:
    """axe-core's WCAG 2.2 A/AA rules on `page` as it stands (`what` says which page and state):
    none may fail. A failure names each rule, its impact and the elements that break it."""
    if not page.evaluate("() => 'axe' in window"):
        # As script, not a <script> element: the page's Content-Security-Policy refuses inline ones.
        page.evaluate(AXE.read_text())
    violations = page.evaluate(
        """(tags) => axe.run(document, { runOnly: { type: "tag", values: tags } }).then((results) =>
          results.violations.map((rule) => ({
            rule: rule.id,
            impact: rule.impact,
            help: rule.help,
            nodes: rule.nodes.map((node) => `${node.target.join(" ")}: ${node.failureSummary}`),
          })))""",
        WCAG_TAGS,
    )
    said = "\n".join(
        f"- {v['rule']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"])
        for v in violations
    )
    assert violations == [], f"{what}: {len(violations)} WCAG rules broken\n{said}"


def assert_fits(page: Page, what: str, width: int = 390) -> None:
    """Nothing on `page` is wider than its `width`: no sideways scrolling."""
    wide = page.evaluate("document.scrollingElement.scrollWidth")
    assert wide <= width, f"{what} is {wide} px wide, more than the screen's {width}"
