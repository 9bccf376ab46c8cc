"""Dispatch: how a stored submission reaches a grader.

    Dispatcher (protocol)
    ├── EmbeddedDispatcher   a pool of threads in this process, one Grader over warm sandboxes
    │                        (the embedded default: AUTOGRADER_BROKER_URL unset)
    └── CeleryDispatcher     scale-out (app.scaleout.dispatcher): `submit` hands the id to a
                             thread that sends a task, which runs
                             `app.grading.job.grade_next(id, context)` in `autograder worker`

A hand-over is a turn to grade, not a ticket for one submission: on both paths the grader takes
the first submission in line (fair order, app.submissions.fair_order), which may be another
than the id it was handed; as many turns as accepted submissions grade them all.

The API stores (commits) a submission first and dispatches it second, so a dispatcher that
loses work loses nothing: the sweeper (app.grading.sweeper) dispatches again what nobody answers
for. Admission is not a dispatcher's business: the API counts unfinished submissions in the
database, the same on both paths (app.submissions.admission).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from app.grading.job import GradingContext, grade_next, warm_up
from grader.sandbox.interface import Layer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    """One readiness check, as /readyz shows it."""

    name: str
    ok: bool
    detail: str = ""


class Dispatcher(Protocol):
    def start(self) -> None:
        """Begin taking work (start threads, connect to the broker)."""
        ...

    def submit(self, submission_id: str) -> None:
        """Hand over a stored submission, new or found unfinished; never refused (it was
        accepted), never raised: a hand-over that fails leaves it to the sweeper."""
        ...

    def checks(self) -> list[Check]:
        """Readiness: is grading possible now (pool warm, threads alive, broker reachable)."""
        ...

    def layers(self) -> list[Layer]:
        """The sandbox layers of the graders this dispatcher feeds, where it can know them."""
        ...

    def close(self) -> None:
        """Stop taking work; wait (bounded) for gradings in flight. Unstarted work stays queued
        in the database for the next start."""
        ...


class EmbeddedDispatcher:
    """Grades in `settings.sandbox_slots` threads of this process, sharing one Grader. A
    submission handed over again while it waits or runs here is not queued twice."""

    def __init__(
        self,
        context: GradingContext,
        *,
        job: Callable[[str, GradingContext], None] = grade_next,
    ) -> None:
        self._context = context
        self._job = job
        self._settings = context.settings
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._held: set[str] = set()  # queued here or running here
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []
        self._warm_state = "warming"
        self._warm_detail = ""

    def start(self) -> None:
        for index in range(self._settings.sandbox_slots):
            thread = threading.Thread(target=self._work, name=f"grader-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)
        threading.Thread(target=self._warm, name="grader-warm", daemon=True).start()

    def submit(self, submission_id: str) -> None:
        with self._lock:
            if submission_id in self._held or self._closed.is_set():
                return  # stopping: it stays queued in the database for the next start
            self._held.add(submission_id)
        self._queue.put(submission_id)

    def checks(self) -> list[Check]:
        alive = sum(thread.is_alive() for thread in self._threads)
        return [
            Check(
                "sandbox pool", self._warm_state == "warm", self._warm_detail or self._warm_state
            ),
            Check(
                "grading threads",
                alive == self._settings.sandbox_slots and not self._closed.is_set(),
                f"{alive} of {self._settings.sandbox_slots} alive",
            ),
        ]

    def layers(self) -> list[Layer]:
        return self._context.grader.sandbox.layers()

    def close(self) -> None:
        self._closed.set()
        for _ in self._threads:
            self._queue.put(None)
        grace = self._settings.shutdown_grace_s
        for thread in self._threads:
            thread.join(timeout=grace)
        if any(thread.is_alive() for thread in self._threads):
            log.warning("stopped with gradings in flight; they resume at the next start")

    def _work(self) -> None:
        while True:
            submission_id = self._queue.get()
            if submission_id is None or self._closed.is_set():
                return
            try:
                self._job(submission_id, self._context)
            except Exception:  # the database failed: the sweeper sends the row again
                log.exception("grading job failed", extra={"submission_id": submission_id})
            finally:
                with self._lock:
                    self._held.discard(submission_id)

    def _warm(self) -> None:
        try:
            warm_up(self._context.grader)
        except Exception as error:
            log.exception("warming the grader failed")
            self._warm_state, self._warm_detail = "failed", f"{type(error).__name__}: {error}"
        else:
            self._warm_state, self._warm_detail = "warm", "plans built, sandbox started"
            log.info("grader warm: %d exercises", len(self._context.grader.catalog.slugs()))
