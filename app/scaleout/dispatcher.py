"""The API side of scale-out: `CeleryDispatcher`, the Dispatcher of app.grading.dispatch that sends
stored submissions to `autograder worker` processes instead of grading them in this process."""

from __future__ import annotations

import logging

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
    is stored, and the sweeper sends it again once its lease has expired."""

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
        """Nothing to start: the broker is connected on the first send."""

    def submit(self, submission_id: str) -> None:
        with bound_submission(submission_id):
            try:
                self._celery.send_task(GRADE_TASK, args=[submission_id], queue=GRADING_QUEUE)
            except Exception:
                log.exception("the broker refused the submission; the sweeper will resend it")
                return
            # After the send: a lease without a message would hide a lost submission from the
            # sweeper until it expired.
            self._leases.dispatched(submission_id, self._lease_s)

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

    def close(self) -> None:
        """Nothing to stop: what was sent is in the broker."""
