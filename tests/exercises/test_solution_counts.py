"""Each exercise has a corpus of correct solutions (graded by test_proofs.py, a slow test)."""

import pytest

from grader.catalog import Catalog
from grader.settings import GraderSettings

EXERCISES = GraderSettings().exercises_dir
SEED_EXERCISE = "multi-headed-self-attention"


@pytest.mark.parametrize("slug", Catalog.from_folder(EXERCISES).slugs())
def test_each_exercise_has_solutions(slug: str) -> None:
    wanted = 14 if slug == SEED_EXERCISE else 4
    assert len(list((EXERCISES / slug / "solutions").glob("*.py"))) >= wanted
