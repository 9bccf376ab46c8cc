"""What each command imports, checked in a fresh interpreter: `--help` of any command,
`exercises` and `doctor` import neither torch nor the service's libraries, and a `grade` whose
plan is cached imports no torch in the grading process (its warm process does, apart)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from exercise_folders import EXERCISES, OTHER

from app import cli
from app.core.models import Role
from grader import cli as engine_cli
from grader.spec import EntryKind, Framework

HEAVY = ("torch", "fastapi", "sqlalchemy", "uvicorn", "alembic")
# Runs the command as the console script does, then names the heavy modules it imported.
RUN_AND_REPORT = f"""
import sys
from app.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
print("imported:", *sorted(name for name in {HEAVY!r} if name in sys.modules), file=sys.stderr)
sys.exit(code)
"""


def run(*args: str, data_dir: Path) -> tuple[int, list[str]]:
    """The exit code, and the heavy modules the command imported."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_")}
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_REPORT, *args],
        env={**clean, "AUTOGRADER_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = done.stderr.splitlines()[-1]
    assert report.startswith("imported:"), done.stderr
    return done.returncode, report.split()[1:]


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("exercises",),
        ("exercises", "--json"),
        ("doctor",),
        ("grade", "--help"),
        ("check-exercise", "--help"),
        ("serve", "--help"),
        ("keys", "create", "--help"),
        ("students", "link", "--help"),
    ],
)
def test_listing_and_help_import_neither_torch_nor_the_service(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    assert run(*args, data_dir=tmp_path) == (0, [])


@pytest.mark.slow
def test_a_grade_whose_plan_is_cached_imports_no_torch(tmp_path: Path) -> None:
    solution = min((EXERCISES / OTHER / "solutions").glob("*.py"))
    first = run("grade", OTHER, str(solution), data_dir=tmp_path)
    assert first == (0, ["torch"])  # built: the reference ran here
    assert list((tmp_path / "plans").glob(f"{OTHER}.*.plan"))
    assert run("grade", OTHER, str(solution), data_dir=tmp_path) == (0, [])


def test_the_choices_named_to_keep_help_light_are_the_enums() -> None:
    assert tuple(role.value for role in Role) == cli.ROLES
    assert tuple(kind.value for kind in EntryKind) == engine_cli.ENTRY_KINDS
    assert tuple(framework.value for framework in Framework) == engine_cli.FRAMEWORKS
