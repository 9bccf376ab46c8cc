"""The exercises available to grade: every valid folder under the exercises directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from grader.errors import UnknownExerciseError
from grader.spec import Exercise, load_exercise


class Catalog:
    def __init__(self, exercises: list[Exercise]) -> None:
        self._by_slug = {exercise.spec.slug: exercise for exercise in exercises}

    @classmethod
    def from_folder(cls, folder: Path) -> Catalog:
        """Load every exercise folder (one holding an exercise.toml); a broken one raises
        ExerciseDefinitionError, so a bad exercise is found at start-up, not by a student."""
        folders = sorted(path.parent for path in folder.glob("*/exercise.toml"))
        return cls([load_exercise(path) for path in folders])

    def get(self, slug: str) -> Exercise:
        try:
            return self._by_slug[slug]
        except KeyError:
            raise UnknownExerciseError(slug, self.slugs()) from None

    def slugs(self) -> list[str]:
        return sorted(self._by_slug)

    def allowed_imports(self) -> tuple[str, ...]:
        """Every library some exercise lets submissions import: what a warm process must preload
        (with what each brings, `policy.importable_modules`), since a confined child can open no
        file to import anything more."""
        return tuple(sorted({name for exercise in self for name in exercise.spec.allowed_imports}))

    def __iter__(self) -> Iterator[Exercise]:
        return iter(self._by_slug[slug] for slug in self.slugs())
