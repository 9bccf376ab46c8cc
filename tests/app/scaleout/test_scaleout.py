"""The parts of the scale-out path, each against the real Redis and PostgreSQL but without a
worker process: what the API sends and the lease it takes, the grade task, settings refused at
start, and rate limits shared by API replicas. (tests/app/scaleout/test_worker_scaleout.py runs the
whole thing; leases and the sweeper, the same on both paths, are tested in test_leases and
test_sweeper.)"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
from app_support import (
    CORRECT,
    SEED,
    ClientFactory,
    SettingsFactory,
    load_submission,
    store_submission,
    wait_until,
)
from celery import Celery
from pydantic import ValidationError
from scaleout_support import RedisNamespace, redis_namespace
from sqlalchemy import delete, select
from sqlalchemy.exc import OperationalError

from app.cli import main
from app.core.db import Database
from app.core.models import Submission, SubmissionStatus, utcnow
from app.core.settings import AppSettings, get_settings
from app.grading.job import GradingContext
from app.grading.leases import DISPATCHED, Leases
from app.outbox.models import WebhookDelivery
from app.scaleout.broker import GRADE_TASK, GRADING_QUEUE, make_celery
from app.scaleout.notify import DoneListener, DonePublisher
from app.scaleout.ratelimit import RedisRateLimiter
from app.scaleout.worker import register_grade_task
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


def test_the_api_sends_only_the_stored_id_and_answers_for_it_until_the_broker_would(
    make_client: ClientFactory, scaled: Any, ns: RedisNamespace, database: Database
) -> None:
    settings = scaled(queue_capacity=2)
    client = make_client(settings)
    ids = [
        client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT}).json()["id"]
        for _ in range(2)
    ]
    # Sent after the answer, by the dispatcher's own thread: the lease is written last.
    wait_until(lambda: [load_submission(database, i).lease_holder for i in ids] == [DISPATCHED] * 2)
    assert sent_ids(ns) == ids
    rows = [load_submission(database, i) for i in ids]
    assert [r.status for r in rows] == [SubmissionStatus.QUEUED] * 2
    visibility = timedelta(seconds=settings.broker_visibility_timeout_s)
    for r in rows:
        assert r.lease_expires_at is not None
        assert r.lease_expires_at > utcnow() + visibility - timedelta(minutes=1)

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
    left = store_submission(
        database, created_at=utcnow() - timedelta(minutes=1)
    )  # to resume at start
    client = make_client(scaled(broker_url="redis://127.0.0.1:1/0"))  # starts all the same
    readiness = client.get("/readyz")
    assert readiness.status_code == 503
    assert not {c["name"]: c["ok"] for c in readiness.json()["checks"]}["broker"]
    accepted = client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})
    assert accepted.status_code == 202  # stored: durable, sent once the broker answers
    assert load_submission(database, accepted.json()["id"]).status is SubmissionStatus.QUEUED
    assert load_submission(database, left).status is SubmissionStatus.QUEUED


def test_a_broker_url_other_than_redis_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValidationError, match="Redis URL"):
        AppSettings(broker_url="amqp://127.0.0.1//")
    monkeypatch.setenv("AUTOGRADER_BROKER_URL", "amqp://127.0.0.1//")
    get_settings.cache_clear()
    try:
        assert main(["serve"]) == 2
    finally:
        get_settings.cache_clear()
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("autograder: AUTOGRADER_BROKER_URL: must be a Redis URL")


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


# --- the grade task


@pytest.fixture
def celery_app(scaled: Any) -> Iterator[Celery]:
    app = make_celery(scaled())
    yield app
    app.close()


def test_the_grade_task_grades_under_its_lease_and_drops_it(
    scaled: Any, database: Database, grader: Grader, celery_app: Celery
) -> None:
    context = GradingContext(
        settings=scaled(), database=database, grader=grader, holder="worker-here"
    )
    seen: list[str | None] = []
    real_grade = grader.grade_in_full

    def grade(exercise: str, source: str) -> Any:
        with database.session() as session:
            seen.append(session.scalar(select(Submission.lease_holder)))
        return real_grade(exercise, source)

    register_grade_task(celery_app, context)
    submission_id = store_submission(database)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grader, "grade_in_full", grade)
        celery_app.tasks[GRADE_TASK](submission_id)
    assert seen == ["worker-here"]
    graded = load_submission(database, submission_id)
    assert graded.status is SubmissionStatus.DONE
    assert graded.report is not None and graded.report["status"] == "passed"
    assert (graded.lease_holder, graded.lease_expires_at) == (None, None)

    # A copy of the message while a live worker grades it is dropped.
    other = store_submission(
        database,
        status=SubmissionStatus.RUNNING,
        attempts=1,
        started_at=utcnow(),
        lease_holder="worker-elsewhere",
        lease_expires_at=utcnow() + timedelta(minutes=1),
    )
    celery_app.tasks[GRADE_TASK](other)
    assert seen == ["worker-here"]
    assert load_submission(database, other).attempts == 1


def test_a_hand_over_that_fails_is_sent_again_and_grades_its_submission(
    scaled: Any, database: Database, grader: Grader, celery_app: Celery
) -> None:
    """Late acks acknowledge a failed task: without a retry, the submission would wait for the
    sweeper until its dispatch lease ran out (an hour)."""
    context = GradingContext(settings=scaled(), database=database, grader=grader, holder="w")
    register_grade_task(celery_app, context)
    submission_id = store_submission(database)
    real_claim = Leases.claim_next
    failures = [OperationalError("SELECT", {}, Exception("the database went away"))]

    def claim_next(leases: Leases, handed_id: str, holder: str) -> Any:
        if failures:
            raise failures.pop()
        return real_claim(leases, handed_id, holder)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Leases, "claim_next", claim_next)
        outcome = celery_app.tasks[GRADE_TASK].apply(args=(submission_id,))
    assert outcome.successful() and failures == []
    assert load_submission(database, submission_id).status is SubmissionStatus.DONE


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
    woken: list[tuple[str, bool]] = []
    listener = DoneListener(ns.client, ns.prefix, lambda *done: woken.append(done))
    listener.start()
    try:
        publish = DonePublisher(ns.client, ns.prefix)
        deadline = time.monotonic() + 10
        while not woken and time.monotonic() < deadline:  # until the subscription is live
            publish("s1", True)
            time.sleep(0.05)
        assert woken[:1] == [("s1", True)]
    finally:
        listener.close()


def test_the_grade_task_grades_in_line_order_not_the_order_sent(
    make_client: ClientFactory, scaled: Any, database: Database, grader: Grader,
    celery_app: Celery,
) -> None:  # fmt: skip
    client = make_client(scaled(max_in_flight_per_student=10))
    sources = [f"{CORRECT}\n# {n} ada" for n in range(5)] + [f"{CORRECT}\n# 0 bob"]
    sent = []
    for source in sources:
        student = source.rsplit(" ", 1)[-1]
        body = {"exercise": SEED, "source": source, "student_id": student}
        sent.append(client.post("/v1/submissions", json=body).json()["id"])
    graded: list[str] = []
    real_grade = grader.grade_in_full

    def grade(exercise: str, source: str) -> Any:
        graded.append(source)
        return real_grade(exercise, source)

    context = GradingContext(settings=scaled(), database=database, grader=grader, holder="w")
    register_grade_task(celery_app, context)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grader, "grade_in_full", grade)
        for submission_id in sent:  # as a worker takes the messages: in the order sent
            celery_app.tasks[GRADE_TASK](submission_id)
    assert graded == [sources[0], sources[5], *sources[1:5]]  # bob's first before ada's second
    with database.session() as session:
        assert list(session.scalars(select(Submission.status))) == [SubmissionStatus.DONE] * 6
