"""Load: --submissions gradings of exercise 1 at --concurrency against the real service.

A mix of the seed exercise's student-style submissions (every other one correct, the rest
cycling through its mistakes, each source made distinct) is sent by an asyncio client as
`POST /v1/submissions?wait=true` (polling `GET /v1/submissions/{id}` when a wait answers 202
first; honouring Retry-After on 503 or 429 and retrying). Checked, failing the run when broken: none
lost (every accepted id ends `done`, read back at the end), no 5xx but explicit 503s, every
verdict right (correct: passed; each mistake: failed with its diagnosis code). Reported:
throughput, p50/p90 latency (first POST to verdict), and throughput as a fraction of the
machine's ideal, cores / CPU-seconds per grading, where the CPU-seconds are the in-process work
of the same mix measured in this run (the engine without isolation, no HTTP, no database); the
service's own CPU per grading (its process tree, from /proc, children included) is printed
beside it, split between the API and worker processes, the sandbox's warm processes and their
sandboxed children, and so is the whole machine's (kernel threads included). Memory: the
service's process tree sampled under load, as PSS (shared pages split
between the processes sharing them; the forked sandbox children share most of theirs) and as
summed RSS. `--mode embedded` (default) runs `autograder serve` on its embedded defaults;
`--mode workers` runs compose's shape: the API with AUTOGRADER_BROKER_URL and
AUTOGRADER_DATABASE_URL on the local Redis (a dedicated DB) and PostgreSQL (a fresh database,
dropped after) plus --workers `autograder worker` processes (2 slots each, as compose runs
them), whose CPU and memory count as the service's (Redis' and PostgreSQL's do not). `--mode
both` runs the two and prints workers / embedded throughput (>= 0.9 taken as keeping it).

    python bench/load.py [--mode embedded|workers|both] [--submissions N] [--concurrency N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from _common import (
    SLUG,
    CpuAccount,
    Memory,
    Processes,
    add_service_env_option,
    cpu_account,
    exercises_forward_only,
    machine_cores,
    memory,
    mib,
    percentile,
    processes,
    ratio_line,
    service_env_option,
    start_server,
    wait_ready,
)
from _mix import Job, Verdict, expected_verdict, mix, verdict_of, work_cpu_per_grading
from _scaleout import scaled_out

# --- the client ---------------------------------------------------------------------------------

POLL_S = 0.2


@dataclass
class Outcome:
    job: Job
    latency_s: float = 0.0
    submission_id: str | None = None
    verdict: Verdict | None = None
    refusals: Counter[int] = field(default_factory=Counter)  # honoured 429s and 503s
    error: str | None = None  # a response the contract does not allow, or no response


async def grade(client: httpx.AsyncClient, job: Job) -> Outcome:
    outcome = Outcome(job)
    started = time.perf_counter()
    try:
        response = await _submit(client, job, outcome)
        if response is None:
            return outcome
        body = response.json()
        outcome.submission_id = body["id"]
        while body["status"] != "done":  # the wait ended first (202): poll
            await asyncio.sleep(POLL_S)
            response = await client.get(f"/v1/submissions/{outcome.submission_id}")
            if response.status_code != 200:
                outcome.error = f"GET answered {response.status_code}: {response.text[:300]}"
                return outcome
            body = response.json()
        outcome.verdict = verdict_of(body["report"])
    except (httpx.HTTPError, ValueError) as error:  # no answer, or one that is not JSON
        outcome.error = f"{type(error).__name__}: {error}"
    outcome.latency_s = time.perf_counter() - started
    return outcome


async def _submit(client: httpx.AsyncClient, job: Job, outcome: Outcome) -> httpx.Response | None:
    body = {"exercise": SLUG, "source": job.source}
    while True:
        response = await client.post("/v1/submissions", params={"wait": "true"}, json=body)
        if response.status_code in {200, 202}:
            return response
        retry_after = response.headers.get("Retry-After")
        if response.status_code not in {429, 503} or retry_after is None:
            outcome.error = f"POST answered {response.status_code}: {response.text[:300]}"
            return None
        outcome.refusals[response.status_code] += 1
        await asyncio.sleep(float(retry_after))


async def run_all(
    base_url: str, jobs: Sequence[Job], concurrency: int
) -> tuple[list[Outcome], float]:
    """Every job graded by `concurrency` clients in parallel; the outcomes and the wall time."""
    pending = iter(jobs)
    outcomes: list[Outcome] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=300, limits=limits) as client:

        async def one_client() -> None:
            for job in pending:
                outcomes.append(await grade(client, job))

        started = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(concurrency)))
        return outcomes, time.perf_counter() - started


async def read_back(base_url: str, ids: Sequence[str], concurrency: int) -> dict[str, Verdict]:
    """What the service holds for each id now; ids not done are left out."""
    stored: dict[str, Verdict] = {}
    pending = iter(ids)
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:

        async def one_client() -> None:
            for submission_id in pending:
                response = await client.get(f"/v1/submissions/{submission_id}")
                if response.status_code == 200 and (body := response.json())["status"] == "done":
                    stored[submission_id] = verdict_of(body["report"])

        await asyncio.gather(*(one_client() for _ in range(concurrency)))
    return stored


# --- measuring the service ----------------------------------------------------------------------


@dataclass
class MemoryPeak:
    idle: Memory
    pss_bytes: int = 0
    rss_bytes: int = 0

    def add(self, sample: Memory) -> None:
        self.pss_bytes = max(self.pss_bytes, sample.pss_bytes)
        self.rss_bytes = max(self.rss_bytes, sample.rss_bytes)


@contextmanager
def sampled(pids: Callable[[], list[int]], every_s: float) -> Iterator[MemoryPeak]:
    peak = MemoryPeak(idle=memory(pids()))
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(every_s):
            peak.add(memory(pids()))

    sampler = threading.Thread(target=sample, name="memory-sampler", daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        stop.set()
        sampler.join()
        peak.add(memory(pids()))


@dataclass
class Run:
    mode: str
    outcomes: list[Outcome]
    wall_s: float
    cpu: CpuAccount  # spent during the measured load
    client_cpu_s: float
    memory: MemoryPeak
    problems: list[str]

    @property
    def throughput(self) -> float:
        return len(self.outcomes) / self.wall_s


def load(
    mode: str,
    started: Processes,
    base_url: str,
    jobs: Sequence[Job],
    args: argparse.Namespace,
    *,
    trainability: bool = True,
) -> Run:
    """Warm the service up (untimed), then the measured load, then read every id back."""
    warmup, _ = asyncio.run(run_all(base_url, mix(args.warmup, "warm-up"), args.concurrency))
    problems = [f"warm-up: {outcome.error}" for outcome in warmup if outcome.error]
    with sampled(started.pids, args.sample_s) as peak:
        cpu_before, client_before = cpu_account(started.pids()), time.process_time()
        outcomes, wall_s = asyncio.run(run_all(base_url, jobs, args.concurrency))
        cpu = cpu_account(started.pids()) - cpu_before
        client_cpu_s = time.process_time() - client_before
    started.check_alive()
    ids = [outcome.submission_id for outcome in outcomes if outcome.submission_id]
    stored = asyncio.run(read_back(base_url, ids, args.concurrency))
    problems += check(outcomes, stored, trainability=trainability)
    return Run(mode, outcomes, wall_s, cpu, client_cpu_s, peak, problems)


def check(
    outcomes: Sequence[Outcome], stored: dict[str, Verdict], *, trainability: bool
) -> list[str]:
    problems = []
    for outcome in outcomes:
        expected = expected_verdict(outcome.job.name, trainability=trainability)
        if outcome.error:
            problems.append(f"{outcome.job.name}: {outcome.error}")
        elif outcome.submission_id not in stored:
            problems.append(f"{outcome.job.name}: {outcome.submission_id} is not done (lost)")
        elif outcome.verdict != expected or stored[outcome.submission_id] != expected:
            problems.append(f"{outcome.job.name}: got {outcome.verdict}, expected {expected}")
    return problems


# --- the two shapes of the service --------------------------------------------------------------


def run_embedded(
    jobs: Sequence[Job], args: argparse.Namespace, forward_only: Path | None = None
) -> Run:
    """The embedded service; against the exercises of `forward_only`, where given."""
    env = service_env_option(args.service_env)
    if forward_only is not None:
        env["AUTOGRADER_EXERCISES_DIR"] = str(forward_only)
    mode = "embedded" if forward_only is None else "embedded, forward only"
    with processes() as started:
        base_url = start_server(started, env)
        wait_ready(started, base_url)
        return load(mode, started, base_url, jobs, args, trainability=forward_only is None)


def run_workers(jobs: Sequence[Job], args: argparse.Namespace) -> Run:
    with processes() as started:
        settings = service_env_option(args.service_env)
        with scaled_out(
            started,
            settings,
            workers=args.workers,
            postgres=args.postgres,
            redis_server=args.redis,
            redis_db=args.redis_db,
        ) as (base_url, _):
            return load("workers", started, base_url, jobs, args)


# --- the report ---------------------------------------------------------------------------------


def report(run: Run, work_cpu_s: float, concurrency: int) -> None:
    cores = machine_cores()
    latencies = [outcome.latency_s for outcome in run.outcomes if not outcome.error]
    refusals = sum((outcome.refusals for outcome in run.outcomes), Counter[int]())
    per_grading_ms = 1000 / len(run.outcomes)
    tree_ms = run.cpu.tree * per_grading_ms
    ideal = cores / work_cpu_s
    print(f"\n== {run.mode}: {len(run.outcomes)} submissions at concurrency {concurrency}")
    print(
        f"  checks:           {len(run.problems)} problems (lost, wrong verdict, answer outside "
        f"the contract); refusals honoured: {dict(refusals) or 'none'}"
    )
    for problem in run.problems[:20]:
        print(f"    {problem}")
    print(f"  throughput:       {run.throughput:.2f} gradings/s ({run.wall_s:.1f} s)")
    if latencies:
        print(
            f"  latency:          p50 {percentile(latencies, 50):.3f} s, "
            f"p90 {percentile(latencies, 90):.3f} s"
        )
    print(
        f"  CPU per grading:  {work_cpu_s * 1000:.1f} ms of in-process work; the service's "
        f"tree spent {tree_ms:.1f} ms ({tree_ms / (work_cpu_s * 1000):.2f}x): "
        f"{run.cpu.service * per_grading_ms:.1f} in API and worker processes, "
        f"{run.cpu.warm * per_grading_ms:.1f} in warm processes, "
        f"{run.cpu.children * per_grading_ms:.1f} in sandboxed children"
    )
    print(
        f"  machine's CPU:    {run.cpu.machine * per_grading_ms:.1f} ms per grading, anything "
        f"included (client, database, kernel threads); {run.cpu.machine / run.wall_s:.2f} of "
        f"{cores} cores busy"
    )
    print(f"  machine's ideal:  {ideal:.2f} gradings/s ({cores} cores / in-process CPU)")
    print(f"  client's CPU:     {run.client_cpu_s:.1f} s, on the same cores")
    print(
        f"  service memory:   peak PSS {mib(run.memory.pss_bytes)} "
        f"(idle {mib(run.memory.idle.pss_bytes)}), peak summed RSS {mib(run.memory.rss_bytes)}"
    )
    print("  " + ratio_line("throughput / machine's ideal", run.throughput / ideal))


def trainability_cost(
    jobs: Sequence[Job], args: argparse.Namespace, checked: Run, work_cpu_s: float
) -> Run:
    """The embedded run again with every exercise's trainability checks off: their cost, as
    CPU per grading of the service's tree and of the in-process work, checks on / off."""
    with exercises_forward_only() as folder:
        baseline_work_s = work_cpu_per_grading(jobs, args.work_reps, folder)
        baseline = run_embedded(jobs, args, folder)
    report(baseline, baseline_work_s, args.concurrency)
    tree, work = checked.cpu.tree / baseline.cpu.tree, work_cpu_s / baseline_work_s
    print("\n" + ratio_line("trainability on / off, service's CPU", tree, "<= 1.5"))
    print(ratio_line("trainability on / off, in-process work", work, "<= 1.5"))
    return baseline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["embedded", "workers", "both"], default="embedded")
    parser.add_argument("--submissions", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=32, help="untimed submissions first")
    parser.add_argument("--work-reps", type=int, default=5, help="in-process gradings per file")
    parser.add_argument("--sample-s", type=float, default=0.5, help="memory sampling period")
    parser.add_argument("--workers", type=int, default=2, help="`autograder worker` processes")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379", help="without a DB number")
    parser.add_argument(
        "--redis-db",
        type=int,
        default=13,
        help="a DB for benchmarks; the run's keys are deleted after",
    )
    parser.add_argument("--postgres", default="postgres@127.0.0.1:5432", help="user@host:port")
    parser.add_argument(
        "--forward-only",
        action="store_true",
        help="also run embedded with the trainability checks off, and print what they cost",
    )
    add_service_env_option(parser)
    args = parser.parse_args()

    jobs = mix(args.submissions)
    work_cpu_s = work_cpu_per_grading(jobs, args.work_reps)
    modes = ["embedded", "workers"] if args.mode == "both" else [args.mode]
    runners = {"embedded": run_embedded, "workers": run_workers}
    runs = [runners[mode](jobs, args) for mode in modes]
    for run in runs:
        report(run, work_cpu_s, args.concurrency)
    if len(runs) == 2:
        kept = runs[1].throughput / runs[0].throughput
        print("\n" + ratio_line("workers / embedded throughput", kept, ">= 0.9: keeps it"))
    if args.forward_only:
        runs.append(trainability_cost(jobs, args, runs[0], work_cpu_s))
    if any(run.problems for run in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
