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
from grader.cli_output import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from grader.plan_cache import PlanCache
from grader.render import render_json, render_text
from grader.report import ReportStatus
from grader.runner import Grader
from grader.sandbox.process import WarmProcessSandbox
from grader.settings import GraderSettings

MAX_SOURCE_BYTES = 256 * 1024


def grade(args: argparse.Namespace, settings: GraderSettings) -> int:
    source = _read_source(args.file)
    if source is None:
        return EXIT_USAGE
    catalog = Catalog.scan(settings.exercises_dir)
    # An unknown exercise, or a broken folder, is a usage error before any process starts (a
    # reference that fails when it runs is one too, once building its plan finds it out).
    catalog.get(args.slug)
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
