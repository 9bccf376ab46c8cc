"""The grader's exceptions: failures of the grader itself, never of a student.

A student's failing, crashing or hostile submission is not an exception: it comes back as a
`Report` whose tests say what went wrong. These exceptions mean the grader could not do its job.

    AutograderError
    ├── UnknownExerciseError     no exercise has that slug (the caller's mistake)
    ├── ExerciseDefinitionError  an exercise folder is invalid (the author's mistake): one
    │                            DefinitionProblem (file, field, what is expected) per fault
    ├── ReferenceFailure         the trusted reference failed on a test case (a grader bug)
    └── SandboxUnavailable       the sandbox could not start or stopped answering
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class AutograderError(Exception):
    """Base class of every error the grading engine raises."""


class UnknownExerciseError(AutograderError):
    def __init__(self, slug: str, known: list[str]) -> None:
        self.slug = slug
        self.known = known
        super().__init__(f"unknown exercise {slug!r}; known: {', '.join(known) or 'none'}")


@dataclass(frozen=True)
class DefinitionProblem:
    """One fault of an exercise folder, as its author needs it to fix it."""

    file: str  # relative to the exercises folder, or the reference module's path
    field: str  # dotted, as in `tests.0.seed`; "-" for the file as a whole
    expected: str  # what is expected there, in words

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.expected}"


class ExerciseDefinitionError(AutograderError):
    """Every fault found in one exercise folder; `lines()` prints one line each."""

    def __init__(self, problems: Sequence[DefinitionProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.lines()))

    def lines(self) -> list[str]:
        return [str(problem) for problem in self.problems]


class ReferenceFailure(AutograderError):
    pass


class SandboxUnavailable(AutograderError):
    pass
