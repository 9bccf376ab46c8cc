"""`autograder exercises` and `autograder doctor`: what this machine would serve, checked
without running anything (`Catalog.scan` reads each folder and parses its reference; the layers
come from a probe child that imports no torch)."""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor

from grader.catalog import Catalog
from grader.cli_output import EXIT_OK, EXIT_USAGE, print_problems
from grader.sandbox.probe import host_layers
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
    return _problems_of(catalog)


def doctor(_args: argparse.Namespace, settings: GraderSettings) -> int:
    with ThreadPoolExecutor(max_workers=1) as probing:  # its interpreter starts meanwhile
        layers = probing.submit(host_layers)
        catalog = Catalog.scan(settings.exercises_dir)
    print(
        f"exercises: {len(catalog.slugs())} valid, {len(catalog.problems)} broken "
        f"in {settings.exercises_dir}"
    )
    for layer in layers.result():
        state = "active  " if layer.active else "INACTIVE"
        print(f"  {state}  {layer.name}: {layer.detail}")
    return _problems_of(catalog)


def _problems_of(catalog: Catalog) -> int:
    for error in catalog.problems.values():
        print_problems(error)
    return EXIT_USAGE if catalog.problems else EXIT_OK
