"""README's table of exercises lists the catalog, each exercise once, in course order."""

from __future__ import annotations

import re
from pathlib import Path

from grader.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_table_lists_every_exercise_once() -> None:
    section = (ROOT / "README.md").read_text().split("## The exercises", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| `([a-z0-9-]+)` \|", section, flags=re.MULTILINE)
    assert [int(number) for number, _ in rows] == list(range(1, len(rows) + 1))
    listed = [slug for _, slug in rows]
    assert sorted(listed) == Catalog.from_folder(ROOT / "exercises").slugs()
