"""What every `autograder` command shares: its exit codes, and how it prints the faults of a
broken exercise folder (one line each: file, field, what is expected)."""

from __future__ import annotations

import sys

from grader.errors import ExerciseDefinitionError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def print_problems(error: ExerciseDefinitionError) -> None:
    for line in error.lines():
        print(f"autograder: {line}", file=sys.stderr)
