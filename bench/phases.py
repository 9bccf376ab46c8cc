"""Where one grading of exercise 1 spends its CPU, phase by phase, in-process and sandboxed.

The seed's common real answer is graded the two ways, each phase timed with the CPU clock of
the process that runs it (medians over --runs, after one untimed round):

- in-process, the work itself: loading the submission (compiling it under the policy and running
  its module), its visible tests, the probes on them (properties and weights), its hidden tests,
  the trainability checks (gradient passes, inputs scaled up: `grader.trainability`), and judging
  (comparing with the reference's outputs, diagnosing);
- sandboxed, the same work in children forked from this process once it is set up as the warm
  process is (`warm_process.load_runtime`, `warm_up`, `settle_for_forking`), with what the sandbox
  adds around it: the fork (in the warm process), the child's hardening (`prepare` right after
  the fork, `confine` once the job is in), receiving the job, sending the events, and the
  child's exit (what the kernel spends tearing down its copy of the warm process, with the
  fork's own first faults in the child); and, in the supervisor, encoding the jobs and
  decoding the events.

The work is split by difference: a job with no call is the load alone, the visible tests less
that are the tests, the whole visible job less its tests are the probes. A grading loads the
submission twice, once in each child (the hidden tests run apart from the visible ones).

What a grading costs the API besides (HTTP, the database, waking the waiter) is its share in
`bench/load.py`, less the supervisor's part here.

It ends with the cost of the trainability checks: the sandboxed total against the same total
without them (forward only).

    python bench/phases.py [--runs N] [--exercise SLUG]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from _common import CORRECT, SECRET, SLUG, ms

from grader.catalog import Catalog
from grader.contract import Execution, Job, Violation
from grader.hidden_verdicts import HiddenRun
from grader.judge import judge
from grader.plan import ExercisePlan
from grader.plan_building import build_plan
from grader.sandbox import guest, hardening, warm_process
from grader.sandbox.frames import MAX_EVENT_HEADER, MAX_JOB_HEADER, FrameReader
from grader.sandbox.inprocess import InProcessSandbox
from grader.sandbox.protocol import decode_event, decode_job, encode_event, encode_job
from grader.sandbox.scratch import make_scratch, remove_scratch
from grader.sandbox.transcript import EventReporter, Transcript
from grader.settings import GraderSettings
from grader.spec import Exercise

PRELOAD = ("torch", "numpy")
Seconds = dict[str, float]


def job_variants(plan: ExercisePlan, source: str) -> dict[str, Job]:
    visible, hidden = plan.visible_job(source), plan.hidden_job(source, plan.draw())
    shown = [test for test in plan.tests if test.visible]
    tests, probes = len(shown), sum(len(test.probes) for test in shown)
    hidden_tests = len(plan.tests) - tests
    return {
        "load": replace(visible, calls=()),
        "visible tests": replace(visible, calls=visible.calls[:tests]),
        "visible with probes": replace(visible, calls=visible.calls[: tests + probes]),
        "visible job": visible,
        "hidden tests": replace(hidden, calls=hidden.calls[:hidden_tests]),
        "hidden job": hidden,
    }


TRAINABILITY = "trainability (gradients, scale)"


def work_split(cost: dict[str, float]) -> Seconds:
    """The work's phases, per grading, from the cost of each job variant."""
    return {
        "load the submission (x2)": 2 * cost["load"],
        "visible tests": cost["visible tests"] - cost["load"],
        "probes (properties, weights)": cost["visible with probes"] - cost["visible tests"],
        "hidden tests": cost["hidden tests"] - cost["load"],
        TRAINABILITY: cost["visible job"]
        - cost["visible with probes"]
        + cost["hidden job"]
        - cost["hidden tests"],
    }


# --- in-process ---------------------------------------------------------------------------------


def in_process(plan: ExercisePlan, jobs: dict[str, Job]) -> Seconds:
    sandbox = InProcessSandbox()
    cost, runs = {}, {}
    for name, job in jobs.items():
        started = time.process_time()
        runs[name] = sandbox.run(job)
        cost[name] = time.process_time() - started
    return work_split(cost) | {"judge (compare, diagnose)": judged(plan, jobs, runs)}


def judged(plan: ExercisePlan, jobs: dict[str, Job], runs: dict[str, Execution]) -> float:
    draw = {test.spec.name: test.cases[0] for test in plan.tests if not test.visible}
    hidden_run = InProcessSandbox().run(plan.hidden_job(jobs["load"].source, draw))
    started = time.process_time()
    judge(plan, runs["visible job"], HiddenRun(draw, hidden_run))
    return time.process_time() - started


# --- sandboxed ----------------------------------------------------------------------------------


def sandboxed(jobs: dict[str, Job]) -> Seconds:
    runs = {name: in_child(job) for name, job in jobs.items()}
    both = [runs["visible job"], runs["hidden job"]]
    around = {phase: sum(run[phase] for run in both) for phase in both[0] if phase != "work"}
    work = work_split({name: run["work"] for name, run in runs.items()})
    return {
        "fork (warm process)": around["fork"],
        "harden after the fork": around["prepare"],
        "receive the job": around["receive the job"],
        "confine": around["confine"],
        **work,
        "exit": around["exit"],
        "encode the jobs": around["encode the job"],
        "decode the events": around["decode the events"],
    }


