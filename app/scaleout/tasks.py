"""The worker side: the two tasks, bound to this process's grading context.

`grade(id)` holds the submission's lease while it runs the one grading job both paths share,
app.grading.grade_submission; `deliver(id)` makes one webhook attempt (app.webhooks) and, when
it failed and tries remain, sends itself again with the backoff as a countdown. The backoff
stays far below the broker's visibility timeout, so a delayed message is never handed out twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import httpx
from celery import Celery

from app.grading import GradingContext, grade_submission
from app.logs import bound_submission
from app.scaleout.broker import DELIVER_TASK, GRADE_TASK
from app.scaleout.outbox import Outbox
from app.scaleout.tickets import Tickets
from app.webhooks import attempt_delivery

log = logging.getLogger(__name__)


class Held:
    """The submissions this worker grades now, whose leases its heartbeat renews."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def add(self, submission_id: str) -> None:
        with self._lock:
            self._ids.add(submission_id)

    def discard(self, submission_id: str) -> None:
        with self._lock:
            self._ids.discard(submission_id)

    def snapshot(self) -> list[str]:
        with self._lock:
            return sorted(self._ids)


def register_tasks(
    celery: Celery,
    *,
    context: GradingContext,
    tickets: Tickets,
    holder: str,
    held: Held,
    outbox: Outbox,
    client: httpx.Client,
    job: Callable[[str, GradingContext], None] = grade_submission,
) -> None:
    def grade(submission_id: str) -> None:
        with bound_submission(submission_id):
            if not tickets.hold(submission_id, holder):
                log.info("another live worker holds it; this copy of the message is dropped")
                return
            held.add(submission_id)
            try:
                job(submission_id, context)
            finally:
                held.discard(submission_id)
                # Also after a failure (the database away): with no ticket left, the sweeper
                # sends the still unfinished submission again.
                tickets.release(submission_id, holder)

    def deliver(delivery_id: int) -> None:
        retry_in = attempt_delivery(
            delivery_id,
            database=context.database,
            settings=context.settings,
            client=client,
            metrics=context.metrics,
        )
        if retry_in is not None:
            outbox.deliver_later(delivery_id, retry_in)

    celery.task(name=GRADE_TASK)(grade)
    celery.task(name=DELIVER_TASK)(deliver)
