"""A deadline burst: --students different students each submit once, arriving as a Poisson
process, against the real service; then the service level it held (issue 29's goals).

What a course does to a grader in the last minute before a deadline. Every student is signed
in by a student link of their own (minted before the burst, as `autograder students link`
does), submits one file (70% correct, the rest cycling through the seed exercise's mistakes,
each source made distinct) and follows it as the exercise page does (bench/_burst_client.py:
long polls, or with `--client poll` the old page's polling), honouring Retry-After on 429 and
503. Every setting is the service's default: rate limits and queue capacities included.

Each run starts the service itself on loopback, in a fresh data dir, and stops it after:
`--mode embedded` is `autograder serve` on its embedded defaults; `--mode workers` the API and
--workers `autograder worker` on the local Redis and PostgreSQL. `--busy` runs a CPU hog on one
core (a busy loop at nice 0, bounded in time) while the burst lasts. `--suite` is what
`make bench-deadline` runs: embedded at 16.7/s and 40/s, quiet and busy, then workers at 40/s.
The service's processes run in a CPU cgroup of their own, as a container or a systemd unit
runs them (bench/_cgroup.py; it needs root); `--no-cgroup` leaves them in the host's sessions,
as a shell on a host without either starts them.

Printed for each run (bench/_burst_figures.py says how each is counted): lost, refused, 5xx,
wrong verdicts (against the written-out table of bench/_mix.py, as the student saw the report
and as the service holds it), POST-to-report p50/p95/p99 as the student sees it, POST accepted
p50/p95, the last report against capacity time, the place in line each student was first told,
and CPU per grading (the service's tree, the API process alone) against the in-process work of
the same mix measured in this run, graded as the service grades. Then one table: figure |
goal | measured | holds?. Exits 1 if any submission is lost, any verdict wrong (in-process
too), or any 5xx answered. Bounded: --deadline-s per burst (default 180 s) and 60 s to read every
submission back; the suite takes about 9 minutes on a quiet 2-core machine, at most about 30.

    python bench/deadline_burst.py --suite
    python bench/deadline_burst.py [--mode embedded|workers] [--rate R] [--busy] [--client poll]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path

from _burst_client import deadline_class, read_back, run_burst
from _burst_figures import Figures, Scenario, Spent, describe, figures, goals_table
from _cgroup import own_cgroup
from _common import (
    ROOT,
    Processes,
    cpu_account,
    machine_cores,
    own_cpu_s,
    processes,
    service_env,
    start_server,
    wait_ready,
)
from _mix import Job, mix, work_cpu_per_grading
from _scaleout import scaled_out

SUITE = (
    Scenario("embedded", 1000 / 60, busy=False, follow="wait"),
    Scenario("embedded", 1000 / 60, busy=True, follow="wait"),
    Scenario("embedded", 40.0, busy=False, follow="wait"),
    Scenario("embedded", 40.0, busy=True, follow="wait"),
    Scenario("workers", 40.0, busy=False, follow="wait"),
)
MAX_STUDENTS, MAX_RATE = 5000, 200.0


# --- the service and its students ----------------------------------------------------------------


@contextmanager
def service(
    started: Processes, scenario: Scenario, args: argparse.Namespace
) -> Iterator[tuple[str, dict[str, str]]]:
    """The service of the scenario's shape, ready, on its defaults; its base URL and the
    settings it was given beyond them."""
    if scenario.mode == "workers":
        with scaled_out(
            started,
            {},
            workers=args.workers,
            postgres=args.postgres,
            redis_server=args.redis,
            redis_db=args.redis_db,
            lift_rate_limits=False,
        ) as ready:
            yield ready
    else:
        base_url = start_server(started, lift_rate_limits=False)
        wait_ready(started, base_url)
        yield base_url, {}


# Run with the service's settings: the links are stored where it reads them.
MINT = """
import sys
from datetime import timedelta
from app.access import student_links
from app.core.db import command_session
from app.core.settings import get_settings
settings = get_settings()
with command_session(settings.sqlalchemy_url()) as session:
    for name in sys.stdin.read().split():
        _, token = student_links.mint(
            session, settings, course="default", student=name, lifetime=timedelta(days=1)
        )
        print(name, token)
"""


def sign_in(
    started: Processes, settings: Mapping[str, str], names: list[str]
) -> dict[str, dict[str, str]]:
    """Each student's headers: a student link of their own."""
    env = service_env(started.log_dir, settings, lift_rate_limits=False)
    done = subprocess.run(
        [sys.executable, "-c", MINT],
        input="\n".join(names).encode(),
        env=env,
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"minting links failed:\n{done.stderr.decode()[-3000:]}")
    tokens = dict(line.split() for line in done.stdout.decode().splitlines() if line.strip())
    return {name: {"Authorization": f"Bearer {tokens[name]}"} for name in names}


