"""The outbox, on SQLite and PostgreSQL: two senders never make the same attempt, a failure is
retried after its backoff and given up after the channel's attempts (or at once when permanent),
what was delivered records its status code, and a busy receiver holds one thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from app_support import CORRECT, SEED, wait_until

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus
from app.outbox.models import OutboxMessage, OutboxStatus, WebhookDelivery
from app.outbox.sender import Channel, OutboxSender, Retry, Undelivered


def deliveries(database: Database, count: int, url: str = "http://x") -> list[int]:
    with database.session() as session:
        submission = Submission(exercise=SEED, source=CORRECT, status=SubmissionStatus.DONE)
        session.add(submission)
        session.flush()
        rows = [WebhookDelivery(submission_id=submission.id, url=url) for _ in range(count)]
        session.add_all(rows)
        session.flush()
        return [row.id for row in rows]


def load(database: Database, delivery_id: int) -> WebhookDelivery:
    with database.session() as session:
        row = session.get(WebhookDelivery, delivery_id)
        assert row is not None
        return row


def by_url(message: OutboxMessage) -> str:
    assert isinstance(message, WebhookDelivery)
    return message.url


def channel(
    send: Callable[[int], int],
    backoff_s: float = 0.05,
    receiver: Callable[[OutboxMessage], str] | None = None,
) -> Channel:
    retry = Retry(3, backoff_s, 1.0)
    return Channel("test", WebhookDelivery, send, retry, claim_s=30.0, receiver=receiver)


def test_two_senders_make_each_attempt_once(database: Database) -> None:
    ids = deliveries(database, 20)
    sent: list[int] = []
    lock = threading.Lock()

    def send(message_id: int) -> int:
        with lock:
            sent.append(message_id)
        time.sleep(0.01)
        return 204

    senders = [OutboxSender(database, [channel(send)], poll_s=0.02) for _ in range(2)]
    for sender in senders:
        sender.start()
    try:
        wait_until(
            lambda: (
                len(sent) >= len(ids)
                and all(load(database, i).status is OutboxStatus.DELIVERED for i in ids)
            )
        )
    finally:
        for sender in senders:
            sender.close()
    assert sorted(sent) == ids
    assert {load(database, i).status for i in ids} == {OutboxStatus.DELIVERED}
    assert {load(database, i).last_status_code for i in ids} == {204}


def test_a_failure_is_retried_after_its_backoff_then_given_up(database: Database) -> None:
    (delivery_id,) = deliveries(database, 1)
    attempts: list[float] = []

    def send(message_id: int) -> int:
        attempts.append(time.monotonic())
        raise Undelivered("HTTP 503", 503)

    sender = OutboxSender(database, [channel(send, backoff_s=0.2)], poll_s=0.02)
    sender.start()
    try:
        wait_until(lambda: load(database, delivery_id).status is OutboxStatus.FAILED)
    finally:
        sender.close()
    row = load(database, delivery_id)
    assert (row.attempts, row.last_status_code, row.last_error) == (3, 503, "HTTP 503")
    assert len(attempts) == 3
    first_wait, second_wait = attempts[1] - attempts[0], attempts[2] - attempts[1]
    assert first_wait >= 0.2 and second_wait >= 0.4  # doubled


def test_a_permanent_failure_is_given_up_at_once(database: Database) -> None:
    (delivery_id,) = deliveries(database, 1)

    def send(message_id: int) -> int:
        raise Undelivered("refused: 10.0.0.1 is a private address", permanent=True)

    sender = OutboxSender(database, [channel(send)], poll_s=0.02)
    sender.start()
    try:
        wait_until(lambda: load(database, delivery_id).status is OutboxStatus.FAILED)
    finally:
        sender.close()
    assert load(database, delivery_id).attempts == 1


def test_a_busy_receiver_holds_one_thread_and_its_backlog_hides_no_other(
    database: Database,
) -> None:
    slow = deliveries(database, 250, url="http://slow")  # more than one batch of due rows
    (fast,) = deliveries(database, 1, url="http://fast")
    release, in_flight = threading.Event(), []

    def send(message_id: int) -> int:
        if message_id != fast:
            in_flight.append(message_id)
            release.wait(timeout=30)
        return 204

    sender = OutboxSender(database, [channel(send, receiver=by_url)], poll_s=0.02)
    sender.start()
    try:
        wait_until(lambda: load(database, fast).status is OutboxStatus.DELIVERED, timeout_s=5)
        assert in_flight == slow[:1]
    finally:
        release.set()
        sender.close()
