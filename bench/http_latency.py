"""Sync grading of exercise 1 over HTTP, against the two floors it is judged by, in one run.

`POST /v1/submissions?wait=true` with the seed exercise's correct solution, sent one at a time to
a real `autograder serve` (embedded defaults: SQLite and the warm sandbox pool, in a temporary
data dir, on a free loopback port); its median and p90 over --runs requests after --warmup ones.
In the same run: the median time a fresh interpreter takes to start and `import torch` (the
floor of any grader that starts one per submission), and the median of the same grading done
in-process (the engine with no isolation, torch set up as in the sandbox: the work itself).
Prints the ratios the issue sets as targets: HTTP / fresh import <= 0.1 and HTTP / in-process
<= 2.

    python bench/http_latency.py [--runs N] [--warmup N] [--fresh-runs N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import httpx
from _common import (
    CORRECT,
    SLUG,
    add_service_env_option,
    fresh_torch_import,
    in_process_grader,
    measure,
    ms,
    percentile,
    processes,
    ratio_line,
    service_env_option,
    start_server,
    wait_ready,
)


def http_gradings(base_url: str, source: str, runs: int, warmup: int) -> list[float]:
    """Seconds from each request's start to its graded answer, sent one after the other."""
    body = {"exercise": SLUG, "source": source}
    timings = []
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for n in range(warmup + runs):
            started = time.perf_counter()
            response = client.post("/v1/submissions", params={"wait": "true"}, json=body)
            elapsed = time.perf_counter() - started
            if response.status_code != 200 or response.json()["report"]["status"] != "passed":
                raise SystemExit(
                    f"grading over HTTP failed: {response.status_code} {response.text}"
                )
            if n >= warmup:
                timings.append(elapsed)
    return timings


def summary(name: str, timings: list[float]) -> str:
    return (
        f"{name:>20}: median {ms(statistics.median(timings))}  p90 {ms(percentile(timings, 90))}"
        f"  (min {ms(min(timings)).strip()}, n={len(timings)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="timed HTTP gradings")
    parser.add_argument("--warmup", type=int, default=5, help="untimed HTTP gradings first")
    parser.add_argument("--in-process-runs", type=int, default=40)
    parser.add_argument("--fresh-runs", type=int, default=5, help="`python -c 'import torch'`s")
    add_service_env_option(parser)
    args = parser.parse_args()
    source = CORRECT.read_text(encoding="utf-8")

    with processes() as started:
        base_url = start_server(started, service_env_option(args.service_env))
        wait_ready(started, base_url)
        http = http_gradings(base_url, source, args.runs, args.warmup)
    with in_process_grader() as grader:
        in_process = measure(grader, source, args.in_process_runs)
    fresh = fresh_torch_import(args.fresh_runs)

    print(summary("HTTP ?wait=true", http))
    print(summary("in-process", in_process))
    print(summary("fresh import torch", fresh))
    median = statistics.median(http)
    print(
        ratio_line(
            "HTTP median / fresh interpreter + torch", median / statistics.median(fresh), "<= 0.1"
        )
    )
    print(ratio_line("HTTP median / in-process", median / statistics.median(in_process), "<= 2"))


if __name__ == "__main__":
    main()
