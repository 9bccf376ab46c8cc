"""The API side of scale-out: `CeleryDispatcher`, the Dispatcher of app.grading.dispatch that sends
stored submissions to `autograder worker` processes instead of grading them in this process."""

from __future__ import annotations

import logging
import queue
import threading

import redis
from celery import Celery

from app.core.logs import bound_submission
from app.core.settings import AppSettings
from app.grading.dispatch import Check
from app.grading.leases import Leases
from app.scaleout.broker import GRADE_TASK, GRADING_QUEUE
from app.scaleout.registry import WorkerRegistry
from grader.sandbox.interface import Layer

log = logging.getLogger(__name__)


class CeleryDispatcher:
    """Sends each submission's id through the broker, then answers for it (a `dispatched`
    lease) as long as the broker's visibility timeout: by then the broker itself would hand an
    unacknowledged message out again. A send that fails is logged, not raised: the submission
    is stored, and the sweeper sends it again once its lease has expired.

    The sends are a thread's of their own, in the order handed over, so the request that stored
    a submission answers without waiting for the broker or for the lease's write; the thread
    writes the leases of what it sent meanwhile in one transaction. A submission stored but not
    yet sent when the process dies has no lease, so the sweeper sends it."""

    def __init__(
        self,
        *,
        celery: Celery,
        client: redis.Redis,
        leases: Leases,
        registry: WorkerRegistry,
        lease_s: float,
    ) -> None:
        self._celery = celery
        self._client = client
        self._leases = leases
        self._registry = registry
        self._lease_s = lease_s
        self._handed_over: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._waiting: set[str] = set()  # handed over, not yet taken to be sent
        self._waiting_lock = threading.Lock()
        self._closing = threading.Event()
        self._sender = threading.Thread(target=self._send_all, name="hand-over", daemon=True)

    @classmethod
    def for_settings(
        cls, settings: AppSettings, celery: Celery, client: redis.Redis, leases: Leases
    ) -> CeleryDispatcher:
        return cls(
            celery=celery,
            client=client,
            leases=leases,
            registry=WorkerRegistry.for_settings(settings, client),
            lease_s=settings.broker_visibility_timeout_s,
        )

    def start(self) -> None:
        """Start the sending thread; the broker is connected on the first send."""
        self._sender.start()

    def submit(self, submission_id: str) -> None:
        """Queue it for the sending thread, once: while the broker is away, the sweeper hands
        the same orphans over again every lease."""
        with self._waiting_lock:
            if submission_id in self._waiting:
                return
            self._waiting.add(submission_id)
        self._handed_over.put(submission_id)

    def _send_all(self) -> None:
        """Until closed: send what was handed over since the last pass, in order."""
        while True:
            handed = [self._handed_over.get()]
            while not self._handed_over.empty():
                handed.append(self._handed_over.get())
            batch = [submission_id for submission_id in handed if submission_id is not None]
            with self._waiting_lock:
                self._waiting.difference_update(batch)
            if not self._send(batch) or None in handed:
                return

    def _send(self, batch: list[str]) -> bool:
        """Send `batch` and lease what the broker took; False if closing and the broker failed
        a send: with no broker to drain into, what is left waits for the sweeper."""
        sent = []
        for submission_id in batch:
            if self._sent(submission_id):
                sent.append(submission_id)
            elif self._closing.is_set():
                break
        self._lease(sent)
        return len(sent) == len(batch) or not self._closing.is_set()

    def _lease(self, sent: list[str]) -> None:
        if not sent:
            return
        # After the send: a lease without a message would hide a lost submission from the
        # sweeper until it expired.
        try:
            self._leases.dispatched(sent, self._lease_s)
        except Exception:  # the database away: without a lease, the sweeper sends them again
            log.exception("the leases of %d sent submissions were not written", len(sent))

    def _sent(self, submission_id: str) -> bool:
        with bound_submission(submission_id):
            try:
                self._celery.send_task(GRADE_TASK, args=[submission_id], queue=GRADING_QUEUE)
            except Exception:
                log.exception("the broker refused the submission; the sweeper will resend it")
                return False
        return True

    def checks(self) -> list[Check]:
        try:
            self._client.ping()
            workers = self._registry.alive()
        except redis.RedisError as error:
            return [Check("broker", False, f"{type(error).__name__}: {error}"[:300])]
        return [
            Check("broker", True, "redis"),
            # Not a condition of readiness: the API accepts work durably while no worker runs
            # (scaled to zero, or restarting), and a load balancer should keep sending it.
            Check(
                "grading workers",
                True,
                f"{len(workers)} alive, {sum(w.slots for w in workers)} slots",
            ),
        ]

    def layers(self) -> list[Layer]:
        workers = self._registry.alive()
        return workers[0].layers if workers else []

    def close(self, timeout_s: float = 5.0) -> None:
        """Send what was handed over, while the broker takes it (bounded: what is left waits
        for the sweeper)."""
        self._closing.set()
        self._handed_over.put(None)
        if self._sender.is_alive():
            self._sender.join(timeout=timeout_s)
