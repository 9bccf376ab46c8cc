"""A grading's CPU and page faults in two sandboxed children (as graded) against one.

Every solution and mistake of the seed exercise, graded the two ways in alternate rounds through
one warm process with one slot (so the two children of a grading do not overlap):

- two children: the visible job, then the hidden job, each in a child of its own;
- one child: a single job holding the visible and then the hidden calls. This is the prototype
  of one child per grading, and an upper bound on what it saves: it sends the hidden inputs
  with the rest, where a real one would send them in a second round trip, once the visible
  results are stored and every channel toward the student is closed (`docs/sandbox.md`).

Per grading it prints the supervisor's CPU (this process: encoding jobs, decoding events), the
warm process's and its reaped children's (from /proc: forks, hardening, the work, exits), the
children's system time and minor page faults, and the ratio to the same jobs run in process.

    python bench/children.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass, replace

from _common import EXERCISE, SLUG, in_process_grader, ms

from grader.contract import Job
from grader.sandbox.inprocess import InProcessSandbox
from grader.sandbox.interface import Sandbox
from grader.sandbox.process import WarmProcessSandbox

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Spent:
    """CPU seconds and faults so far, per role; two of them differ by what happened between."""

    supervisor: float
    sandbox: float  # the warm process and the children it reaped
    children_system: float
    children_faults: int

    def __sub__(self, earlier: Spent) -> Spent:
        return Spent(
            *(getattr(self, name) - getattr(earlier, name) for name in self.__dataclass_fields__)
        )


def spent(warm_pid: int) -> Spent:
    fields = _stat(warm_pid)  # from its state on: cminflt at 8, utime to cstime at 11-14
    own_and_reaped = sum(int(fields[index]) for index in (11, 12, 13, 14))
    return Spent(
        time.process_time(), own_and_reaped / _TICKS, int(fields[14]) / _TICKS, int(fields[8])
    )


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def warm_process_of_ours() -> int:
    """Started by this (main) thread: its only child."""
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as children:
        return int(children.read().split()[0])


def gradings(rounds: int) -> tuple[list[tuple[Job, ...]], list[tuple[Job, ...]], float]:
    """Each submission's jobs in two children and in one, and the in-process CPU per grading."""
    sources = [
        path.read_text(encoding="utf-8")
        for folder in ("solutions", "mistakes")
        for path in sorted((EXERCISE / folder).glob("*.py"))
    ]
    with in_process_grader() as grader:
        plan = grader.plan(SLUG)
    two: list[tuple[Job, ...]] = []
    one: list[tuple[Job, ...]] = []
    for source in sources:
        visible, hidden = plan.visible_job(source), plan.hidden_job(source, plan.draw())
        two.append((visible, hidden))
        one.append((replace(visible, calls=visible.calls + hidden.calls),))
    floor = InProcessSandbox()
    started = time.process_time()
    for _ in range(rounds):
        run_all(floor, two)
    return two, one, (time.process_time() - started) / (rounds * len(two))


def run_all(sandbox: Sandbox, graded: list[tuple[Job, ...]]) -> None:
    for jobs in graded:
        for job in jobs:
            sandbox.run(job)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    two, one, in_process_s = gradings(args.rounds)
    ways = {"two children": two, "one child": one}
    samples: dict[str, list[Spent]] = {name: [] for name in ways}
    sandbox = WarmProcessSandbox(slots=1)
    try:
        sandbox.layers()
        warm_pid = warm_process_of_ours()
        run_all(sandbox, two[:2])  # untimed: first-use costs are not the work
        for round_ in range(args.rounds):
            for name in list(ways)[:: 1 if round_ % 2 == 0 else -1]:
                before = spent(warm_pid)
                run_all(sandbox, ways[name])
                time.sleep(0.2)  # the last child reaped
                samples[name].append(spent(warm_pid) - before)
    finally:
        sandbox.close()
    count = len(two)
    print(f"per grading, medians of {args.rounds} rounds of {count}; in process {ms(in_process_s)}")
    for name, rounds in samples.items():
        median = {
            field: statistics.median(getattr(sample, field) for sample in rounds) / count
            for field in Spent.__dataclass_fields__
        }
        tree = median["supervisor"] + median["sandbox"]
        print(
            f"{name:<13} tree {ms(tree)} (supervisor {ms(median['supervisor']).strip()}, "
            f"children's system {ms(median['children_system']).strip()}), "
            f"{median['children_faults']:6.0f} faults, {tree / in_process_s:.2f}x in-process"
        )


if __name__ == "__main__":
    main()
