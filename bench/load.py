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
import itertools
import os
import secrets
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import redis
from _common import (
    CORRECT,
    MISTAKES,
    SLUG,
    CpuAccount,
    Memory,
    Processes,
    Readiness,
    add_service_env_option,
    cpu_account,
    exercises_forward_only,
    in_process_grader,
    machine_cores,
    memory,
    mib,
    percentile,
    processes,
    ratio_line,
    service_env_option,
    start_autograder,
    start_server,
    wait_ready,
)
from psycopg import sql

from grader.trainability import TRAINABILITY_CODES

# --- the mix and what each of its files must get ------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    status: str
    codes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.status} {list(self.codes)}"


# Written out, not taken from the engine: the benchmark checks the service against them.
EXPECTED = {
    "correct": Verdict("passed"),
    "missing_scaling": Verdict("failed", ("missing-scaling",)),
    "no_causal_mask": Verdict("failed", ("no-causal-mask",)),
    "full_size_heads": Verdict("failed", ("full-size-heads",)),
    "concat_along_sequence": Verdict("failed", ("concat-along-sequence",)),
    "softmax_over_queries": Verdict("failed", ("softmax-over-queries",)),
    "rounded_to_2_decimals": Verdict("failed", ("rounded-to-2-decimals",)),
    "rounded_to_3_decimals": Verdict("failed", ("rounded-to-3-decimals",)),
    "extra_output_projection": Verdict("failed", ("extra-output-projection",)),
    "extra_output_projection_without_bias": Verdict("failed", ("extra-output-projection",)),
    "layers_in_another_order": Verdict("failed", ("weights-differ",)),
    "float_head_size": Verdict("failed"),  # crashes in every test: nothing to diagnose
    "uses_builtin_attention": Verdict("rejected", ("not-allowed",)),
    # Trainability is reported in this exercise: full marks, and the finding.
    "no_grad_printoptions": Verdict("passed", ("no-autograd-graph",)),
    "rounded_through_tolist": Verdict("passed", ("no-autograd-graph",)),
    "heads_in_plain_list": Verdict("passed", ("parameters-not-registered",)),
    "weights_as_plain_tensors": Verdict("passed", ("parameters-not-registered",)),
    "frozen_seeded_weights": Verdict("passed", ("frozen-parameters",)),
    "unused_output_projection": Verdict("passed", ("unexpected-parameters",)),
    "softmax_exp_over_sum": Verdict("passed", ("numerically-unstable",)),
}


def expected_verdict(name: str, *, trainability: bool = True) -> Verdict:
    """The verdict `name` must get; with the trainability checks off, one they name passes
    unnamed (the seed exercise only reports them)."""
    verdict = EXPECTED[name]
    if trainability:
        return verdict
    codes = tuple(code for code in verdict.codes if code not in TRAINABILITY_CODES)
    return Verdict("passed" if verdict.codes and not codes else verdict.status, codes)


@dataclass(frozen=True)
class Job:
    name: str  # the submission file's stem, the key of EXPECTED
    source: str


def mix(count: int, tag: str = "submission") -> list[Job]:
    files = {path.stem: path.read_text(encoding="utf-8") for path in MISTAKES.glob("*.py")}
    files["correct"] = CORRECT.read_text(encoding="utf-8")
    if unknown := sorted(files.keys() - EXPECTED.keys()):
        raise SystemExit(f"no expected verdict for {unknown}: add them to EXPECTED")
    mistakes = itertools.cycle(sorted(name for name in files if name != "correct"))
    names = ["correct" if n % 2 == 0 else next(mistakes) for n in range(count)]
    # Distinct sources, as a class's are: nothing may be served from a cache of equal ones.
    return [Job(name, f"{files[name]}\n# {tag} {n}\n") for n, name in enumerate(names)]


def verdict_of(report: dict[str, object]) -> Verdict:
    diagnosis = report.get("diagnosis")
    assert isinstance(diagnosis, list)
    return Verdict(str(report["status"]), tuple(str(finding["code"]) for finding in diagnosis))


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


def work_cpu_per_grading(jobs: Sequence[Job], reps: int, forward_only: Path | None = None) -> float:
    """CPU-seconds of the in-process work per grading, averaged over the mix as sent (against
    the exercises of `forward_only`, where given)."""
    counts = Counter(job.name for job in jobs)
    sources = {job.name: job.source for job in jobs}
    with in_process_grader(forward_only) as grader:
        cpu = {}
        for name, source in sources.items():
            # Untimed (first-use costs are not the work), and checked (the table could be wrong).
            verdict = verdict_of(grader.grade(SLUG, source).model_dump(mode="json"))
            wanted = expected_verdict(name, trainability=forward_only is None)
            if verdict != wanted:
                raise SystemExit(f"in-process, {name} got {verdict}, not {wanted}")
            started = time.process_time()
            for _ in range(reps):
                grader.grade(SLUG, source)
            cpu[name] = (time.process_time() - started) / reps
    return sum(cpu[name] * count for name, count in counts.items()) / len(jobs)


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
    with (
        postgres_database(args.postgres) as database_url,
        redis_namespace(args.redis, args.redis_db) as (broker_url, prefix),
        processes() as started,
    ):
        env = service_env_option(args.service_env) | {
            "AUTOGRADER_DATABASE_URL": database_url,
            "AUTOGRADER_BROKER_URL": broker_url,
            "AUTOGRADER_REDIS_PREFIX": prefix,
            # Several workers on one host: their metrics exporters would fight over one port.
            "AUTOGRADER_WORKER_METRICS_PORT": "0",
        }
        base_url = start_server(started, env)
        for n in range(args.workers):
            start_autograder(started, f"worker-{n}", ["worker"], env)
        wait_ready(started, base_url, lambda readiness: workers_alive(readiness) >= args.workers)
        return load("workers", started, base_url, jobs, args)


def workers_alive(readiness: Readiness) -> int:
    """From /readyz's "grading workers" check ("2 alive, 4 slots"): workers announce themselves
    once warm, so every one is ready to grade."""
    for check in readiness["checks"]:
        if check["name"] == "grading workers":
            return int(check["detail"].split()[0])
    return 0


@contextmanager
def postgres_database(server: str) -> Iterator[str]:
    """A fresh database on `server` (user@host:port) for one run, dropped after it."""
    name = f"autograder_bench_{os.getpid()}_{secrets.token_hex(4)}"
    admin_url = f"postgresql://{server}/postgres"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"postgresql+psycopg://{server}/{name}"
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def redis_namespace(server: str, db: int) -> Iterator[tuple[str, str]]:
    """The broker URL of a dedicated Redis DB and a key prefix of this run's own (others' tests
    may share the DB), and the run's keys deleted after it."""
    url = f"{server.rstrip('/')}/{db}"
    prefix = f"autograder-bench-{os.getpid()}-{secrets.token_hex(4)}:"
    client = redis.Redis.from_url(url)
    client.ping()
    try:
        yield url, prefix
    finally:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
        client.close()


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
