"""`autograder exercises`: the catalog this machine would serve, each folder checked without
running its reference (`Catalog.scan`)."""

from __future__ import annotations

import argparse
import json

from grader.catalog import Catalog
from grader.cli_output import exit_for_problems
from grader.settings import GraderSettings


def exercises(args: argparse.Namespace, settings: GraderSettings) -> int:
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
    return exit_for_problems(catalog.problems)
