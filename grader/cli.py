"""`autograder`: grade files, list, prove and start exercises, show the sandbox's layers.

Commands are declared here (and the service's in `app.cli`) with argparse, and each names its
handler as "module:function" (`set_defaults(handler=...)`), imported by `main` only when that
command runs: declaring every command costs nothing but argparse, so `--help` of any command
starts at once, and `exercises` and `doctor` import no torch. A handler takes (args, settings)
and returns the exit code; its module imports what the command needs at its top, as usual.

Exit codes of `grade`: 0 when every test passes, 1 when any fails or the submission is refused,
2 on a usage error (unknown exercise, unreadable file) or a broken exercise folder, whose faults
are printed one line each (`exercises` and `doctor` exit 2 when any folder is broken, too).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from grader.cli_output import EXIT_FAILED, EXIT_USAGE, print_problems
from grader.errors import ExerciseDefinitionError, ReferenceFailure, UnknownExerciseError

# The subcommands action of the parser, so a front end can add its own commands to the engine's.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# `new-exercise`'s choices, as `grader.spec.EntryKind` and `Framework` spell them (the skeleton
# checks them against those): naming them here keeps pydantic out of `--help`.
ENTRY_KINDS = ("module", "function")
FRAMEWORKS = ("torch", "numpy")
# `grade --reproduce` without a test's name (a name is never empty).
EVERY_FAILING_TEST = ""


def main(argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one command. `parser` is `build_parser()`'s, extended by a front end (`app.cli` adds
    `serve`, `keys`, ...)."""
    args = (parser or build_parser()[0]).parse_args(argv)
    # Here, not at the top: pydantic-settings is most of what `--help` would import.
    from grader.settings import get_settings  # noqa: PLC0415

    try:
        module, _, function = args.handler.partition(":")
        code: int = getattr(importlib.import_module(module), function)(args, get_settings())
    except ExerciseDefinitionError as error:
        print_problems(error)
        return EXIT_USAGE
    except (UnknownExerciseError, ReferenceFailure) as error:
        print(f"autograder: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader left (`| head`): not worth a traceback
        # Python flushes stdout again at exit; let that write go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    return code


def build_parser() -> tuple[argparse.ArgumentParser, Commands]:
    """The engine's commands (grade, exercises, doctor, check-exercise, new-exercise), and the
    action to add more to."""
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    grade = commands.add_parser("grade", help="grade a submission file against an exercise")
    grade.add_argument("slug", metavar="SLUG", help="the exercise (see `autograder exercises`)")
    grade.add_argument("file", metavar="FILE", type=Path, help="the submission's Python source")
    output = grade.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the report as JSON")
    output.add_argument(
        "--reproduce",
        nargs="?",
        const=EVERY_FAILING_TEST,
        metavar="TEST",
        help="after the report, print the Python that runs TEST (a visible test) as the grader "
        "does, with your file saved as solution.py; without TEST, every visible test that failed",
    )
    grade.set_defaults(handler="grader.grade_command:grade")

    exercises = commands.add_parser("exercises", help="list the exercises")
    exercises.add_argument("--json", action="store_true", help="print the catalog as JSON")
    exercises.set_defaults(handler="grader.exercises_command:exercises")

    doctor = commands.add_parser("doctor", help="show which sandbox layers this host allows")
    doctor.set_defaults(handler="grader.doctor_command:doctor")

    check = commands.add_parser(
        "check-exercise", help="prove exercises against their solutions and mistakes"
    )
    target = check.add_mutually_exclusive_group(required=True)
    target.add_argument("slug", metavar="SLUG", nargs="?", help="the exercise to check")
    target.add_argument("--all", action="store_true", help="check every exercise")
    check.set_defaults(handler="grader.proof_cli:check_exercise")

    new = commands.add_parser("new-exercise", help="write a skeleton exercise to fill in")
    new.add_argument("slug", metavar="SLUG", help="the new exercise's slug, e.g. causal-attention")
    new.add_argument("--kind", choices=ENTRY_KINDS, default="module")
    new.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    new.set_defaults(handler="grader.proof_cli:new_exercise")
    return parser, commands


if __name__ == "__main__":
    sys.exit(main())
