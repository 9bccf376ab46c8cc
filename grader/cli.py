"""`autograder`: grade files, list, prove and start exercises, show the sandbox's layers.

The commands that prove an exercise and start a new one are `grader.proof_cli`'s.

Exit codes of `grade`: 0 when every test passes, 1 when any fails or the submission is refused,
2 on a usage error (unknown exercise, unreadable file) or a broken exercise folder, whose faults
are printed one line each (`exercises` and `doctor` exit 2 when any folder is broken, too).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from grader.catalog import Catalog
from grader.cli_output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_problems
from grader.errors import ExerciseDefinitionError, ReferenceFailure, UnknownExerciseError
from grader.proof_cli import add_exercise_commands
from grader.render import render_json, render_text
from grader.report import ReportStatus
from grader.runner import Grader
from grader.sandbox.process import ForkServerSandbox
from grader.settings import GraderSettings, get_settings

MAX_SOURCE_BYTES = 256 * 1024


# The subcommands action of the parser, so a front end can add its own commands to the engine's.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def main(argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one command. `parser` is `build_parser()`'s, extended by a front end (`app.cli` adds
    `serve`, `keys`, ...); every command's handler takes (args, settings) and returns the exit
    code."""
    args = (parser or build_parser()[0]).parse_args(argv)
    settings = get_settings()
    try:
        code: int = args.handler(args, settings)
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
    grade.add_argument("--json", action="store_true", help="print the report as JSON")
    grade.set_defaults(handler=_grade)

    exercises = commands.add_parser("exercises", help="list the exercises")
    exercises.add_argument("--json", action="store_true", help="print the catalog as JSON")
    exercises.set_defaults(handler=_exercises)

    doctor = commands.add_parser("doctor", help="show which sandbox layers this host allows")
    doctor.set_defaults(handler=_doctor)

    add_exercise_commands(commands)
    return parser, commands


def _grade(args: argparse.Namespace, settings: GraderSettings) -> int:
    source = _read_source(args.file)
    if source is None:
        return EXIT_USAGE
    catalog = Catalog.scan(settings.exercises_dir)
    # An unknown or broken exercise is a usage error before any process starts.
    catalog.get(args.slug)
    sandbox = ForkServerSandbox(slots=1, preload=catalog.allowed_imports())
    # In a student's homework folder: the secret goes to the user's data dir, not ./var.
    secret = settings.in_user_data_dir().master_secret()
    try:
        report = Grader(catalog, sandbox, secret).grade(args.slug, source)
    finally:
        sandbox.close()
    print(render_json(report) if args.json else render_text(report), end="\n")
    return EXIT_OK if report.status is ReportStatus.PASSED else EXIT_FAILED


def _read_source(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError as error:
        print(f"autograder: cannot read {path}: {error.strerror}", file=sys.stderr)
        return None
    if len(data) > MAX_SOURCE_BYTES:
        print(f"autograder: {path} is over {MAX_SOURCE_BYTES // 1024} KiB", file=sys.stderr)
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        print(f"autograder: {path} is not UTF-8 text", file=sys.stderr)
        return None


def _exercises(args: argparse.Namespace, settings: GraderSettings) -> int:
    """The valid exercises on stdout; each broken folder's problems on stderr, and exit 2."""
    catalog = Catalog.scan(settings.exercises_dir)
    rows = [
        {
            "slug": exercise.spec.slug,
            "title": exercise.spec.title,
            "summary": exercise.spec.summary,
            "tests": len(exercise.spec.tests),
            "max_score": exercise.spec.max_score,
        }
        for exercise in catalog
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        width = max((len(exercise.spec.slug) for exercise in catalog), default=0)
        for exercise in catalog:
            print(f"{exercise.spec.slug:<{width}}  {exercise.spec.title}")
    return _problems_of(catalog)


def _problems_of(catalog: Catalog) -> int:
    for error in catalog.problems.values():
        print_problems(error)
    return EXIT_USAGE if catalog.problems else EXIT_OK


def _doctor(args: argparse.Namespace, settings: GraderSettings) -> int:
    catalog = Catalog.scan(settings.exercises_dir)
    print(
        f"exercises: {len(catalog.slugs())} valid, {len(catalog.problems)} broken "
        f"in {settings.exercises_dir}"
    )
    sandbox = ForkServerSandbox(slots=1, preload=catalog.allowed_imports())
    try:
        for layer in sandbox.layers():
            state = "active  " if layer.active else "INACTIVE"
            print(f"  {state}  {layer.name}: {layer.detail}")
    finally:
        sandbox.close()
    return _problems_of(catalog)


if __name__ == "__main__":
    sys.exit(main())
