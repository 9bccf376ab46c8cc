"""Webhooks: POST a finished submission to its callback_url, signed, retried with backoff.

The request carries
    X-Autograder-Event: submission.done       the first report of a submission
                      | submission.regraded   a regrade changed its score (app.regrades)
    X-Autograder-Delivery: <delivery id>
    X-Autograder-Timestamp: <unix seconds>
    X-Autograder-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<delivery id>.<body>">
keyed by AUTOGRADER_WEBHOOK_SECRET (or AUTOGRADER_SECRET). Signing the timestamp lets a receiver
refuse replays (`verify_signature` accepts a timestamp within 5 minutes); signing the delivery id
lets it deduplicate on an id nobody else can forge. The body is the submission as
`GET /v1/submissions/{id}` shows it to the key that submitted it, with its report as it is now.

A delivery is an outbox message (app.outbox.sender) recorded with the submission's report, so it
survives restarts; attempts go on until a 2xx, or it is marked failed after
`webhook_max_attempts`. Anything but a 2xx (a redirect too: it is not followed) is a failure.
Each attempt checks the URL again (app.core.callback_urls) and connects to the address it checked; a
URL refused then fails the delivery at once (retrying would not make it public), while a name
that does not resolve is retried like any other failure. Each receiver (scheme, host and port)
has at most one attempt in flight, so a slow one holds one of the outbox's threads, not all.
"""

from __future__ import annotations

import hashlib
import hmac
import time

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.submission_schemas import SubmissionPublic
from app.core.callback_urls import (
    CallbackPolicy,
    CallbackRefused,
    CallbackUnresolved,
    IPAddress,
    origin,
    pinned,
)
from app.core.db import Database
from app.core.metrics import Metrics
from app.core.models import Submission
from app.core.settings import AppSettings
from app.outbox.models import OutboxMessage, WebhookDelivery
from app.outbox.sender import Channel, Retry, Undelivered
from grader.report import Report

DELIVERY_HEADER = "X-Autograder-Delivery"
SIGNATURE_HEADER = "X-Autograder-Signature"
TIMESTAMP_HEADER = "X-Autograder-Timestamp"
DONE = "submission.done"
REGRADED = "submission.regraded"


def sign(key: bytes, timestamp: int, delivery_id: str, body: bytes) -> str:
    signed = f"{timestamp}.{delivery_id}.".encode() + body
    return f"sha256={hmac.new(key, signed, hashlib.sha256).hexdigest()}"


def verify_signature(
    key: bytes,
    timestamp: str,
    delivery_id: str,
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
    return hmac.compare_digest(sign(key, sent, delivery_id, body), signature)


def record_delivery(session: Session, submission_id: str, report: Report) -> bool:
    """app.grading.job's hook: with the report, a delivery to the submission's callback_url."""
    return _record(session, submission_id, DONE)


def record_regraded(session: Session, submission_id: str) -> bool:
    """app.regrades' hook, when a regrade changed the score: a delivery announcing it."""
    return _record(session, submission_id, REGRADED)


def _record(session: Session, submission_id: str, event: str) -> bool:
    url = session.scalar(select(Submission.callback_url).where(Submission.id == submission_id))
    if url:
        session.add(WebhookDelivery(submission_id=submission_id, url=url, event=event))
    return bool(url)


def webhook_channel(
    database: Database, settings: AppSettings, client: httpx.Client, metrics: Metrics
) -> Channel:
    """Webhook deliveries as the outbox sends them."""

    policy = CallbackPolicy(settings.webhook_allowed_hosts)

    def send(delivery_id: int) -> int:
        return _post(
            delivery_id, database=database, settings=settings, client=client, policy=policy
        )

    retry = Retry(
        settings.webhook_max_attempts, settings.webhook_backoff_s, settings.webhook_backoff_max_s
    )
    # An attempt is a connect and a read, each within the timeout.
    claim_s = settings.webhook_timeout_s * 3 + 5
    count = metrics.webhooks.labels
    return Channel(
        "webhook delivery",
        WebhookDelivery,
        send,
        retry,
        claim_s,
        lambda o: count(o).inc(),
        receiver=_receiver,
    )


def _receiver(message: OutboxMessage) -> str:
    assert isinstance(message, WebhookDelivery)
    return origin(message.url)


def _checked_address(policy: CallbackPolicy, url: str) -> IPAddress:
    try:
        return policy.check(url)
    except CallbackUnresolved as unresolved:
        raise Undelivered(str(unresolved)) from None
    except CallbackRefused as refused:
        raise Undelivered(f"refused: {refused}", permanent=True) from None


def _post(
    delivery_id: int,
    *,
    database: Database,
    settings: AppSettings,
    client: httpx.Client,
    policy: CallbackPolicy,
) -> int:
    with database.session() as session:
        delivery = session.get(WebhookDelivery, delivery_id)
        assert delivery is not None
        submission = session.get(Submission, delivery.submission_id)
        assert submission is not None
        body = SubmissionPublic.from_row(submission).model_dump_json().encode()
        url, event = delivery.url, delivery.event
    target = pinned(url, _checked_address(policy, url))
    timestamp = int(time.time())
    try:
        response = client.post(
            target.url,
            content=body,
            headers={
                **target.headers,
                "Content-Type": "application/json",
                "User-Agent": "autograder-webhooks",
                "X-Autograder-Event": event,
                DELIVERY_HEADER: str(delivery_id),
                TIMESTAMP_HEADER: str(timestamp),
                SIGNATURE_HEADER: sign(
                    settings.webhook_signing_key(), timestamp, str(delivery_id), body
                ),
            },
            extensions=target.extensions,
            timeout=settings.webhook_timeout_s,
            follow_redirects=False,
        )
    except httpx.HTTPError as failure:
        raise Undelivered(f"{type(failure).__name__}: {failure}") from None
    if not response.is_success:
        raise Undelivered(f"HTTP {response.status_code}", response.status_code)
    return response.status_code
