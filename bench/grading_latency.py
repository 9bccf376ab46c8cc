"""Per-submission grading latency of exercise 1 (all its tests), three ways, in one run.

- in-process: the same engine with no isolation at all (the floor: the work itself);
- warm process: the product's sandbox, a fresh process per run forked from a warm one, with the
  service's two slots (a grading's visible and hidden tests at once, each in its own child) and
  with one (`autograder grade`'s: the hidden tests after the visible ones);
- fresh interpreter: a new Python per submission that imports torch (what most graders do).

Each submission comes to an idle service (--pause-s after the last grading), as a student's
does: the sandbox has its children forked, hardened and rehearsed ahead (`bench/load.py`
measures a busy one). Prints the medians and the ratios against the in-process floor: the warm
process as the service runs it within 1.2x, and at least 10x faster than a fresh interpreter.
Latency only: what a grading costs in CPU, and where, is `bench/phases.py`'s.

    python bench/grading_latency.py [--runs N] [--fresh-runs N]
"""

from __future__ import annotations

import argparse
import statistics

from _common import CORRECT, SECRET, measure

from grader.catalog import Catalog
from grader.runner import Grader
from grader.sandbox.fresh import FreshInterpreterSandbox
from grader.sandbox.inprocess import InProcessSandbox
from grader.sandbox.interface import Sandbox
from grader.sandbox.process import WarmProcessSandbox
from grader.sandbox.torch_setup import configure_torch
from grader.settings import GraderSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--fresh-runs", type=int, default=5)
    parser.add_argument("--pause-s", type=float, default=0.2, help="between gradings")
    args = parser.parse_args()
    # The floor does the same work the same way as the sandboxed children: torch set up as in
    # the warm process (one thread; without it OpenMP spin-waits dominate on a busy machine).
    configure_torch()

    settings = GraderSettings()
    catalog = Catalog.from_folder(settings.exercises_dir)
    source = CORRECT.read_text(encoding="utf-8")
    sandboxes: list[tuple[str, Sandbox, int]] = [
        ("in-process", InProcessSandbox(), args.runs),
        ("warm process", WarmProcessSandbox(slots=2), args.runs),
        ("warm process, 1 slot", WarmProcessSandbox(slots=1), args.runs),
        ("fresh interpreter", FreshInterpreterSandbox(), args.fresh_runs),
    ]
    medians = {}
    try:
        for name, sandbox, runs in sandboxes:
            grader = Grader(catalog, sandbox, secret=SECRET)
            grader.warm()  # reference outputs are computed once, before any timing
            timings = measure(grader, source, runs, args.pause_s)
            medians[name] = statistics.median(timings)
            print(
                f"{name:>20}: median {medians[name] * 1000:8.1f} ms  "
                f"(min {min(timings) * 1000:.1f}, max {max(timings) * 1000:.1f}, n={runs})"
            )
    finally:
        for _, sandbox, _ in sandboxes:
            sandbox.close()

    overhead = medians["warm process"] / medians["in-process"]
    speedup = medians["fresh interpreter"] / medians["warm process"]
    one_slot = medians["warm process, 1 slot"] / medians["in-process"]
    print(f"warm process / in-process          = {overhead:6.2f}x  (target <= 1.2)")
    print(f"warm process, 1 slot / in-process  = {one_slot:6.2f}x")
    print(f"fresh interpreter / warm process   = {speedup:6.1f}x  (target >= 10)")


if __name__ == "__main__":
    main()
