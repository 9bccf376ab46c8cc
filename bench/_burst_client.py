"""A class at a deadline, as the exercise page drives the API: each student POSTs once, then
follows the submission until its report, and is told a place in line on the way.

`follow="wait"` is the page's way: `GET /v1/submissions/{id}?wait=25`, which a server that
pushes holds until something changes. A server that answers such a request at once with
nothing changed ignores `wait`: that student then polls on `follow="poll"`'s schedule, the old
page's (web/src/page.js POLL_MS). Refusals (429, 503) are honoured after their Retry-After.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import ssl
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
from _common import SLUG
from _mix import Job, Verdict, verdict_of

POLL_S = (0.3, 0.5, 1.0, 2.0)  # web/src/page.js POLL_MS
WAIT_S = 25  # what the page asks a long poll to hold
# A held long poll answers when something changed, or when its wait is over: one that answers
# with nothing changed well before that was not held (however slow a busy server's answers).
NOT_HELD_S = WAIT_S / 2
RETRY_S = 1.0  # after an answer the page would retry (5xx), as it does
TRANSPORT_TRIES = 3
# A connection that failed under a request before any answer; not a timeout (the answer is late).
DROPPED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
ONE_CONNECTION = httpx.Limits(max_connections=1, max_keepalive_connections=1)
TIMEOUT = httpx.Timeout(WAIT_S + 60.0, connect=30.0)
# One TLS context for every student's client: httpx would build one per client, and loopback
# HTTP uses none.
SHARED_TLS = ssl.create_default_context()


@dataclass(frozen=True)
class Student:
    name: str  # the student id
    job: Job
    arrival_s: float  # after the burst's start


def deadline_class(jobs: Sequence[Job], rate: float, seed: int) -> list[Student]:
    """One student per job, arriving as a Poisson process at `rate` per second."""
    rng, clock, students = random.Random(seed), 0.0, []
    for n, job in enumerate(jobs):
        clock += rng.expovariate(rate)
        students.append(Student(f"student-{n:05d}", job, clock))
    return students


@dataclass(frozen=True)
class Place:
    """The place in line a student was first told, and how plausible it was."""

    position: int
    estimate_s: float | None
    told_s: float  # after the burst's start
    # Students who had POSTed and had no report yet when it was told: a bound no honest place
    # exceeds (whatever the service holds queued, some client is waiting for).
    waiting_bound: int

    @property
    def plausible(self) -> bool:
        return 1 <= self.position <= self.waiting_bound


@dataclass
class Outcome:
    student: Student
    posted_s: float | None = None  # the first POST, after the burst's start
    accepted_s: float | None = None
    reported_s: float | None = None
    submission_id: str | None = None
    verdict: Verdict | None = None
    place: Place | None = None
    refusals: list[int] = field(default_factory=list)  # honoured 429s and 503s
    post_answers_s: list[float] = field(default_factory=list)  # each POST's round trip
    # The accepted POST on the machine's clock: sent, stored by the service (its created_at),
    # answered; where a slow answer was held, before the service or after it stored it.
    sent_at: float | None = None
    stored_at: float | None = None
    answered_at: float | None = None
    gets: int = 0
    wait_ignored: bool = False
    error: str | None = None


@dataclass
class Burst:
    """One burst's client side: what every request answered, and who is waiting.

    Each student has a client and a connection of their own, as each browser does. One client
    shared by the class would measure itself: its pool's bookkeeping walks every connection for
    every request, and held the requests of a thousand students for tens of seconds in the
    benchmark's own process while the service sat idle."""

    base_url: str
    headers_of: Mapping[str, Mapping[str, str]]
    follow: str  # "wait" or "poll"
    start: float = field(default_factory=time.perf_counter)
    codes: Counter[str] = field(default_factory=Counter)
    waiting: int = 0  # POSTed, report not seen yet
    dropped: int = 0  # requests sent again after a connection failed under them
    wall_s: float = 0.0  # from the start to the last journey's end

    def now(self) -> float:
        return time.perf_counter() - self.start

    async def request(
        self, client: httpx.AsyncClient, method: str, url: str, **kwargs: Any
    ) -> httpx.Response:
        """One request, sent again where its connection failed before any answer (a kept-alive
        one the server closed as it was reused), as a browser does; counted."""
        for attempt in range(TRANSPORT_TRIES):
            try:
                response = await client.request(method, url, **kwargs)
                break
            except DROPPED:
                if attempt == TRANSPORT_TRIES - 1:
                    raise
                self.dropped += 1
        self.codes[f"{method} {response.status_code}"] += 1
        return response

    async def student(self, outcome: Outcome) -> None:
        student = outcome.student
        await asyncio.sleep(max(0.0, student.arrival_s - self.now()))
        outcome.posted_s = self.now()
        self.waiting += 1
        try:
            async with httpx.AsyncClient(
                base_url=self.base_url, limits=ONE_CONNECTION, timeout=TIMEOUT, verify=SHARED_TLS
            ) as client:
                body = await self.submit(client, outcome)
                if body is not None:
                    outcome.accepted_s = self.now()
                    outcome.submission_id = str(body["id"])
                    self.note_place(outcome, body)
                    await self.follow_to_report(client, outcome, body)
        except (httpx.HTTPError, ValueError, KeyError) as error:
            outcome.error = f"{type(error).__name__}: {error}"
        finally:
            self.waiting -= 1

    async def submit(self, client: httpx.AsyncClient, outcome: Outcome) -> dict[str, Any] | None:
        student = outcome.student
        body = {"exercise": SLUG, "source": student.job.source}
        headers = self.headers_of[student.name]
        while True:
            asked, outcome.sent_at = time.perf_counter(), time.time()
            response = await self.request(
                client, "POST", "/v1/submissions", json=body, headers=headers
            )
            outcome.post_answers_s.append(time.perf_counter() - asked)
            outcome.answered_at = time.time()
            if response.status_code in {200, 201, 202}:
                answer: dict[str, Any] = response.json()
                return answer
            retry_after = response.headers.get("Retry-After")
            if response.status_code not in {429, 503} or retry_after is None:
                outcome.error = f"POST {response.status_code}: {response.text[:200]}"
                return None
            outcome.refusals.append(response.status_code)
            await asyncio.sleep(float(retry_after))

    async def follow_to_report(
        self, client: httpx.AsyncClient, outcome: Outcome, body: dict[str, Any]
    ) -> None:
        url = f"/v1/submissions/{outcome.submission_id}"
        headers = self.headers_of[outcome.student.name]
        holding, attempt = self.follow == "wait", 0
        while body["status"] != "done":
            if not holding:
                await asyncio.sleep(POLL_S[min(attempt, len(POLL_S) - 1)])
                attempt += 1
            asked = time.perf_counter()
            params = {"wait": str(WAIT_S)} if holding else None
            response = await self.request(client, "GET", url, params=params, headers=headers)
            outcome.gets += 1
            if response.status_code >= 500 or response.status_code in {429, 503}:
                await asyncio.sleep(RETRY_S)  # counted; the page would try again
                continue
            if response.status_code != 200:
                outcome.error = f"GET {response.status_code}: {response.text[:200]}"
                return
            answer = response.json()
            if holding and answer_not_held(body, answer, time.perf_counter() - asked):
                holding, outcome.wait_ignored = False, True
            body = answer
            self.note_place(outcome, body)
        outcome.reported_s = self.now()
        outcome.verdict = verdict_of(body["report"])
        outcome.stored_at = datetime.fromisoformat(body["created_at"]).timestamp()

    def note_place(self, outcome: Outcome, body: Mapping[str, Any]) -> None:
        queue = body.get("queue")
        if outcome.place is None and queue is not None:
            estimate = queue.get("estimate_s")
            outcome.place = Place(
                int(queue["position"]),
                None if estimate is None else float(estimate),
                self.now(),
                self.waiting,
            )


