"""Webhooks: signed POSTs of the finished submission to a receiver on 127.0.0.1, retried.

The receivers listen on loopback, which the service calls only because these tests' operator
allow-list names it (LOOPBACK). Tests that point the service at other addresses or names run
under `keep_traffic_local`: whatever the service does, no packet leaves this machine.
"""

from __future__ import annotations

import json
import logging
import threading

import pytest
from app_support import (
    CORRECT,
    SEED,
    ClientFactory,
    Received,
    SettingsFactory,
    keep_traffic_local,
    wait_until,
    webhook_receiver,
)
from fastapi.testclient import TestClient
from httpx2 import Response
from sqlalchemy import select

from app.core import logs
from app.core.models import Submission
from app.outbox.models import OutboxStatus, WebhookDelivery
from app.outbox.webhooks import (
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign,
    verify_signature,
)

LOOPBACK = ["127.0.0.1"]


def test_a_signature_verifies_only_for_its_body_delivery_key_and_a_recent_timestamp() -> None:
    key, body = b"k", b'{"id": "1"}'
    signature = sign(key, 1000, "7", body)
    assert signature.startswith("sha256=")
    assert verify_signature(key, "1000", "7", body, signature, now=1010)
    assert not verify_signature(key, "1000", "7", body + b" ", signature, now=1010)
    assert not verify_signature(key, "1000", "8", body, signature, now=1010)  # another delivery
    assert not verify_signature(b"other", "1000", "7", body, signature, now=1010)
    assert not verify_signature(key, "1001", "7", body, signature, now=1010)
    assert not verify_signature(key, "1000", "7", body, signature, now=5000)  # a replay
    assert not verify_signature(key, "soon", "7", body, signature, now=1010)


def verified(key: bytes, request: Received) -> bool:
    headers = request.headers
    return verify_signature(
        key,
        headers[TIMESTAMP_HEADER],
        headers[DELIVERY_HEADER],
        request.body,
        headers[SIGNATURE_HEADER],
    )


def submit_with_callback(client: TestClient, url: str, source: str = "x = 1") -> Response:
    return client.post(
        "/v1/submissions", json={"exercise": SEED, "source": source, "callback_url": url}
    )


def deliveries(client: TestClient) -> list[WebhookDelivery]:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        return list(session.scalars(select(WebhookDelivery)))