# A busy loop, ending by itself after argv[1] seconds whatever happens to the benchmark.
HOG = """
import sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
"""


@contextmanager
def hog(on: bool, bound_s: float) -> Iterator[Callable[[], float]]:
    """Other work on the machine while the block runs: a busy loop on one core at nice 0.
    Yields what tells its CPU-seconds so far."""
    if not on:
        yield lambda: 0.0
        return
    process = subprocess.Popen([sys.executable, "-c", HOG, str(bound_s)])
    try:
        yield lambda: own_cpu_s(process.pid)
    finally:
        process.terminate()
        process.wait()


# --- one run --------------------------------------------------------------------------------------


def run(scenario: Scenario, jobs: list[Job], work_s: float, args: argparse.Namespace) -> Figures:
    students = deadline_class(jobs, scenario.rate, args.seed)
    warmups = [
        replace(student, name=f"warm-up-{n}")
        for n, student in enumerate(deadline_class(mix(args.warmup, "warm-up"), 10.0, args.seed))
    ]
    with (
        processes() as started,
        service(started, scenario, args) as (base_url, settings),
        own_cgroup(started.pids()) if scenario.cgroup else nullcontext() as group,
    ):
        if scenario.cgroup and group is None:
            print("no cgroup could be made (it needs root): the service stays in its sessions")
            scenario = replace(scenario, cgroup=False)
        headers_of = sign_in(started, settings, [s.name for s in warmups + students])
        warm, _ = asyncio.run(run_burst(base_url, warmups, headers_of, scenario.follow, 120))
        if errors := [outcome.error for outcome in warm if outcome.error]:
            raise SystemExit(f"warm-up failed: {errors[:3]}\n{started.logs()}")
        api = started.started[0].pid
        loadavg = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        with hog(scenario.busy, args.deadline_s + 30) as hog_cpu_s:
            before, api_before = cpu_account(started.pids()), own_cpu_s(api)
            client_before = time.process_time()
            outcomes, burst = asyncio.run(
                run_burst(base_url, students, headers_of, scenario.follow, args.deadline_s)
            )
            client_s = time.process_time() - client_before
            spent_service, api_s = cpu_account(started.pids()) - before, own_cpu_s(api) - api_before
            hog_s = hog_cpu_s()
        started.check_alive()
        held = asyncio.run(read_back(base_url, outcomes, headers_of))
        spent = Spent(spent_service, api_s, client_s, hog_s)
        measured = figures(
            scenario,
            outcomes,
            held=held,
            burst=burst,
            spent=spent,
            work_s=work_s,
            cores=machine_cores(),
            loadavg=loadavg,
        )
        if measured.failed:  # the service's own account, before its logs go with its data dir
            print(started.logs(), flush=True)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="store_true", help="the runs of `make bench-deadline`")
    parser.add_argument("--mode", choices=["embedded", "workers"], default="embedded")
    parser.add_argument("--rate", type=float, default=1000 / 60, help="arrivals per second")
    parser.add_argument("--busy", action="store_true", help="a CPU hog on one core meanwhile")
    parser.add_argument("--client", choices=["wait", "poll"], default="wait")
    parser.add_argument(
        "--no-cgroup",
        dest="cgroup",
        action="store_false",
        help="leave the service in the host's sessions (bench/_cgroup.py), as a shell starts it",
    )
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--correct-share", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=6, help="untimed submissions first")
    parser.add_argument("--deadline-s", type=float, default=180.0, help="bound on each burst")
    parser.add_argument("--work-reps", type=int, default=2, help="in-process gradings per file")
    parser.add_argument("--workers", type=int, default=2, help="`autograder worker` processes")
    parser.add_argument("--postgres", default="postgres@127.0.0.1:5432", help="user@host:port")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379", help="without a DB number")
    parser.add_argument("--redis-db", type=int, default=13, help="the run's keys deleted after")
    args = parser.parse_args()
    if not 1 <= args.students <= MAX_STUDENTS or not 0 < args.rate <= MAX_RATE:
        raise SystemExit(f"--students 1..{MAX_STUDENTS}, --rate (0, {MAX_RATE}]")

    jobs = mix(args.students, "student", args.correct_share)
    work_s = work_cpu_per_grading(jobs, args.work_reps)  # exits on a verdict not expected
    chosen = SUITE if args.suite else (Scenario(args.mode, args.rate, args.busy, args.client),)
    scenarios = [replace(scenario, cgroup=args.cgroup) for scenario in chosen]
    runs = []
    for scenario in scenarios:
        runs.append(run(scenario, jobs, work_s, args))
        print(describe(runs[-1]), flush=True)
    print("\n" + goals_table(runs))
    if any(f.failed for f in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
