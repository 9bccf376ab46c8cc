"""Webhooks: POST a finished submission to its callback_url, signed, retried with backoff.

The request carries
    X-Autograder-Event: submission.done
    X-Autograder-Delivery: <delivery id>
    X-Autograder-Timestamp: <unix seconds>
    X-Autograder-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">
keyed by AUTOGRADER_WEBHOOK_SECRET (or AUTOGRADER_SECRET). Signing the timestamp with the body
lets a receiver refuse replays: `verify_signature` accepts a timestamp within 5 minutes.

A delivery is a database row made with the submission's report, so it survives restarts: the
sender is told its id and makes attempts until a 2xx, or marks it failed after
`webhook_max_attempts`. Anything but a 2xx (a redirect too: it is not followed) is a failure.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from app.db import Database
from app.logs import bound_submission
from app.metrics import Metrics
from app.models import DeliveryStatus, Submission, WebhookDelivery
from app.settings import AppSettings
from app.submissions.schemas import SubmissionPublic

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Autograder-Signature"
TIMESTAMP_HEADER = "X-Autograder-Timestamp"
EVENT = "submission.done"


def sign(key: bytes, timestamp: int, body: bytes) -> str:
    digest = hmac.new(key, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify_signature(
    key: bytes,
    timestamp: str,
    body: bytes,
    signature: str,
    *,
    tolerance_s: float = 300.0,
    now: float | None = None,
) -> bool:
    """What a receiver does: check the signature and that the timestamp is recent."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - sent) > tolerance_s:
        return False
    return hmac.compare_digest(sign(key, sent, body), signature)


def attempt_delivery(
    delivery_id: int,
    *,
    database: Database,
    settings: AppSettings,
    client: httpx.Client,
    metrics: Metrics | None = None,
) -> float | None:
    """Make one attempt at a pending delivery. Return the seconds to wait before the next
    attempt, or None when there is nothing more to do (delivered, given up, or not pending)."""
    with database.session() as session:
        delivery = session.get(WebhookDelivery, delivery_id)
        if delivery is None or delivery.status is not DeliveryStatus.PENDING:
            return None
        submission = session.get(Submission, delivery.submission_id)
        if submission is None:
            return None
        body = SubmissionPublic.from_row(submission).model_dump_json().encode()
        url, attempt = delivery.url, delivery.attempts + 1
    with bound_submission(submission.id):
        timestamp = int(time.time())
        status_code: int | None = None
        error: str | None = None
        try:
            response = client.post(
                url,
                content=body,
                headers={
                    "Content-Type": "application/json",
                    "User-Agent": "autograder-webhooks",
                    "X-Autograder-Event": EVENT,
                    "X-Autograder-Delivery": str(delivery_id),
                    TIMESTAMP_HEADER: str(timestamp),
                    SIGNATURE_HEADER: sign(settings.webhook_signing_key(), timestamp, body),
                },
                timeout=settings.webhook_timeout_s,
                follow_redirects=False,
            )
            status_code = response.status_code
            if not response.is_success:
                error = f"HTTP {status_code}"
        except httpx.HTTPError as failure:
            error = f"{type(failure).__name__}: {failure}"[:1000]
        delivered = error is None
        gave_up = not delivered and attempt >= settings.webhook_max_attempts
        with database.session() as session:
            row = session.get(WebhookDelivery, delivery_id)
            if row is not None:
                row.attempts = attempt
                row.last_status_code = status_code
                row.last_error = error
                if delivered:
                    row.status = DeliveryStatus.DELIVERED
                elif gave_up:
                    row.status = DeliveryStatus.FAILED
        outcome = "delivered" if delivered else ("failed" if gave_up else "retry")
        if metrics is not None:
            metrics.webhooks.labels(outcome).inc()
        log.info("webhook attempt %d: %s", attempt, error or "delivered", extra={"url": url})
        if delivered or gave_up:
            return None
        backoff: float = settings.webhook_backoff_s * 2 ** (attempt - 1)
        return min(backoff, settings.webhook_backoff_max_s)


class WebhookSender:
    """Delivers in a few background threads; retries wait in a timer heap, not in a thread."""

    def __init__(
        self,
        database: Database,
        settings: AppSettings,
        metrics: Metrics | None = None,
        *,
        threads: int = 4,
    ) -> None:
        self._database = database
        self._settings = settings
        self._metrics = metrics
        self._client = httpx.Client()
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="webhook")
        self._due: list[tuple[float, int]] = []
        self._wakeup = threading.Condition()
        self._closed = False
        self._timer = threading.Thread(target=self._run_timer, name="webhook-timer", daemon=True)

    def start(self) -> None:
        self._timer.start()

    def enqueue(self, delivery_id: int) -> None:
        self._schedule(delivery_id, 0.0)

    def resume(self, delivery_ids: list[int]) -> None:
        for delivery_id in delivery_ids:
            self.enqueue(delivery_id)

    def close(self) -> None:
        """Stop; deliveries not done stay pending in the database for the next start."""
        with self._wakeup:
            self._closed = True
            self._wakeup.notify_all()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._client.close()

    def _schedule(self, delivery_id: int, delay_s: float) -> None:
        with self._wakeup:
            if self._closed:
                return
            heapq.heappush(self._due, (time.monotonic() + delay_s, delivery_id))
            self._wakeup.notify()

    def _run_timer(self) -> None:
        while True:
            with self._wakeup:
                while not self._closed and (not self._due or self._due[0][0] > time.monotonic()):
                    timeout = self._due[0][0] - time.monotonic() if self._due else None
                    self._wakeup.wait(timeout)
                if self._closed:
                    return
                _, delivery_id = heapq.heappop(self._due)
            try:
                self._pool.submit(self._attempt, delivery_id)
            except RuntimeError:  # the pool shut down meanwhile
                return

    def _attempt(self, delivery_id: int) -> None:
        try:
            retry_in = attempt_delivery(
                delivery_id,
                database=self._database,
                settings=self._settings,
                client=self._client,
                metrics=self._metrics,
            )
        except Exception:  # the database failed: try again later rather than lose it
            log.exception("webhook delivery %d failed inside the service", delivery_id)
            retry_in = self._settings.webhook_backoff_max_s
        if retry_in is not None:
            self._schedule(delivery_id, retry_in)
