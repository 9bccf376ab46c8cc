"""The messages of the scale-out path, each carrying one id: grade a submission, deliver a
webhook. A send that fails (the broker is away) is logged, not raised: what it was about is
already stored, and the sweeper sends it again once the broker answers."""

from __future__ import annotations

import logging

from celery import Celery

from app.logs import bound_submission
from app.scaleout.broker import DELIVER_TASK, GRADE_TASK, GRADING_QUEUE, WEBHOOK_QUEUE
from app.scaleout.tickets import Tickets

log = logging.getLogger(__name__)


class Outbox:
    def __init__(self, celery: Celery, tickets: Tickets) -> None:
        self._celery = celery
        self._tickets = tickets

    def grade(self, submission_id: str) -> bool:
        """Send the submission to a worker; False when the broker could not be reached."""
        with bound_submission(submission_id):
            try:
                self._celery.send_task(GRADE_TASK, args=[submission_id], queue=GRADING_QUEUE)
                # After the send: a ticket without a message would hide a lost submission
                # from the sweeper until the ticket lapsed.
                self._tickets.issue(submission_id)
            except Exception:
                log.exception("the broker refused the submission; the sweeper will resend it")
                return False
        return True

    def enqueue(self, delivery_id: int) -> None:
        """app.grading.WebhookQueue: deliver a stored webhook from a worker, soon."""
        self.deliver_later(delivery_id, 0.0)

    def deliver_later(self, delivery_id: int, countdown_s: float) -> None:
        try:
            self._celery.send_task(
                DELIVER_TASK,
                args=[delivery_id],
                queue=WEBHOOK_QUEUE,
                countdown=countdown_s or None,
            )
        except Exception:
            log.exception("the broker refused webhook delivery %d; it is resent later", delivery_id)
