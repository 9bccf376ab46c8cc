"""The commands over a folder with a broken exercise: one line per fault, no traceback, exit 2;
and `grade` run in a student's folder leaves nothing there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from app_support import CORRECT
from exercise_folders import OTHER, SEED, copy_exercise, edit_toml

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))
BROKEN = [
    "autograder: broken/exercise.toml: reference: an importable module (reference/nowhere.py "
    "not found)",
    "autograder: typo/exercise.toml: frameworks: no such field (a typo?)",
]


@pytest.fixture
def exercises(tmp_path: Path) -> Path:
    """The seed exercise, and copies of another: one with a missing reference, one with a
    typo."""
    folder = tmp_path / "exercises"
    folder.mkdir()
    copy_exercise(folder, SEED)
    broken = copy_exercise(folder, OTHER, as_slug="broken")
    edit_toml(broken, "reference.scaled_dot_product_attention", "reference.nowhere")
    typo = copy_exercise(folder, OTHER, as_slug="typo")
    edit_toml(typo, "framework =", "frameworks =")
    return folder


def autograder(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRADER_", "XDG_"))}
    return subprocess.run(
        [AUTOGRADER, *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_exercises_lists_the_valid_and_each_fault_in_one_line(
    exercises: Path, tmp_path: Path
) -> None:
    listed = autograder("exercises", cwd=tmp_path, AUTOGRADER_EXERCISES_DIR=str(exercises))
    assert listed.returncode == 2
    assert listed.stdout.split() == [SEED, "Multi-Headed", "Self-Attention"]
    assert listed.stderr.splitlines() == BROKEN


def test_exercises_flags_a_draft_with_why(exercises: Path, tmp_path: Path) -> None:
    (exercises / SEED / "proof.toml").unlink()
    listed = autograder("exercises", cwd=tmp_path, AUTOGRADER_EXERCISES_DIR=str(exercises))
    why = f"not proven: run `autograder check-exercise {SEED}`"
    assert listed.stdout == f"{SEED}  Multi-Headed Self-Attention  (draft: {why})\n"
    rows = autograder("exercises", "--json", cwd=tmp_path, AUTOGRADER_EXERCISES_DIR=str(exercises))
    assert [row["draft"] for row in json.loads(rows.stdout)] == [why]


def test_doctor_counts_the_broken_and_exits_2(exercises: Path, tmp_path: Path) -> None:
    doctor = autograder("doctor", cwd=tmp_path, AUTOGRADER_EXERCISES_DIR=str(exercises))
    assert doctor.returncode == 2
    assert doctor.stdout.startswith(f"exercises: 1 valid, 2 broken in {exercises}\n")
    assert doctor.stderr.splitlines() == BROKEN


def test_grade_of_a_broken_exercise_is_a_usage_error_in_one_line_per_fault(
    exercises: Path, tmp_path: Path
) -> None:
    source = tmp_path / "solution.py"
    source.write_text(CORRECT, encoding="utf-8")
    graded = autograder(
        "grade", "broken", str(source), cwd=tmp_path, AUTOGRADER_EXERCISES_DIR=str(exercises)
    )
    assert graded.returncode == 2
    assert graded.stderr.splitlines() == BROKEN[:1]
    assert graded.stdout == ""


@pytest.mark.slow
def test_grade_in_a_homework_folder_leaves_it_empty(exercises: Path, tmp_path: Path) -> None:
    """The secret goes to the user's data dir; an exercise broken beside it changes nothing."""
    homework, home = tmp_path / "homework", tmp_path / "home"
    homework.mkdir()
    source = tmp_path / "solution.py"
    source.write_text(CORRECT, encoding="utf-8")
    graded = autograder(
        "grade", SEED, str(source), cwd=homework, HOME=str(home),
        AUTOGRADER_EXERCISES_DIR=str(exercises),
    )  # fmt: skip
    assert graded.returncode == 0, graded.stderr
    assert list(homework.iterdir()) == []
    assert (home / ".local/share/autograder/secret").is_file()
    xdg = tmp_path / "xdg"
    again = autograder(
        "grade", SEED, str(source), cwd=homework, HOME=str(home), XDG_DATA_HOME=str(xdg),
        AUTOGRADER_EXERCISES_DIR=str(exercises),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert list(homework.iterdir()) == []
    assert (xdg / "autograder/secret").is_file()
