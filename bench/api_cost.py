"""The API process's CPU per request, by kind, against the framework's floor measured in the
same run: what a class at a deadline costs the API, request by request.

The service runs in its scale-out shape (the API and two workers on the local Redis and
PostgreSQL, loopback only), so the API process does nothing but answer. Each kind is sent
--requests times, one student at a time, each request on a connection of its own as a
student's browser opens one; the API's CPU (/proc) is read before and after. The floor is
`GET /healthz` on a fresh connection: what uvicorn, the middlewares and FastAPI's routing cost
a request that does nothing. `--profile DIR` also samples the API (py-spy, the thread holding
the GIL) during each kind into DIR/<kind>.txt (collapsed stacks; py-spy's own pauses then add
to the CPU measured).

    python bench/api_cost.py [--requests 200] [--profile DIR]
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _common import SLUG, own_cpu_s, processes
from _mix import mix
from _scaleout import scaled_out
from deadline_burst import sign_in

IDLE_S = 10.0
DONE_WITHIN_S = 300.0


@dataclass(frozen=True)
class Class:
    """The students and what they submitted: their headers, and their submissions' ids."""

    base_url: str
    headers: list[dict[str, str]]
    sources: list[str]
    ids: list[str]

    def send(self, n: int, method: str, url: str, **kwargs: Any) -> httpx.Response:
        with httpx.Client(base_url=self.base_url, timeout=60) as client:
            response = client.request(method, url, headers=self.headers[n], **kwargs)
        response.raise_for_status()
        return response


def post(students: Class) -> Callable[[int], object]:
    def send(n: int) -> None:
        body = {"exercise": SLUG, "source": students.sources[n]}
        students.ids.append(students.send(n, "POST", "/v1/submissions", json=body).json()["id"])

    return send


def get(students: Class, wait: bool = False) -> Callable[[int], object]:
    params = {"wait": "25"} if wait else None
    return lambda n: students.send(n, "GET", f"/v1/submissions/{students.ids[n]}", params=params)


def healthz(students: Class) -> Callable[[int], object]:
    return lambda n: students.send(n, "GET", "/healthz")


@contextmanager
def sampled(pid: int, profile: Path | None, kind: str) -> Iterator[None]:
    if profile is None:
        yield
        return
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        raise SystemExit("--profile needs py-spy in this environment")
    argv = [spy, "record", "--gil", "-r", "250", "--format", "raw", "-p", str(pid)]
    sampler = subprocess.Popen(
        [*argv, "-o", str(profile / f"{kind}.txt")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)
    try:
        yield
    finally:
        sampler.send_signal(signal.SIGINT)
        sampler.wait(timeout=60)


def cpu_ms_per_request(api: int, requests: int, send: Callable[[int], object]) -> float:
    before = own_cpu_s(api)
    for n in range(requests):
        send(n)
    return 1000 * (own_cpu_s(api) - before) / requests


def wait_until_graded(students: Class) -> None:
    deadline = time.monotonic() + DONE_WITHIN_S
    for n in range(len(students.ids)):
        while students.send(n, "GET", f"/v1/submissions/{students.ids[n]}").json()["status"] != (
            "done"
        ):
            if time.monotonic() > deadline:
                raise SystemExit(f"not graded within {DONE_WITHIN_S:.0f} s")
            time.sleep(0.5)


def measure(api: int, students: Class, requests: int, profile: Path | None) -> dict[str, float]:
    kinds: list[tuple[str, str, Callable[[int], object]]] = [
        ("floor", "GET /healthz (the floor)", healthz(students)),
        ("post", "POST /v1/submissions", post(students)),
        ("get_queued", "GET, queued", get(students)),
    ]
    measured = {}
    for key, name, send in kinds:
        with sampled(api, profile, key):
            measured[name] = cpu_ms_per_request(api, requests, send)
    wait_until_graded(students)
    for key, name, send in [
        ("get_done", "GET, graded", get(students)),
        ("get_wait_done", "GET ?wait=25, graded", get(students, wait=True)),
    ]:
        with sampled(api, profile, key):
            measured[name] = cpu_ms_per_request(api, requests, send)
    with sampled(api, profile, "idle"):
        before = own_cpu_s(api)
        time.sleep(IDLE_S)
        measured["nothing asked, per second"] = 1000 * (own_cpu_s(api) - before) / IDLE_S
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--profile", type=Path, help="py-spy samples of each kind, into DIR")
    parser.add_argument("--postgres", default="postgres@127.0.0.1:5432", help="user@host:port")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379", help="without a DB number")
    parser.add_argument("--redis-db", type=int, default=13, help="the run's keys deleted after")
    args = parser.parse_args()
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    jobs = mix(args.requests, "cost")
    names = [f"student-{n:05d}" for n in range(len(jobs))]
    with (
        processes() as started,
        scaled_out(
            started,
            {},
            workers=2,
            postgres=args.postgres,
            redis_server=args.redis,
            redis_db=args.redis_db,
            lift_rate_limits=False,
        ) as (base_url, settings),
    ):
        headers_of = sign_in(started, settings, names)
        students = Class(
            base_url, [headers_of[name] for name in names], [job.source for job in jobs], []
        )
        measured = measure(started.started[0].pid, students, args.requests, args.profile)
    floor = measured["GET /healthz (the floor)"]
    print(f"API process CPU, {args.requests} requests of each kind, a connection each:")
    for name, value in measured.items():
        against = "" if name.startswith("nothing") else f"  {value / floor:5.1f}x the floor"
        print(f"  {name:28s} {value:7.2f} ms{against}")


if __name__ == "__main__":
    main()
