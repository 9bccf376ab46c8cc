"""`autograder grade SLUG FILE`: one submission graded in a warm sandbox, in a process of its
own.

The whole process is what the student waits for, so two things overlap: the warm process (which
imports torch, about a second) starts on a thread while this one loads the exercise's plan,
from the plan cache (`grader.plan_cache`: no torch imported here at all) or, on a miss, by
running the reference (which imports torch here too, on the other core).
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.catalog import Catalog
from grader.cli import EVERY_FAILING_TEST
from grader.cli_output import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from grader.plan_cache import PlanCache
from grader.render import render_json, render_snippets, render_text
from grader.report import TEST_NAMES_SEPARATOR, Report, ReportStatus, TestStatus
from grader.runner import Grader
from grader.sandbox.process import WarmProcessSandbox
from grader.settings import GraderSettings
from grader.spec import ExerciseSpec, Visibility

MAX_SOURCE_BYTES = 256 * 1024


def grade(args: argparse.Namespace, settings: GraderSettings) -> int:
    source = _read_source(args.file)
    if source is None:
        return EXIT_USAGE
    catalog = Catalog.scan(settings.exercises_dir)
    # An unknown exercise, or a broken folder, is a usage error before any process starts (a
    # reference that fails when it runs is one too, once building its plan finds it out); so is
    # asking to reproduce a test that is not a visible one.
    unknown = _not_reproducible(catalog.get(args.slug).spec, args.reproduce)
    if unknown:
        print(f"autograder: {unknown}", file=sys.stderr)
        return EXIT_USAGE
    # In a student's homework folder: the secret and the cache go to the user's data dir.
    user = settings.in_user_data_dir()
    secret = user.master_secret()
    # One grading: the warm process's start is the critical path, its forks are two.
    sandbox = WarmProcessSandbox(slots=1, preload=catalog.allowed_imports(), huge_pages=False)
    grader = Grader(catalog, sandbox, secret, PlanCache(user.plan_cache_dir(), secret))
    try:
        # `layers()` starts the warm process; a failure to start shows again, in the report,
        # when the grading asks for it.
        with ThreadPoolExecutor(max_workers=1) as warming:
            warming.submit(sandbox.layers)
            grader.plan(args.slug)
        report = grader.grade(args.slug, source)
    finally:
        sandbox.close()
    print(render_json(report) if args.json else render_text(report), end="\n")
    if args.reproduce is not None:
        _print_snippets(report, args.reproduce)
    return EXIT_OK if report.status is ReportStatus.PASSED else EXIT_FAILED


def _not_reproducible(spec: ExerciseSpec, name: str | None) -> str | None:
    """Why `--reproduce NAME` cannot be given: no such test, or a hidden one (whose inputs are
    the deployment's secret); None when it can."""
    if not name:
        return None
    visible = [test.name for test in spec.tests if test.visibility is Visibility.VISIBLE]
    if name in visible:
        return None
    hidden = any(test.name == name for test in spec.tests)
    why = (
        "is a hidden test: it tells only pass or fail" if hidden else "is no test of this exercise"
    )
    return f"{name!r} {why}; its visible tests are: {TEST_NAMES_SEPARATOR.join(visible)}"


def _print_snippets(report: Report, name: str) -> None:
    """The code of the test named, or of every visible test that failed."""
    chosen = [
        test
        for test in report.tests
        if test.name == name
        or (name == EVERY_FAILING_TEST and test.status is not TestStatus.PASSED)
    ]
    snippets = render_snippets(chosen)
    if snippets:
        print(snippets, end="")
    elif name == EVERY_FAILING_TEST:
        print("autograder: nothing to reproduce: no visible test that ran failed", file=sys.stderr)
    else:
        print(f"autograder: nothing to reproduce: {name!r} did not run", file=sys.stderr)


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
