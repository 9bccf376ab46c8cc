"""The outbox: what must follow a stored report, sent from the database with retries.

A message is a row (app.core.models.OutboxMessage: a webhook delivery, an LTI score post) recorded
in the transaction that stores the report, so it exists exactly when the report does. One sender
per API process polls every `outbox_poll_s` (and at once when woken by a finished grading):

    due       pending, and `next_attempt_at` has come
    claim     one conditional UPDATE moves `next_attempt_at` past the attempt and counts it, so
              two senders (API replicas) never make the same attempt
    attempt   the channel's `send`, in a small pool of threads; where the channel names each
              message's receiver, at most one attempt per receiver is in flight (the others
              stay due), so a slow receiver holds one thread and the rest serve the others
    settle    delivered; or failed after the channel's `max_attempts`, or at once when the
              failure is permanent; or due again after a backoff, doubled per attempt and capped

The rows survive restarts, so a retry survives them too, on either path.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select, update

from app.core.db import Database, changed_rows
from app.core.models import utcnow
from app.core.periodic import Periodic
from app.outbox.models import OutboxMessage, OutboxStatus

log = logging.getLogger(__name__)

_BATCH = 100


class Undelivered(Exception):
    """An attempt that did not land: what to record, the HTTP status if one came back, and
    whether trying again is pointless."""

    def __init__(
        self, error: str, status_code: int | None = None, *, permanent: bool = False
    ) -> None:
        super().__init__(error)
        self.error = error[:1000]
        self.status_code = status_code
        self.permanent = permanent


def _uncounted(outcome: str) -> None:
    """A channel without a metric."""


@dataclass(frozen=True)
class Retry:
    """How hard to try: attempts at most, and the wait after each, doubled and capped."""

    max_attempts: int
    first_backoff_s: float
    max_backoff_s: float

    def backoff(self, attempts: int) -> timedelta:
        return timedelta(
            seconds=min(self.first_backoff_s * 2 ** (attempts - 1), self.max_backoff_s)
        )


@dataclass(frozen=True)
class Channel:
    """One kind of outbox message: its table, how one is sent, and how hard to try."""

    name: str
    model: type[OutboxMessage]
    send: Callable[[int], int | None]  # the HTTP status when delivered; raises Undelivered
    retry: Retry
    claim_s: float  # longer than one attempt can take
    count: Callable[[str], None] = _uncounted  # each attempt's outcome: delivered/retry/failed
    # Who receives a message: one attempt at a time each. None: every message is its own.
    receiver: Callable[[OutboxMessage], str] | None = None


class OutboxSender:
    def __init__(
        self, database: Database, channels: Sequence[Channel], *, poll_s: float, threads: int = 4
    ) -> None:
        self._database = database
        self._channels = channels
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="outbox")
        # Claimed means started: no claim waits in the pool's queue, so stopping waits for a
        # few attempts at most and never strands a claimed message until its claim lapses.
        self._free = threading.BoundedSemaphore(threads)
        self._receiving: set[str] = set()  # receivers with an attempt in flight
        self._receiving_lock = threading.Lock()
        self._loop = Periodic("outbox", poll_s, self.send_due)

    def start(self) -> None:
        self._loop.start()

    def wake(self) -> None:
        """Look for due messages now (a grading just recorded one)."""
        self._loop.wake()

    def close(self) -> None:
        """Stop after the attempts in flight; what is not delivered stays pending in the
        database for the next start."""
        self._loop.close()
        self._pool.shutdown(wait=True)

    def send_due(self) -> int:
        """Claim due messages while a thread is free and start their attempts; returns how
        many were started (an attempt that ends wakes the sender for the rest)."""
        started = 0
        for channel in self._channels:
            for message_id, receiver in self._due(channel):
                if not self._take(receiver):
                    continue  # its receiver is busy: it stays due
                if not self._free.acquire(blocking=False):
                    self._give_back(receiver)
                    return started
                if not self._claim(channel, message_id):
                    self._free.release()
                    self._give_back(receiver)
                    continue
                self._pool.submit(self._attempt, channel, message_id, receiver)
                started += 1
        return started

    def _due(self, channel: Channel) -> Iterator[tuple[int, str | None]]:
        """Due messages and their receivers, oldest first, in batches, read past those of busy
        receivers so that a backlog for one receiver cannot hide the others."""
        model, after = channel.model, 0
        while True:
            with self._database.session() as session:
                batch = [
                    (message.id, channel.receiver(message) if channel.receiver else None)
                    for message in session.scalars(
                        select(model)
                        .where(
                            model.status == OutboxStatus.PENDING,
                            model.next_attempt_at <= utcnow(),
                            model.id > after,
                        )
                        .order_by(model.id)
                        .limit(_BATCH)
                    )
                ]
            yield from batch
            if len(batch) < _BATCH:
                return
            after = batch[-1][0]

    def _take(self, receiver: str | None) -> bool:
        if receiver is None:
            return True
        with self._receiving_lock:
            if receiver in self._receiving:
                return False
            self._receiving.add(receiver)
            return True

    def _give_back(self, receiver: str | None) -> None:
        if receiver is not None:
            with self._receiving_lock:
                self._receiving.discard(receiver)

    def _claim(self, channel: Channel, message_id: int) -> bool:
        model, now = channel.model, utcnow()
        with self._database.session() as session:
            result = session.execute(
                update(model)
                .where(
                    model.id == message_id,
                    model.status == OutboxStatus.PENDING,
                    model.next_attempt_at <= now,
                )
                .values(
                    next_attempt_at=now + timedelta(seconds=channel.claim_s),
                    attempts=model.attempts + 1,
                )
                .execution_options(synchronize_session=False)
            )
        return changed_rows(result) == 1

    def _attempt(self, channel: Channel, message_id: int, receiver: str | None) -> None:
        failure: Undelivered | None = None
        status_code: int | None = None
        try:
            status_code = channel.send(message_id)
        except Undelivered as undelivered:
            failure, status_code = undelivered, undelivered.status_code
        except Exception as error:  # the database away, a bug: retried after a backoff
            log.exception("%s %d: the attempt failed inside the service", channel.name, message_id)
            failure = Undelivered(f"internal error ({type(error).__name__})")
        try:
            self._settle(channel, message_id, failure, status_code)
        except Exception:
            log.exception("%s %d: recording the attempt failed", channel.name, message_id)
        finally:
            self._give_back(receiver)
            self._free.release()
            self._loop.wake()

    def _settle(
        self,
        channel: Channel,
        message_id: int,
        failure: Undelivered | None,
        status_code: int | None,
    ) -> None:
        with self._database.session() as session:
            message = session.get(channel.model, message_id)
            assert message is not None
            message.last_error = failure.error if failure else None
            message.last_status_code = status_code
            if failure is None:
                message.status, outcome = OutboxStatus.DELIVERED, "delivered"
            elif failure.permanent or message.attempts >= channel.retry.max_attempts:
                message.status, outcome = OutboxStatus.FAILED, "failed"
            else:
                message.next_attempt_at = utcnow() + channel.retry.backoff(message.attempts)
                outcome = "retry"
            attempts = message.attempts
        channel.count(outcome)
        log.info(
            "%s %d attempt %d: %s",
            channel.name,
            message_id,
            attempts,
            failure.error if failure else "delivered",
        )