def test_a_finished_submission_is_posted_signed_to_its_callback(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(webhook_secret="hook-secret", webhook_allowed_hosts=LOOPBACK)
    client = make_client(settings)
    with webhook_receiver() as receiver:
        accepted = submit_with_callback(client, receiver.url, source=CORRECT).json()
        wait_until(lambda: len(receiver.requests) == 1)
    (request,) = receiver.requests
    body = json.loads(request.body)
    assert body["id"] == accepted["id"]
    assert body["status"] == "done"
    assert body["report"]["status"] == "passed"
    assert request.headers["X-Autograder-Event"] == "submission.done"
    assert verified(b"hook-secret", request)
    wait_until(lambda: deliveries(client)[0].status is OutboxStatus.DELIVERED)


def test_without_a_webhook_secret_the_service_secret_signs(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(webhook_allowed_hosts=LOOPBACK))
    with webhook_receiver() as receiver:
        submit_with_callback(client, receiver.url)
        wait_until(lambda: len(receiver.requests) == 1)
    (request,) = receiver.requests
    assert verified(b"test-secret", request)


def test_a_failing_receiver_is_retried_with_backoff_until_it_answers(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(
        webhook_backoff_s=0.05, webhook_max_attempts=5, webhook_allowed_hosts=LOOPBACK
    )
    client = make_client(settings)
    with webhook_receiver(statuses=[500, 503]) as receiver:
        submit_with_callback(client, receiver.url)
        wait_until(lambda: len(receiver.requests) == 3)
        wait_until(lambda: deliveries(client)[0].status is OutboxStatus.DELIVERED)
    (delivery,) = deliveries(client)
    assert delivery.attempts == 3
    assert delivery.last_status_code == 200
    assert len({r.headers[DELIVERY_HEADER] for r in receiver.requests}) == 1


def test_a_receiver_that_never_answers_2xx_is_given_up_on(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(
        webhook_backoff_s=0.02, webhook_max_attempts=3, webhook_allowed_hosts=LOOPBACK
    )
    client = make_client(settings)
    with webhook_receiver(statuses=[500] * 10) as receiver:
        submit_with_callback(client, receiver.url)
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
    settings = make_settings(
        webhook_backoff_s=1.0, database_url=database_url, webhook_allowed_hosts=LOOPBACK
    )
    first = make_client(settings)
    with webhook_receiver(statuses=[500]) as receiver:
        submit_with_callback(first, receiver.url)
        wait_until(lambda: len(receiver.requests) == 1)
        first.__exit__(None, None, None)
        assert len(receiver.requests) == 1
        second = make_client(settings)
        wait_until(lambda: len(receiver.requests) == 2)
        wait_until(lambda: deliveries(second)[0].status is OutboxStatus.DELIVERED)


def submissions_stored(client: TestClient) -> int:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        return len(list(session.scalars(select(Submission.id))))


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://2130706433:8080/hook",
        "http://0x7f.1/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://[::1]/hook",
        "http://10.0.0.7/hook",
        "http://0.0.0.0/hook",
        "http://224.0.0.1/hook",
        "http://localhost/hook",
        "http://internal.example.org/hook",  # resolves to a private address
        "http://nowhere.example.org/hook",  # does not resolve: it could resolve anywhere later
    ],
)
def test_a_callback_url_to_an_internal_address_is_refused_and_nothing_is_stored(
    url: str,
    database_url: str,
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = {"localhost": "127.0.0.1", "internal.example.org": "10.1.2.3"}
    keep_traffic_local(monkeypatch, names.get)
    client = make_client(make_settings(database_url=database_url))
    response = submit_with_callback(client, url)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["type"] == "urn:autograder:problem:callback-url-refused"
    assert problem["detail"].startswith("callback_url: ")
    assert submissions_stored(client) == 0


def test_a_name_that_turns_internal_after_submission_is_refused_at_connect_time(
    database_url: str,
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # DNS rebinding: public when the submission is accepted, loopback when the webhook is sent.
    answers = iter(["93.184.216.34"])
    looked_up = keep_traffic_local(monkeypatch, lambda name: next(answers, "127.0.0.1"))
    settings = make_settings(database_url=database_url, webhook_backoff_s=0.02)
    client = make_client(settings)
    with webhook_receiver() as receiver:
        accepted = submit_with_callback(client, f"http://rebind.example.org:{receiver.port}/hook")
        assert accepted.status_code == 202, accepted.text
        wait_until(lambda: [d.status for d in deliveries(client)] == [OutboxStatus.FAILED])
        assert receiver.requests == []
    (delivery,) = deliveries(client)
    assert delivery.attempts == 1  # refused for good: retrying would not make it public
    assert delivery.last_error == (
        "refused: rebind.example.org resolves to 127.0.0.1, which is a loopback address; "
        "webhooks go to public addresses only"
    )
    assert looked_up == ["rebind.example.org"] * 2


def test_the_connection_goes_to_the_address_checked_and_the_name_is_not_resolved_again(
    make_client: ClientFactory, make_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Checked at submission and at the attempt (loopback, which the allow-list admits);
    # any third lookup, by the HTTP client, would get an address this test refuses to reach.
    answers = iter(["127.0.0.1", "127.0.0.1"])
    looked_up = keep_traffic_local(monkeypatch, lambda name: next(answers, "10.9.9.9"))
    client = make_client(make_settings(webhook_allowed_hosts=["127.0.0.0/8"]))
    with webhook_receiver() as receiver:
        submit_with_callback(client, f"http://pinned.example.org:{receiver.port}/hook")
        wait_until(lambda: len(receiver.requests) == 1)
    assert receiver.requests[0].headers["Host"] == f"pinned.example.org:{receiver.port}"
    assert looked_up == ["pinned.example.org"] * 2


def test_a_redirect_is_not_followed(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    settings = make_settings(webhook_max_attempts=1, webhook_allowed_hosts=LOOPBACK)
    client = make_client(settings)
    with (
        webhook_receiver() as elsewhere,
        webhook_receiver(statuses=[302], location=elsewhere.url) as receiver,
    ):
        submit_with_callback(client, receiver.url)
        wait_until(lambda: [d.status for d in deliveries(client)] == [OutboxStatus.FAILED])
        assert len(receiver.requests) == 1
        assert elsewhere.requests == []
    assert deliveries(client)[0].last_error == "HTTP 302"


def test_a_slow_receiver_does_not_delay_the_others(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    # More deliveries to a receiver that holds every request than the outbox has threads.
    settings = make_settings(webhook_timeout_s=60, webhook_allowed_hosts=LOOPBACK)
    client = make_client(settings)
    hold = threading.Event()
    with webhook_receiver(hold=hold) as slow, webhook_receiver() as fast:
        for n in range(6):
            submit_with_callback(client, slow.url, source=f"x = {n}")
        wait_until(lambda: len(slow.requests) >= 1 and len(deliveries(client)) == 6)
        submit_with_callback(client, fast.url, source="y = 1")
        wait_until(lambda: len(fast.requests) == 1, timeout_s=5)
        assert len(slow.requests) == 1  # one attempt in flight per receiver
        hold.set()
        wait_until(lambda: len(slow.requests) == 6)


def test_a_callback_url_is_never_logged_in_clear(
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.getLogger("httpx").level
    logs.configure(level="DEBUG", log_format="text")  # as `autograder serve` does, but verbose
    try:
        settings = make_settings(webhook_allowed_hosts=LOOPBACK, webhook_backoff_s=0.02)
        client = make_client(settings)
        with webhook_receiver(statuses=[500]) as receiver:
            submit_with_callback(client, f"{receiver.url}?token=s3cr3t")
            wait_until(lambda: len(receiver.requests) == 2)
            wait_until(lambda: deliveries(client)[0].status is OutboxStatus.DELIVERED)
    finally:
        root.handlers[:], level, httpx_level = saved
        root.setLevel(level)
        logging.getLogger("httpx").setLevel(httpx_level)
    logged = capsys.readouterr().err
    assert "webhook delivery" in logged and "HTTP 500" in logged  # the attempts were logged
    assert "s3cr3t" not in logged
    assert "/hook" not in logged
