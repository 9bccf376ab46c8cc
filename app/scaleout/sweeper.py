"""The sweeper: unfinished work that nobody answers for goes back to the queue.

Correctness does not rest on the broker: every `sweep_interval_s`, in each API replica and each
worker, a sweeper tries to take the period's lock in Redis; the one that gets it reads the
unfinished submissions from the database and re-dispatches

- those with no ticket (app.scaleout.tickets): the lease of a worker killed mid-grade has
  lapsed, a message was lost with Redis, or the API died between its commit and its send. A
  row left `running` goes back to `queued` first (keeping its attempt count, so a submission
  that keeps killing workers ends in an error report);
- those `running` past `running_stale_after_s` whatever their ticket says (a grader that is
  alive but wedged), which the claim in app.grading accepts again;

and webhook deliveries still pending well past their longest backoff (their message was lost).

A row younger than `worker_lease_s` is left alone: the API may not have issued its ticket yet.
Duplicates are harmless (the claim in app.grading lets one grader through); a lost row is not,
so the sweeper errs on the side of sending again.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

import redis
from sqlalchemy import CursorResult, select, update

from app.db import Database
from app.models import DeliveryStatus, Submission, SubmissionStatus, WebhookDelivery, utcnow
from app.scaleout.tickets import Tickets
from app.settings import AppSettings

log = logging.getLogger(__name__)


class Sweeper:
    def __init__(
        self,
        *,
        settings: AppSettings,
        database: Database,
        client: redis.Redis,
        tickets: Tickets,
        dispatch: Callable[[str], object],
        deliver: Callable[[int], None],
    ) -> None:
        self._settings = settings
        self._database = database
        self._client = client
        self._tickets = tickets
        self._dispatch = dispatch
        self._deliver = deliver
        self._lock_key = f"{settings.redis_prefix}sweeper"
        self._me = uuid.uuid4().hex
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sweeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def sweep(self) -> list[str]:
        """One pass, if no other sweeper had one this period. Returns the submissions sent."""
        interval_ms = max(1, round(self._settings.sweep_interval_s * 1000))
        # No release: the lock lapses by itself, so the whole deployment sweeps once a period.
        if not self._client.set(self._lock_key, self._me, nx=True, px=interval_ms):
            return []
        return self.recover()

    def recover(self, only: Sequence[str] | None = None) -> list[str]:
        """Re-dispatch the unfinished submissions (of `only`, if given) that nobody holds."""
        sent = [orphan[0] for orphan in self._orphans(only) if self._requeue(orphan)]
        for submission_id in sent:
            log.warning(
                "re-dispatching a submission nobody held", extra={"submission_id": submission_id}
            )
            self._dispatch(submission_id)
        for delivery_id in self._stuck_deliveries():
            log.warning("re-sending a stuck webhook delivery %d", delivery_id)
            self._deliver(delivery_id)
        return sent

    def _loop(self) -> None:
        while not self._closed.wait(self._settings.sweep_interval_s):
            try:
                self.sweep()
            except Exception:  # Redis or the database away: the next period tries again
                log.exception("sweeping for unfinished work failed")

    def _orphans(self, only: Sequence[str] | None) -> list[tuple[str, datetime | None]]:
        now = utcnow()
        young = now - timedelta(seconds=self._settings.worker_lease_s)
        stale = now - timedelta(seconds=self._settings.running_stale_after_s)
        query = select(
            Submission.id, Submission.status, Submission.created_at, Submission.started_at
        ).where(Submission.status != SubmissionStatus.DONE)
        if only is not None:
            query = query.where(Submission.id.in_(only))
        with self._database.session() as session:
            rows = session.execute(query.order_by(Submission.id)).all()
        settled = [row for row in rows if (row.started_at or row.created_at) < young]
        unheld = self._tickets.unheld([row.id for row in settled])
        orphans = []
        for row in settled:
            running = row.status is SubmissionStatus.RUNNING
            if row.id in unheld:
                orphans.append((row.id, row.started_at if running else None))
            elif running and row.started_at is not None and row.started_at < stale:
                orphans.append((row.id, None))  # claimable as it is: no reset
        return orphans

    def _requeue(self, orphan: tuple[str, datetime | None]) -> bool:
        """Put a dead grader's row back to queued, unless it moved on since it was read."""
        submission_id, running_since = orphan
        if running_since is None:
            return True
        with self._database.session() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(Submission)
                    .where(
                        Submission.id == submission_id,
                        Submission.status == SubmissionStatus.RUNNING,
                        Submission.started_at == running_since,
                    )
                    .values(status=SubmissionStatus.QUEUED)
                    .execution_options(synchronize_session=False)
                ),
            )
        return result.rowcount == 1

    def _stuck_deliveries(self) -> list[int]:
        """Pending deliveries quiet for longer than any backoff; each is marked as touched, so
        the next sweep leaves it alone while the re-sent message waits for a worker."""
        settings = self._settings
        # A pending delivery waits at most one backoff between attempts, plus the attempt.
        quiet = settings.webhook_backoff_max_s + settings.webhook_timeout_s
        since = utcnow() - timedelta(seconds=quiet + 2 * settings.sweep_interval_s)
        stuck = (WebhookDelivery.status == DeliveryStatus.PENDING) & (
            WebhookDelivery.updated_at < since
        )
        with self._database.session() as session:
            ids = list(session.scalars(select(WebhookDelivery.id).where(stuck)))
            touched = []
            for delivery_id in ids:
                result = cast(
                    CursorResult[Any],
                    session.execute(
                        update(WebhookDelivery)
                        .where(WebhookDelivery.id == delivery_id, stuck)
                        .values(updated_at=utcnow())
                        .execution_options(synchronize_session=False)
                    ),
                )
                if result.rowcount == 1:
                    touched.append(delivery_id)
        return touched
