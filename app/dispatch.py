"""Dispatch: how a stored submission reaches a grader.

    Dispatcher (protocol)
    ├── EmbeddedDispatcher   a bounded pool of threads in this process, one Grader over warm
    │                        sandboxes (the embedded default: AUTOGRADER_BROKER_URL unset)
    └── CeleryDispatcher     scale-out (app.scaleout.dispatcher): `submit` sends a task that
                             runs `app.grading.grade_submission(id, context)` in `autograder
                             worker`; its depth and capacity are counted in the database

The API stores (commits) a submission first and dispatches it second, so a dispatcher that
loses work loses nothing: what is unfinished in the database is dispatched again.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.grading import GradingContext, grade_submission, stale_submissions
from app.problems import QueueFull
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
        """Hand over a stored submission. Raises QueueFull (503) when at capacity: the caller
        then withdraws the submission and tells the client to retry."""
        ...

    def resume(self, submission_ids: Sequence[str]) -> None:
        """Hand over unfinished work found in the database. Never refused: it was accepted."""
        ...

    def depth(self) -> int:
        """Submissions handed over and not finished yet (the queue-depth metric)."""
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
    """Grades in `settings.sandbox_slots` threads of this process, sharing one Grader.

    At most `settings.queue_capacity` submissions wait or run at once; `submit` refuses more.
    Every `sweep_s` it re-dispatches unfinished submissions that it does not hold (a row whose
    hand-over was lost, a grading whose thread died), so nothing waits for a restart.
    """

    def __init__(
        self,
        context: GradingContext,
        *,
        job: Callable[[str, GradingContext], None] = grade_submission,
        sweep_s: float = 60.0,
    ) -> None:
        self._context = context
        self._job = job
        self._settings = context.settings
        self._sweep_s = sweep_s
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
        threading.Thread(target=self._sweep_loop, name="grader-sweep", daemon=True).start()

    def submit(self, submission_id: str) -> None:
        with self._lock:
            if self._closed.is_set():
                raise QueueFull("the service is stopping", self._settings.queue_retry_after_s)
            if len(self._held) >= self._settings.queue_capacity:
                raise QueueFull(
                    f"{len(self._held)} submissions are waiting or being graded; retry later",
                    self._settings.queue_retry_after_s,
                )
            self._held.add(submission_id)
        self._queue.put(submission_id)

    def resume(self, submission_ids: Sequence[str]) -> None:
        for submission_id in submission_ids:
            with self._lock:
                if submission_id in self._held or self._closed.is_set():
                    continue
                self._held.add(submission_id)
            log.info("resuming unfinished submission", extra={"submission_id": submission_id})
            self._queue.put(submission_id)

    def depth(self) -> int:
        with self._lock:
            return len(self._held)

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
            except Exception:  # the database failed: the row stays claimable, the sweep retries
                log.exception("grading job failed", extra={"submission_id": submission_id})
            finally:
                with self._lock:
                    self._held.discard(submission_id)

    def _warm(self) -> None:
        try:
            self._context.grader.warm()  # every exercise's plan: references run once, now
            self._context.grader.sandbox.layers()  # starts the sandbox's warm process
        except Exception as error:
            log.exception("warming the grader failed")
            self._warm_state, self._warm_detail = "failed", f"{type(error).__name__}: {error}"
        else:
            self._warm_state, self._warm_detail = "warm", "plans built, sandbox started"
            log.info("grader warm: %d exercises", len(self._context.grader.catalog.slugs()))

    def _sweep_loop(self) -> None:
        while not self._closed.wait(self._sweep_s):
            try:
                with self._lock:
                    held = list(self._held)
                self.resume(stale_submissions(self._context.database, self._settings, held))
            except Exception:
                log.exception("sweeping for unfinished submissions failed")
