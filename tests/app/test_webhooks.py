"""Webhooks: signed POSTs of the finished submission to a receiver on 127.0.0.1, retried."""

from __future__ import annotations

import json

from app_support import CORRECT, SEED, ClientFactory, SettingsFactory, wait_until, webhook_receiver
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.models import OutboxStatus, WebhookDelivery
from app.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, verify_signature


def test_a_signature_verifies_only_for_its_body_key_and_a_recent_timestamp() -> None:
    key, body = b"k", b'{"id": "1"}'
    signature = sign(key, 1000, body)
    assert signature.startswith("sha256=")
    assert verify_signature(key, "1000", body, signature, now=1010)
    assert not verify_signature(key, "1000", body + b" ", signature, now=1010)
    assert not verify_signature(b"other", "1000", body, signature, now=1010)
    assert not verify_signature(key, "1001", body, signature, now=1010)
    assert not verify_signature(key, "1000", body, signature, now=5000)  # a replay
    assert not verify_signature(key, "soon", body, signature, now=1010)


def deliveries(client: TestClient) -> list[WebhookDelivery]:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        return list(session.scalars(select(WebhookDelivery)))


def test_a_finished_submission_is_posted_signed_to_its_callback(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(webhook_secret="hook-secret")
    client = make_client(settings)
    with webhook_receiver() as receiver:
        accepted = client.post(
            "/v1/submissions",
            json={"exercise": SEED, "source": CORRECT, "callback_url": receiver.url},
        ).json()
        wait_until(lambda: len(receiver.requests) == 1)
    (request,) = receiver.requests
    body = json.loads(request.body)
    assert body["id"] == accepted["id"]
    assert body["status"] == "done"
    assert body["report"]["status"] == "passed"
    assert request.headers["X-Autograder-Event"] == "submission.done"
    assert verify_signature(
        b"hook-secret",
        request.headers[TIMESTAMP_HEADER],
        request.body,
        request.headers[SIGNATURE_HEADER],
    )
    wait_until(lambda: deliveries(client)[0].status is OutboxStatus.DELIVERED)


def test_without_a_webhook_secret_the_service_secret_signs(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings())
    with webhook_receiver() as receiver:
        client.post(
            "/v1/submissions",
            json={"exercise": SEED, "source": "x = 1", "callback_url": receiver.url},
        )
        wait_until(lambda: len(receiver.requests) == 1)
    (request,) = receiver.requests
    headers = request.headers
    assert verify_signature(
        b"test-secret", headers[TIMESTAMP_HEADER], request.body, headers[SIGNATURE_HEADER]
    )


def test_a_failing_receiver_is_retried_with_backoff_until_it_answers(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(webhook_backoff_s=0.05, webhook_max_attempts=5)
    client = make_client(settings)
    with webhook_receiver(statuses=[500, 503]) as receiver:
        client.post(
            "/v1/submissions",
            json={"exercise": SEED, "source": "x = 1", "callback_url": receiver.url},
        )
        wait_until(lambda: len(receiver.requests) == 3)
        wait_until(lambda: deliveries(client)[0].status is OutboxStatus.DELIVERED)
    (delivery,) = deliveries(client)
    assert delivery.attempts == 3
    assert delivery.last_status_code == 200
    assert len({r.headers["X-Autograder-Delivery"] for r in receiver.requests}) == 1


def test_a_receiver_that_never_answers_2xx_is_given_up_on(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(webhook_backoff_s=0.02, webhook_max_attempts=3)
    client = make_client(settings)
    with webhook_receiver(statuses=[500] * 10) as receiver:
        client.post(
            "/v1/submissions",
            json={"exercise": SEED, "source": "x = 1", "callback_url": receiver.url},
        )
        wait_until(
            lambda: (
                deliveries(client)[:1] != []
                and (deliveries(client)[0].status is OutboxStatus.FAILED)
            )
        )
        assert len(receiver.requests) == 3
    (delivery,) = deliveries(client)
    assert delivery.last_error == "HTTP 500"


def test_a_pending_delivery_is_sent_after_a_restart(
    database_url: str, make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    # The first process stops right after the first attempt, well before the backoff ends:
    # the second attempt can only come from the restarted one, from the stored delivery.
    settings = make_settings(webhook_backoff_s=1.0, database_url=database_url)
    first = make_client(settings)
    with webhook_receiver(statuses=[500]) as receiver:
        first.post(
            "/v1/submissions",
            json={"exercise": SEED, "source": "x = 1", "callback_url": receiver.url},
        )
        wait_until(lambda: len(receiver.requests) == 1)
        first.__exit__(None, None, None)
        assert len(receiver.requests) == 1
        second = make_client(settings)
        wait_until(lambda: len(receiver.requests) == 2)
        wait_until(lambda: deliveries(second)[0].status is OutboxStatus.DELIVERED)
