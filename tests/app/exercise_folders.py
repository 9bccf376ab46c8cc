"""Exercise folders for tests that need a catalog of their own: copies of the repository's
exercises in a temporary folder, to break, change, add and remove. A copy keeps its proof record,
so it is published as the original is; a changed copy is a draft until `publish`ed."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.proof import Proof
from grader.proof_cli import record_proof
from grader.settings import GraderSettings
from grader.spec import load_exercise

EXERCISES = GraderSettings().exercises_dir
SEED = "multi-headed-self-attention"
OTHER = "scaled-dot-product-attention"


def seed_catalog(tmp_path: Path) -> Path:
    """A folder of exercises holding a copy of the seed exercise alone."""
    folder = tmp_path / "exercises"
    folder.mkdir()
    copy_exercise(folder, SEED)
    return folder


def copy_exercise(folder: Path, slug: str, as_slug: str | None = None) -> Path:
    """The repository's exercise `slug` copied into `folder` (as `as_slug`, slug included)."""
    target = folder / (as_slug or slug)
    shutil.copytree(EXERCISES / slug, target, ignore=shutil.ignore_patterns("__pycache__"))
    if as_slug is not None:
        edit_toml(target, f'slug = "{slug}"', f'slug = "{as_slug}"')
    return target


def edit_toml(folder: Path, old: str, new: str) -> None:
    toml = folder / "exercise.toml"
    text = toml.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {toml}"
    toml.write_text(text.replace(old, new, 1), encoding="utf-8")


def publish(folder: Path) -> None:
    """Record a proof of the exercise as it is now, as `autograder check-exercise` does when its
    proof holds: for a test that changes an exercise students must still see, without grading
    its solutions (the test is about the service, not the exercise)."""
    assert record_proof(Proof(load_exercise(folder))).startswith("published")
