"""The exercises to serve: every folder under the exercises directory that passes its check.

A folder that fails (its `exercise.toml`, its texts, its reference module, checked without
running it: `grader.reference_source`) is kept apart with its problems instead of stopping the
rest: the other exercises are served, and asking for the
broken one raises its ExerciseDefinitionError. Across a reload (`succeeding`), a folder whose
change fails keeps its last good version serving, flagged with the problems of the change.

An exercise served is published or a draft (`grader.proof_record`): staff see the whole catalog,
students its `published` part, where a draft is as unknown as a folder that does not exist.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path

from grader.errors import ExerciseDefinitionError, UnknownExerciseError
from grader.proof_record import draft_reason
from grader.reference_source import check_reference
from grader.spec import Exercise, load_exercise
from grader.versions import add_references_beside, fingerprint, reference_folders


def catalog_fingerprint(folder: Path) -> str:
    """Equal while nothing changed under the exercises folder and the reference package: a
    process compares it to know whether to scan again."""
    return fingerprint([folder, *reference_folders()])


class Catalog:
    def __init__(
        self,
        exercises: list[Exercise],
        problems: Mapping[str, ExerciseDefinitionError] | None = None,
    ) -> None:
        self._by_slug = {exercise.spec.slug: exercise for exercise in exercises}
        # By folder name (a valid folder's slug). A slug here and in _by_slug is served at its
        # last good version; here alone, it is broken.
        self.problems: dict[str, ExerciseDefinitionError] = dict(problems or {})

    @classmethod
    def scan(cls, folder: Path) -> Catalog:
        """Check every exercise folder (one holding an exercise.toml), its reference module
        parsed (not run) included; keep the broken ones' problems."""
        add_references_beside(folder)
        exercises, problems = [], {}
        for path in sorted(path.parent for path in folder.glob("*/exercise.toml")):
            try:
                exercise = load_exercise(path)
                check_reference(exercise)
            except ExerciseDefinitionError as error:
                problems[path.name] = error
            else:
                exercises.append(exercise)
        return cls(exercises, problems)

    @classmethod
    def from_folder(cls, folder: Path) -> Catalog:
        """Every exercise, or one ExerciseDefinitionError listing every broken folder's problems
        (for those that must not run with any exercise broken: tests, proofs)."""
        catalog = cls.scan(folder)
        if catalog.problems:
            raise ExerciseDefinitionError(
                [problem for error in catalog.problems.values() for problem in error.problems]
            )
        return catalog

    def get(self, slug: str) -> Exercise:
        """The exercise served under `slug`; raises its ExerciseDefinitionError when broken,
        UnknownExerciseError when there is no such folder."""
        exercise = self.serving(slug)
        if exercise is not None:
            return exercise
        if slug in self.problems:
            raise self.problems[slug]
        raise UnknownExerciseError(slug, self.slugs())

    def serving(self, slug: str) -> Exercise | None:
        return self._by_slug.get(slug)

    def succeeding(self, previous: Catalog) -> Catalog:
        """This scan as the next catalog after `previous`: where a folder broke, the version
        that `previous` served stays served."""
        kept = [
            exercise
            for slug in self.problems
            if slug not in self._by_slug and (exercise := previous.serving(slug)) is not None
        ]
        return Catalog([*self, *kept], self.problems)

    def failing(
        self, exercise: Exercise, error: ExerciseDefinitionError, fallback: Exercise | None
    ) -> Catalog:
        """This catalog with `exercise` failing a check beyond the scan's (its plan: the
        reference run on its tests): `fallback` (its last good version) served instead if
        there is one, else the exercise is broken."""
        slug = exercise.spec.slug
        others = [served for served in self if served.spec.slug != slug]
        return Catalog(others + ([fallback] if fallback else []), {**self.problems, slug: error})

    def drafts(self) -> dict[str, str]:
        """Each draft's slug, with why it is one and what publishes it."""
        return {
            exercise.spec.slug: reason
            for exercise in self
            if (reason := draft_reason(exercise)) is not None
        }

    @cached_property
    def published(self) -> Catalog:
        """The catalog as students see it: the proven exercises alone. A broken folder served
        at no proven version is left out too: its version is unknown, so it may be a skeleton
        being written, whose existence must not show."""
        drafts = self.drafts()
        proven = [exercise for exercise in self if exercise.spec.slug not in drafts]
        slugs = {exercise.spec.slug for exercise in proven}
        return Catalog(proven, {slug: self.problems[slug] for slug in slugs & self.problems.keys()})

    def slugs(self) -> list[str]:
        return sorted(self._by_slug)

    def allowed_imports(self) -> tuple[str, ...]:
        """Every library some exercise lets submissions import: what a warm process must preload
        (with what each brings, `policy.importable_modules`), since a confined child can open no
        file to import anything more."""
        return tuple(sorted({name for exercise in self for name in exercise.spec.allowed_imports}))

    def __iter__(self) -> Iterator[Exercise]:
        return iter(self._by_slug[slug] for slug in self.slugs())
