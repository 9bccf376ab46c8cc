"""What every `autograder` command shares: its exit codes, and how it prints the faults of a
broken exercise folder (one line each: file, field, what is expected)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from grader.errors import ExerciseDefinitionError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def print_problems(error: ExerciseDefinitionError) -> None:
    for line in error.lines():
        print(f"autograder: {line}", file=sys.stderr)


def exit_for_problems(problems: Mapping[str, ExerciseDefinitionError]) -> int:
    """Print each broken folder's problems; the exit code of a command that found them."""
    for error in problems.values():
        print_problems(error)
    return EXIT_USAGE if problems else EXIT_OK
