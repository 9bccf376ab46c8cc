"""Whole-process time of the `autograder` commands, against a bare `import torch`, in one run.

Each command is timed from its process's start to its exit, paired run by run with a fresh
interpreter that imports torch (baseline, command, baseline, command...), so a busy machine
slows both alike. Prints the medians and the ratios the issue sets as targets:

- `--help`, `exercises`, `doctor`: at most 0.15x an `import torch` (they import no torch);
- `grade SLUG FILE`, its plan cached (one untimed run first): at most 1.5x;
- `grade` on a cold cache (its plans folder emptied before each run), for the record.

Everything runs in a temporary data dir: nothing of the user's is read or written.

    python bench/cli.py [--runs N] [--cold-runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import (
    CORRECT,
    SLUG,
    TORCH_IMPORT,
    autograder_argv,
    ms,
    process_seconds,
    ratio_line,
    service_env,
)

LIGHT_TARGET = "<= 0.15x"
GRADE_TARGET = "<= 1.5x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="pairs per command")
    parser.add_argument("--cold-runs", type=int, default=3, help="pairs of grade on a cold cache")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="autograder-bench-cli-") as folder:
        data_dir = Path(folder)
        env = service_env(data_dir)
        grade = autograder_argv("grade", SLUG, str(CORRECT))

        def empty_cache() -> None:
            shutil.rmtree(data_dir / "plans", ignore_errors=True)

        process_seconds(grade, env)  # the secret made, the plan cached, the disk cache warm
        rows = [
            ("--help", autograder_argv("--help"), args.runs, LIGHT_TARGET, None),
            ("exercises", autograder_argv("exercises"), args.runs, LIGHT_TARGET, None),
            ("doctor", autograder_argv("doctor"), args.runs, LIGHT_TARGET, None),
            ("grade (plan cached)", grade, args.runs, GRADE_TARGET, None),
            ("grade (cold cache)", grade, args.cold_runs, None, empty_cache),
        ]
        for name, argv, runs, target, before in rows:
            baseline, command = paired(argv, env, runs, before)
            report(name, baseline, command, target)


def paired(
    argv: Sequence[str],
    env: dict[str, str],
    runs: int,
    before: Callable[[], None] | None,
) -> tuple[list[float], list[float]]:
    """Seconds of `import torch` and of the command, alternating, `runs` of each."""
    baseline, command = [], []
    for _ in range(runs):
        baseline.append(process_seconds(TORCH_IMPORT))
        if before is not None:
            before()
        command.append(process_seconds(argv, env))
    return baseline, command


def report(name: str, baseline: list[float], command: list[float], target: str | None) -> None:
    torch_median, command_median = statistics.median(baseline), statistics.median(command)
    print(
        f"{'autograder ' + name:>32}: median {ms(command_median)}  "
        f"(min {min(command) * 1000:.1f}, max {max(command) * 1000:.1f}, n={len(command)}); "
        f"import torch {ms(torch_median)}"
    )
    print(ratio_line(f"{name} / import torch", command_median / torch_median, target))


if __name__ == "__main__":
    main()
