"""What the dashboard's browser tests share: the real server (`autograder serve`, keys required)
with a demo course seeded (app.demo.data), the staff API beside it, and the gestures of
signing in and reading the course's table of exercises."""

from __future__ import annotations

import math
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from browser_support import open_page
from playwright.sync_api import Page, expect
from test_server import AUTOGRADER, free_port, server

from app.core.db import Database
from app.demo.data import seed_course
from grader.catalog import Catalog

COURSE = "ml-101"


@dataclass(frozen=True)
class Served:
    url: str
    key: str
    database: Database
    api: httpx.Client  # the staff API, with the key

    @property
    def dashboard(self) -> str:
        return f"{self.url}/courses/{COURSE}/dashboard"

    def get(self, path: str) -> Any:
        answer = self.api.get(f"/v1/courses/{COURSE}{path}")
        assert answer.status_code == 200, answer.text
        return answer.json()


@contextmanager
def serve_demo_course(data_dir: Path, catalog: Catalog, students: int) -> Iterator[Served]:
    """The server with COURSE seeded (every exercise, up to 20 attempts per student), and an
    instructor key of it."""
    port = free_port()
    env = {"AUTOGRADER_DATA_DIR": str(data_dir), "AUTOGRADER_SECRET": "integration"}
    with server(data_dir, port, AUTOGRADER_REQUIRE_API_KEYS="true"):
        key = (
            subprocess.run(
                [AUTOGRADER, "keys", "create", "--course", COURSE, "--role", "instructor"],
                env={**env, "PATH": str(Path(AUTOGRADER).parent)},
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        database = Database.from_url(f"sqlite:///{data_dir / 'autograder.db'}")
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=60) as api:
            try:
                seed_course(database, catalog, COURSE, students=students, attempts=20)
                yield Served(url, key, database, api)
            finally:
                database.close()


def sign_in(page: Page, served: Served, path: str = "", ready_ms: float = 5_000) -> None:
    open_page(page, served.dashboard + path)
    expect(page.locator("#sign-in")).to_be_visible()
    page.locator("#api-key").fill(served.key)
    page.locator("#sign-in button[type=submit]").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=ready_ms)


def number(n: int) -> str:
    return f"{n:,}"


def percent(share: float | None) -> str:
    if share is None:
        return "\N{EN DASH}"
    return f"{math.floor(share * 100 + 0.5)}%"  # JavaScript's Math.round: halves go up


def check_overview(page: Page, served: Served) -> None:
    for exercise in served.get("/exercises")["exercises"]:
        row = page.locator(f'#exercises tr[data-exercise="{exercise["exercise"]}"]')
        cells = row.locator("td")
        expect(cells.nth(0)).to_have_text(number(exercise["submissions"]))
        expect(cells.nth(1)).to_have_text(number(exercise["students"]))
        expect(cells.nth(2)).to_contain_text(number(exercise["passed_students"]))
        expect(cells.nth(4)).to_have_text(number(exercise["outdated_submissions"]))