def answer_not_held(before: Mapping[str, Any], after: Mapping[str, Any], took_s: float) -> bool:
    """A long poll answered at once with nothing new: the server ignores `wait`."""
    unchanged = after["status"] == before["status"] and after.get("queue") == before.get("queue")
    return unchanged and after["status"] != "done" and took_s < NOT_HELD_S


async def run_burst(
    base_url: str,
    students: Sequence[Student],
    headers_of: Mapping[str, Mapping[str, str]],
    follow: str,
    deadline_s: float,
) -> tuple[list[Outcome], Burst]:
    """Every student's journey, bounded by `deadline_s` from the burst's start: the outcomes,
    and what the burst counted."""
    outcomes = [Outcome(student) for student in students]
    burst = Burst(base_url, headers_of, follow)
    tasks = [asyncio.ensure_future(burst.student(outcome)) for outcome in outcomes]
    _, pending = await asyncio.wait(tasks, timeout=deadline_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for outcome in outcomes:
        if outcome.reported_s is None and outcome.error is None:
            outcome.error = "no report within the burst's deadline"
    burst.wall_s = burst.now()
    return outcomes, burst


async def read_back(
    base_url: str,
    outcomes: Sequence[Outcome],
    headers_of: Mapping[str, Mapping[str, str]],
    bound_s: float = 60.0,
) -> dict[str, Verdict]:
    """What the service holds as done for every accepted id, read again after the burst; what
    it does not answer within `bound_s` in all counts as not held."""
    held: dict[str, Verdict] = {}
    pending = iter(outcome for outcome in outcomes if outcome.submission_id)
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:

        async def reader() -> None:
            for outcome in pending:
                headers = headers_of[outcome.student.name]
                url = f"/v1/submissions/{outcome.submission_id}"
                with contextlib.suppress(httpx.HTTPError):
                    response = await client.get(url, headers=headers)
                    if (
                        response.status_code == 200
                        and (body := response.json())["status"] == "done"
                    ):
                        held[str(outcome.submission_id)] = verdict_of(body["report"])

        readers = [asyncio.ensure_future(reader()) for _ in range(16)]
        _, late = await asyncio.wait(readers, timeout=bound_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
    return held
