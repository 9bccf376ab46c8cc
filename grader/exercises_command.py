"""`autograder exercises`: the catalog this machine would serve, each folder checked without
running its reference (`Catalog.scan`), each draft (`grader.proof_record`) flagged."""

from __future__ import annotations

import argparse
import json

from grader.catalog import Catalog
from grader.cli_output import exit_for_problems
from grader.settings import GraderSettings


def exercises(args: argparse.Namespace, settings: GraderSettings) -> int:
    """The valid exercises on stdout; each broken folder's problems on stderr, and exit 2."""
    catalog = Catalog.scan(settings.exercises_dir)
    drafts = catalog.drafts()
    rows = [
        {
            "slug": exercise.spec.slug,
            "title": exercise.spec.title,
            "summary": exercise.spec.summary,
            "tests": len(exercise.spec.tests),
            "max_score": exercise.spec.max_score,
            "draft": drafts.get(exercise.spec.slug),
        }
        for exercise in catalog
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        width = max((len(exercise.spec.slug) for exercise in catalog), default=0)
        for exercise in catalog:
            slug = exercise.spec.slug
            draft = f"  (draft: {drafts[slug]})" if slug in drafts else ""
            print(f"{slug:<{width}}  {exercise.spec.title}{draft}")
    return exit_for_problems(catalog.problems)
