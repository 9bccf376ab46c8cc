"""`autograder doctor`: how many exercises are valid, and which sandbox layers this host allows,
probed by forking this very process (`grader.sandbox.probe`), not by starting a warm one."""

from __future__ import annotations

import argparse

from grader.catalog import Catalog
from grader.cli_output import exit_for_problems
from grader.sandbox.probe import host_layers
from grader.settings import GraderSettings


def doctor(_args: argparse.Namespace, settings: GraderSettings) -> int:
    catalog = Catalog.scan(settings.exercises_dir)
    print(
        f"exercises: {len(catalog.slugs())} valid, {len(catalog.problems)} broken "
        f"in {settings.exercises_dir}"
    )
    for layer in host_layers():
        state = "active  " if layer.active else "INACTIVE"
        print(f"  {state}  {layer.name}: {layer.detail}")
    return exit_for_problems(catalog.problems)