def in_child(job: Job) -> Seconds:
    """`job` in a child forked from this process and hardened as the sandbox's are; the CPU of
    each phase: the fork's and the supervisor's here, the child's there, its exit included."""
    uid = hardening.slot_uid(64000, 0)
    scratch = make_scratch(os.environ.get("TMPDIR", "/tmp"), uid)
    ours, theirs = socket.socketpair()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.process_time()
    pid = os.fork()
    if pid == 0:
        _child(theirs.fileno(), scratch, uid)
    fork_s = time.process_time() - started
    theirs.close()
    started = time.process_time()
    ours.sendall(encode_job(job))
    encode_s = time.process_time() - started
    ours.shutdown(socket.SHUT_WR)
    with ours.makefile("rb") as channel:
        events, _, laps_json = channel.read().rpartition(b"\n")
    laps: Seconds = json.loads(laps_json)
    os.waitpid(pid, 0)
    ours.close()
    remove_scratch(scratch)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    whole = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    started = time.process_time()
    transcript, reader = Transcript(job), FrameReader(MAX_EVENT_HEADER, 1 << 40)
    for frame in reader.feed(events):
        transcript.record(decode_event(frame, job))
    decode_s = time.process_time() - started
    return {
        "fork": fork_s,
        **laps,
        "exit": whole - sum(laps.values()),
        "encode the job": encode_s,
        "decode the events": decode_s,
    }


def _child(channel_fd: int, scratch: str, uid: int | None) -> NoReturn:
    laps, clock = {}, [time.process_time()]

    def lap(name: str) -> None:
        clock.append(time.process_time())
        laps[name] = clock[-1] - clock[-2]

    try:
        hardening.prepare(channel_fd, scratch, uid)
        lap("prepare")
        channel = socket.socket(fileno=hardening.CHANNEL_FD)
        job = decode_job(next(FrameReader(MAX_JOB_HEADER, 1 << 40).feed(_read_all(channel))))
        lap("receive the job")
        hardening.confine(job.limits, scratch)
        lap("confine")
        guest.execute(job, EventReporter(lambda e: channel.sendall(encode_event(e))), _refuse)
        lap("work")
        channel.sendall(b"\n" + json.dumps(laps).encode())
    finally:
        os._exit(0)


def _read_all(channel: socket.socket) -> bytes:
    chunks = []
    while chunk := channel.recv(1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _refuse(violation: Violation) -> NoReturn:
    raise RuntimeError(f"the benchmark's submission broke the policy: {violation}")


# --- the table ----------------------------------------------------------------------------------


def medians(measure: Callable[[], Seconds], runs: int) -> Seconds:
    measure()  # untimed: first-use costs are not the work
    samples = [measure() for _ in range(runs)]
    return {phase: statistics.median(sample[phase] for sample in samples) for phase in samples[0]}


def print_table(work: Seconds, boxed: Seconds) -> None:
    print(f"{'phase, per grading (CPU)':<32} {'in-process':>11} {'sandboxed':>11}")
    for phase in dict.fromkeys([*boxed, *work]):
        cells = [ms(table[phase]) if phase in table else f"{'':>11}" for table in (work, boxed)]
        print(f"{phase:<32} {cells[0]} {cells[1]}")
    # Judging is the same code on both sides: the sandboxed total takes it once, from in-process.
    boxed_total = sum(boxed.values()) + work["judge (compare, diagnose)"]
    print(f"{'total':<32} {ms(sum(work.values()))} {ms(boxed_total)}")
    print(f"sandboxed / in-process = {boxed_total / sum(work.values()):.2f}x")
    forward_only = boxed_total - boxed[TRAINABILITY]
    print(
        f"with trainability / forward only (sandboxed) = {boxed_total / forward_only:.2f}x "
        f"({ms(boxed_total).strip()} against {ms(forward_only).strip()})"
    )


def solution_of(exercise: Exercise) -> Path:
    """The seed's common real answer, or another exercise's first solution."""
    if exercise.spec.slug == SLUG:
        return CORRECT
    return sorted((exercise.folder / "solutions").glob("*.py"))[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--exercise", default=SLUG, help="a slug (default: the seed exercise)")
    args = parser.parse_args()
    exercise = Catalog.from_folder(GraderSettings().exercises_dir).get(args.exercise)
    plan = build_plan(exercise, SECRET)
    jobs = job_variants(plan, solution_of(exercise).read_text(encoding="utf-8"))
    warm_process.load_runtime(PRELOAD)
    warm_process.warm_up(PRELOAD)
    # As the warm process: settled last, with nothing allocated after it before the forks.
    warm_process.settle_for_forking(collapse=True)
    boxed = medians(lambda: sandboxed(jobs), args.runs)
    work = medians(lambda: in_process(plan, jobs), args.runs)
    print_table(work, boxed)


if __name__ == "__main__":
    main()
