"""The parts of the scale-out path, each against the real Redis and PostgreSQL but without a
worker process: what the API sends, tickets and leases, the sweeper, the grade task, and rate
limits shared by API replicas. (tests/app/test_worker_scaleout.py runs the whole thing.)"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
import redis
from app_support import CORRECT, SEED, ClientFactory, SettingsFactory
from celery import Celery
from scaleout_support import RedisNamespace, redis_namespace
from sqlalchemy import delete, select

from app.cli import main
from app.db import Database
from app.grading import GradingContext, grade_submission
from app.models import (
    DeliveryStatus,
    Submission,
    SubmissionStatus,
    WebhookDelivery,
    utcnow,
)
from app.scaleout.broker import GRADE_TASK, GRADING_QUEUE, make_celery
from app.scaleout.notify import DoneListener, DonePublisher
from app.scaleout.outbox import Outbox
from app.scaleout.ratelimit import RedisRateLimiter
from app.scaleout.sweeper import Sweeper
from app.scaleout.tasks import Held, register_tasks
from app.scaleout.tickets import QUEUED, Tickets
from app.services import ConfigurationError, build_services
from app.settings import AppSettings, get_settings
from grader.runner import Grader

LEASE_S = 0.5


@pytest.fixture(scope="module")
def redis_ns() -> Iterator[RedisNamespace]:
    with redis_namespace() as namespace:
        yield namespace


@pytest.fixture
def ns(redis_ns: RedisNamespace) -> Iterator[RedisNamespace]:
    yield redis_ns
    keys = list(redis_ns.client.scan_iter(match=f"{redis_ns.prefix}*"))
    if keys:
        redis_ns.client.delete(*keys)


@pytest.fixture(scope="module")
def _module_database(module_postgres_url: str) -> Iterator[Database]:
    database = Database.from_url(module_postgres_url)
    database.migrate()
    yield database
    database.close()


@pytest.fixture
def database(_module_database: Database) -> Iterator[Database]:
    yield _module_database
    with _module_database.session() as session:
        session.execute(delete(WebhookDelivery))
        session.execute(delete(Submission))


@pytest.fixture
def scaled(make_settings: SettingsFactory, ns: RedisNamespace, module_postgres_url: str) -> Any:
    def make(**overrides: Any) -> AppSettings:
        values: dict[str, Any] = {
            "broker_url": ns.url,
            "redis_prefix": ns.prefix,
            "database_url": module_postgres_url,
            "worker_lease_s": LEASE_S,
            **overrides,
        }
        return make_settings(**values)

    return make


def tickets_of(settings: AppSettings, ns: RedisNamespace) -> Tickets:
    return Tickets.for_settings(ns.client, settings)


def store(database: Database, **values: Any) -> str:
    with database.session() as session:
        row = Submission(exercise=SEED, source=CORRECT, **values)
        session.add(row)
        session.flush()
        return row.id


def row(database: Database, submission_id: str) -> Submission:
    with database.session() as session:
        found = session.get(Submission, submission_id)
        assert found is not None
        return found


def sent_ids(ns: RedisNamespace) -> list[str]:
    """The submission ids of the grade messages waiting in the broker, oldest first."""
    messages = ns.client.lrange(f"{ns.prefix}{GRADING_QUEUE}", 0, -1)
    ids = []
    for raw in reversed(messages):  # kombu pushes on the left and pops on the right
        message = json.loads(raw)
        assert message["headers"]["task"] == GRADE_TASK
        args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        assert kwargs == {}
        (submission_id,) = args  # the id, and nothing else
        ids.append(submission_id)
    return ids


# --- the API sends, and counts its queue in the database


def test_the_api_sends_only_the_stored_id_and_issues_its_ticket(
    make_client: ClientFactory, scaled: Any, ns: RedisNamespace, database: Database
) -> None:
    settings = scaled(queue_capacity=2)
    client = make_client(settings)
    ids = [
        client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT}).json()["id"]
        for _ in range(2)
    ]
    assert sent_ids(ns) == ids
    assert [ns.client.get(f"{ns.prefix}ticket:{i}") for i in ids] == [QUEUED.encode()] * 2
    assert [row(database, i).status for i in ids] == [SubmissionStatus.QUEUED] * 2

    full = client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})
    assert full.status_code == 503
    assert full.headers["Retry-After"] == str(settings.queue_retry_after_s)
    assert len(sent_ids(ns)) == 2

    readiness = client.get("/readyz").json()
    checks = {check["name"]: check for check in readiness["checks"]}
    assert checks["broker"]["ok"]
    assert checks["grading workers"]["detail"] == "0 alive, 0 slots"
    assert readiness["status"] == "ready"
    metrics = client.get("/metrics").text
    assert "autograder_queue_depth 2.0" in metrics


def test_a_broker_that_cannot_be_reached_keeps_the_submission_for_the_sweeper(
    make_client: ClientFactory, scaled: Any, database: Database
) -> None:
    left = store(database, created_at=utcnow() - timedelta(minutes=1))  # to resume at start
    client = make_client(scaled(broker_url="redis://127.0.0.1:1/0"))  # starts all the same
    readiness = client.get("/readyz")
    assert readiness.status_code == 503
    assert not {c["name"]: c["ok"] for c in readiness.json()["checks"]}["broker"]
    accepted = client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})
    assert accepted.status_code == 202  # stored: durable, sent once the broker answers
    assert row(database, accepted.json()["id"]).status is SubmissionStatus.QUEUED
    assert row(database, left).status is SubmissionStatus.QUEUED


def test_a_broker_url_other_than_redis_is_refused(scaled: Any) -> None:
    with pytest.raises(ConfigurationError, match="Redis URL"):
        build_services(scaled(broker_url="amqp://127.0.0.1//"))


def test_a_worker_without_a_broker_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AUTOGRADER_BROKER_URL", raising=False)
    get_settings.cache_clear()
    try:
        assert main(["worker"]) == 2
    finally:
        get_settings.cache_clear()
    assert "AUTOGRADER_BROKER_URL" in capsys.readouterr().err


# --- tickets and leases


def test_a_live_lease_is_exclusive_and_lapses_when_not_renewed(
    scaled: Any, ns: RedisNamespace
) -> None:
    tickets = tickets_of(scaled(), ns)
    one, two = Tickets.holder("one"), Tickets.holder("two")
    tickets.issue("s1")
    assert tickets.unheld(["s1", "s2"]) == {"s2"}
    assert tickets.hold("s1", one)
    assert not tickets.hold("s1", two)
    tickets.issue("s1")  # a copy sent meanwhile does not take a live worker's lease away
    assert ns.client.get(tickets.key("s1")) == one.encode()
    tickets.release("s1", two)  # only its holder releases it
    assert tickets.unheld(["s1"]) == set()
    time.sleep(LEASE_S * 1.5)
    assert tickets.unheld(["s1"]) == {"s1"}  # the holder died: nobody answers for it
    assert tickets.hold("s1", two)
    tickets.release("s1", two)
    assert tickets.unheld(["s1"]) == {"s1"}


# --- the sweeper


class Recorder:
    def __init__(self) -> None:
        self.submissions: list[str] = []
        self.deliveries: list[int] = []


def sweeper_for(
    settings: AppSettings, database: Database, ns: RedisNamespace
) -> tuple[Sweeper, Recorder]:
    recorder = Recorder()
    sweeper = Sweeper(
        settings=settings,
        database=database,
        client=ns.client,
        tickets=tickets_of(settings, ns),
        dispatch=recorder.submissions.append,
        deliver=recorder.deliveries.append,
    )
    return sweeper, recorder


def test_the_sweeper_resends_what_nobody_holds_and_leaves_the_rest(
    scaled: Any, ns: RedisNamespace, database: Database
) -> None:
    settings = scaled(running_stale_after_s=600, sweep_interval_s=60)
    tickets = tickets_of(settings, ns)
    long_ago, now = utcnow() - timedelta(minutes=1), utcnow()
    dead = store(
        database, status=SubmissionStatus.RUNNING, attempts=1, started_at=long_ago,
        created_at=long_ago,
    )  # fmt: skip
    lost = store(database, created_at=long_ago)  # queued, its message never sent
    live = store(
        database, status=SubmissionStatus.RUNNING, attempts=1, started_at=long_ago,
        created_at=long_ago,
    )  # fmt: skip
    tickets.hold(live, Tickets.holder("alive"))
    waiting = store(database, created_at=long_ago)
    tickets.issue(waiting)
    young = store(database, created_at=now)  # its ticket may be on its way
    wedged = store(
        database, status=SubmissionStatus.RUNNING, attempts=1,
        started_at=utcnow() - timedelta(hours=1), created_at=long_ago,
    )  # fmt: skip
    tickets.hold(wedged, Tickets.holder("wedged"))
    done = store(database, status=SubmissionStatus.DONE, created_at=long_ago)

    sweeper, sent = sweeper_for(settings, database, ns)
    assert sorted(sweeper.sweep()) == sorted([dead, lost, wedged])
    assert sorted(sent.submissions) == sorted([dead, lost, wedged])
    dead_row = row(database, dead)
    assert (dead_row.status, dead_row.attempts) == (SubmissionStatus.QUEUED, 1)
    assert row(database, wedged).status is SubmissionStatus.RUNNING  # claimable as it is
    assert row(database, live).status is SubmissionStatus.RUNNING
    assert {row(database, i).status for i in (lost, waiting, young)} == {SubmissionStatus.QUEUED}
    assert row(database, done).status is SubmissionStatus.DONE

    other, other_sent = sweeper_for(settings, database, ns)
    assert other.sweep() == []  # one sweep a period across the deployment
    assert other_sent.submissions == []


def test_the_sweeper_resends_a_webhook_delivery_stuck_pending_once(
    scaled: Any, ns: RedisNamespace, database: Database
) -> None:
    settings = scaled(webhook_backoff_max_s=10, webhook_timeout_s=1, sweep_interval_s=1)
    submission_id = store(database, status=SubmissionStatus.DONE)
    with database.session() as session:
        stuck = WebhookDelivery(
            submission_id=submission_id,
            url="http://127.0.0.1:9/hook",
            updated_at=utcnow() - timedelta(minutes=5),
        )
        recent = WebhookDelivery(submission_id=submission_id, url="http://127.0.0.1:9/hook")
        delivered = WebhookDelivery(
            submission_id=submission_id,
            url="http://127.0.0.1:9/hook",
            status=DeliveryStatus.DELIVERED,
            updated_at=utcnow() - timedelta(minutes=5),
        )
        session.add_all([stuck, recent, delivered])
        session.flush()
        stuck_id = stuck.id
    sweeper, sent = sweeper_for(settings, database, ns)
    sweeper.recover()
    sweeper.recover()
    assert sent.deliveries == [stuck_id]


# --- the grade task


@pytest.fixture
def celery_app(scaled: Any) -> Iterator[Celery]:
    app = make_celery(scaled())
    yield app
    app.close()


def context_for(settings: AppSettings, database: Database, grader: Grader) -> GradingContext:
    class NoWebhooks:
        def enqueue(self, delivery_id: int) -> None:
            raise AssertionError("no callback_url, no delivery")

    return GradingContext(
        settings=settings, database=database, grader=grader, webhooks=NoWebhooks()
    )


def test_the_grade_task_grades_under_its_lease_and_releases_it(
    scaled: Any, ns: RedisNamespace, database: Database, grader: Grader, celery_app: Celery
) -> None:
    settings = scaled()
    tickets = tickets_of(settings, ns)
    seen: list[bool] = []

    def job(submission_id: str, context: GradingContext) -> None:
        seen.append(tickets.unheld([submission_id]) == set())
        grade_submission(submission_id, context)

    with httpx.Client() as http:
        register_tasks(
            celery_app,
            context=context_for(settings, database, grader),
            tickets=tickets,
            holder=Tickets.holder("here"),
            held=Held(),
            outbox=Outbox(celery_app, tickets),
            client=http,
            job=job,
        )
        submission_id = store(database)
        tickets.issue(submission_id)
        celery_app.tasks[GRADE_TASK](submission_id)
        assert seen == [True]
        graded = row(database, submission_id)
        assert graded.status is SubmissionStatus.DONE
        assert graded.report is not None and graded.report["status"] == "passed"
        assert tickets.unheld([submission_id]) == {submission_id}

        # A copy of the message while a live worker grades it is dropped.
        other = store(database)
        tickets.hold(other, Tickets.holder("elsewhere"))
        celery_app.tasks[GRADE_TASK](other)
        assert seen == [True]
        assert row(database, other).status is SubmissionStatus.QUEUED


# --- rate limits shared by API replicas


def test_replicas_share_one_bucket_per_name(scaled: Any, ns: RedisNamespace) -> None:
    settings = scaled()
    first, second = (
        RedisRateLimiter(ns.client, settings.redis_prefix, "key", per_minute=3) for _ in range(2)
    )
    assert [first.acquire("a"), second.acquire("a"), first.acquire("a")] == [None] * 3
    wait = second.acquire("a")
    assert wait is not None and 19.0 < wait <= 20.0
    assert first.acquire("b") is None  # buckets are per name
    students = RedisRateLimiter(ns.client, settings.redis_prefix, "student", per_minute=3)
    assert students.acquire("a") is None  # and per kind
    assert all(key.startswith(f"{ns.prefix}rate:") for key in ns.stored_keys())
    assert not any(key.rsplit(":", 1)[1] == "a" for key in ns.stored_keys())  # names are hashed


def test_a_zero_rate_is_no_limit_and_an_unreachable_redis_lets_requests_through(
    ns: RedisNamespace,
) -> None:
    assert RedisRateLimiter(ns.client, ns.prefix, "key", per_minute=0).acquire("a") is None
    away = redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
    try:
        assert RedisRateLimiter(away, ns.prefix, "key", per_minute=1).acquire("a") is None
    finally:
        away.close()


def test_the_api_rate_limits_through_redis(
    make_client: ClientFactory, scaled: Any, database: Database
) -> None:
    settings = scaled(rate_limit_per_student=2)
    # Two API replicas over the same Redis: the student's budget is shared.
    first, second = make_client(settings), make_client(settings)
    body = {"exercise": SEED, "source": CORRECT, "student_id": "s1"}
    assert first.post("/v1/submissions", json=body).status_code == 202
    assert second.post("/v1/submissions", json=body).status_code == 202
    limited = first.post("/v1/submissions", json=body)
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    with database.session() as session:
        assert len(session.scalars(select(Submission.id)).all()) == 2


# --- finished submissions wake the API's waiters


def test_a_worker_announcement_wakes_the_api(ns: RedisNamespace) -> None:
    woken: list[str] = []
    listener = DoneListener(ns.client, ns.prefix, woken.append)
    listener.start()
    try:
        publish = DonePublisher(ns.client, ns.prefix)
        deadline = time.monotonic() + 10
        while not woken and time.monotonic() < deadline:  # until the subscription is live
            publish("s1")
            time.sleep(0.05)
        assert woken[:1] == ["s1"]
    finally:
        listener.close()


def test_a_webhook_backoff_must_fit_in_the_brokers_visibility_timeout(scaled: Any) -> None:
    with pytest.raises(ValueError, match="visibility"):
        scaled(webhook_backoff_max_s=600, broker_visibility_timeout_s=600)
    assert scaled(broker_url=None, webhook_backoff_max_s=600, broker_visibility_timeout_s=600)
