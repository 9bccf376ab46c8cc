"""The API side of scale-out: `CeleryDispatcher`, the Dispatcher of app.dispatch that sends
stored submissions to `autograder worker` processes instead of grading them in this process."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import redis
from sqlalchemy import func, select

from app.db import Database
from app.dispatch import Check
from app.models import Submission, SubmissionStatus
from app.problems import QueueFull
from app.scaleout.outbox import Outbox
from app.scaleout.registry import WorkerRegistry
from app.scaleout.sweeper import Sweeper
from app.settings import AppSettings
from grader.sandbox.interface import Layer

log = logging.getLogger(__name__)


class CeleryDispatcher:
    """Sends each submission's id through the broker; the queue's depth, and so the capacity
    that answers 503, is counted in the database, which every API replica shares."""

    def __init__(
        self,
        *,
        settings: AppSettings,
        database: Database,
        client: redis.Redis,
        outbox: Outbox,
        registry: WorkerRegistry,
        sweeper: Sweeper,
    ) -> None:
        self._settings = settings
        self._database = database
        self._client = client
        self._outbox = outbox
        self._registry = registry
        self._sweeper = sweeper

    def start(self) -> None:
        self._sweeper.start()

    def submit(self, submission_id: str) -> None:
        depth = self.depth()  # this submission included: it is committed
        if depth > self._settings.queue_capacity:
            raise QueueFull(
                f"{depth - 1} submissions are waiting or being graded; retry later",
                self._settings.queue_retry_after_s,
            )
        self._outbox.grade(submission_id)

    def resume(self, submission_ids: Sequence[str]) -> None:
        # Only what nobody holds: the rest is in the broker or in a live worker's hands.
        try:
            resent = self._sweeper.recover(submission_ids)
        except redis.RedisError:
            # Start anyway (and say not ready): the sweeper resends them once Redis answers.
            log.exception("could not look for unfinished work nobody holds")
            return
        if resent:
            log.warning("resumed %d unfinished submissions nobody held", len(resent))

    def depth(self) -> int:
        with self._database.session() as session:
            count: int = (
                session.scalar(
                    select(func.count())
                    .select_from(Submission)
                    .where(Submission.status != SubmissionStatus.DONE)
                )
                or 0
            )
        return count

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
        self._sweeper.close()
