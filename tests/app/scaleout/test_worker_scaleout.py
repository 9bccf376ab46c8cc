"""The scale-out path for real: `autograder serve` with a Redis broker and PostgreSQL, and
`autograder worker` processes grading in the real sandbox, all as subprocesses on loopback.

Proves: grading over HTTP (?wait=true and polling) through the workers, with a signed webhook
retried by the API's outbox and metrics served by the workers; a worker SIGKILLed mid-grade leads to
the submission being graded by the other worker; a submission interrupted too often ends in an
error report; with no worker running the API accepts work up to its capacity and then answers
503, and after the API itself is SIGKILLed and started again every accepted submission, and one
whose message never reached the broker, is graded, and a webhook whose receiver failed before
the kill is delivered by the restarted API. A worker runs a regrade. Nothing is left queued or
running.

The module's processes share one fresh PostgreSQL database and one Redis namespace; each test
sets the number of workers it needs. Every process is killed at the end, whatever happened.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from app_support import CORRECT, SEED, webhook_receiver
from scaleout_support import RedisNamespace, redis_namespace
from sqlalchemy import select, update
from stack_support import Stack, running_stack, stack_env, wait_for

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus, utcnow
from app.grading.report_store import report_columns
from app.outbox.models import WebhookDelivery
from app.outbox.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature
from app.scaleout.worker import WORKER_NICENESS
from grader.report import Report, ReportStatus

pytestmark = pytest.mark.slow

WRONG = (
    Path(__file__).parents[3] / "exercises/multi-headed-self-attention/mistakes/missing_scaling.py"
)
# About two seconds of work inside the sandbox (far within the exercise's 10 s of CPU): long
# enough to kill the worker that grades it while it does.
SLOW = f"{CORRECT}\ncount = 0\nfor i in range(12_000_000):\n    count += 1\n"
CAPACITY = 6
LEASE_S = 3.0


@pytest.fixture(scope="module")
def redis_ns() -> Iterator[RedisNamespace]:
    with redis_namespace() as namespace:
        yield namespace


@pytest.fixture(scope="module")
def database_url(module_postgres_url: str) -> str:
    return module_postgres_url


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, redis_ns: RedisNamespace, database_url: str
) -> Iterator[Stack]:
    data_dir = tmp_path_factory.mktemp("scaleout")
    env = stack_env(
        data_dir,
        redis_ns,
        database_url,
        AUTOGRADER_QUEUE_CAPACITY=str(CAPACITY),
        AUTOGRADER_WORKER_LEASE_S=str(LEASE_S),
        AUTOGRADER_MAX_ATTEMPTS="3",
        AUTOGRADER_WEBHOOK_BACKOFF_S="2",
        AUTOGRADER_WEBHOOK_ALLOWED_HOSTS='["127.0.0.1"]',  # the test's receivers
    )
    with running_stack(data_dir, env, redis_ns, workers=2) as stack:
        yield stack


@pytest.fixture(scope="module")
def database(database_url: str) -> Iterator[Database]:
    database = Database.from_url(database_url)
    yield database
    database.close()


def submission(stack: Stack, submission_id: str) -> dict[str, Any]:
    body: dict[str, Any] = stack.http.get(f"/v1/submissions/{submission_id}").json()
    return body


def unfinished(database: Database) -> list[tuple[str, SubmissionStatus]]:
    with database.session() as session:
        rows = session.execute(
            select(Submission.id, Submission.status).where(
                Submission.status != SubmissionStatus.DONE
            )
        ).all()
    return [(row.id, row.status) for row in rows]


def store_directly(database: Database, **values: Any) -> str:
    """A row as some earlier process left it in the database, with no message in the broker."""
    with database.session() as session:
        row = Submission(exercise=SEED, source=CORRECT, **values)
        session.add(row)
        session.flush()
        return row.id


def test_workers_grade_over_http_with_webhooks_and_metrics(
    stack: Stack, database: Database
) -> None:
    stack.set_workers(2)
    # Where the API and the workers share a cgroup, a worker weighs about a quarter of the API.
    assert stack.api is not None
    api = os.getpriority(os.PRIO_PROCESS, stack.api.pid)
    for worker in stack.workers.values():
        assert os.getpriority(os.PRIO_PROCESS, worker.pid) == api + WORKER_NICENESS
    waited = stack.http.post(
        "/v1/submissions?wait=true", json={"exercise": SEED, "source": CORRECT}
    )
    assert waited.status_code == 200, waited.text
    assert waited.json()["report"]["status"] == "passed"

    with webhook_receiver(statuses=[500]) as receiver:  # the first attempt fails
        sources = [CORRECT, WRONG.read_text()] * 3
        ids = [
            stack.http.post(
                "/v1/submissions",
                json={"exercise": SEED, "source": f"{source}\n# {n}\n", "callback_url": url},
            ).json()["id"]
            for n, (source, url) in enumerate(
                zip(sources, [receiver.url] + [None] * 5, strict=True)
            )
        ]
        wait_for(
            "every submission is graded",
            lambda: all(submission(stack, i)["status"] == "done" for i in ids),
        )
        verdicts = [submission(stack, i)["report"]["status"] for i in ids]
        assert verdicts == ["passed", "failed"] * 3
        wait_for("the webhook is retried until delivered", lambda: len(receiver.requests) == 2)
    first, second = receiver.requests
    assert first.headers["X-Autograder-Delivery"] == second.headers["X-Autograder-Delivery"]
    assert json.loads(second.body)["id"] == ids[0]
    assert verify_signature(
        b"scale-out",
        second.headers[TIMESTAMP_HEADER],
        second.headers["X-Autograder-Delivery"],
        second.body,
        second.headers[SIGNATURE_HEADER],
    )
    with database.session() as session:
        delivery = session.scalars(select(WebhookDelivery)).one()
        assert (delivery.status.value, delivery.attempts) == ("delivered", 2)

    # Both workers took part, and each counts what it graded on its own exporter.
    graded = {
        name: [i for i in [waited.json()["id"], *ids] if f'"submission_id": "{i}"' in log]
        for name, log in ((name, stack.log_of(name)) for name in stack.workers)
    }
    assert all(graded.values()), graded
    total = 0.0
    for name in stack.workers:
        text = httpx.get(f"http://127.0.0.1:{stack.metrics_ports[name]}/metrics").text
        counts = [
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("autograder_reports_total{")
        ]
        assert "autograder_grading_seconds_bucket" in text
        total += sum(counts)
    assert total == 7

    readiness = stack.http.get("/readyz").json()
    assert {c["name"]: c["ok"] for c in readiness["checks"]} == {
        "database": True,
        "broker": True,
        "grading workers": True,
    }
    assert any(layer["active"] for layer in readiness["sandbox_layers"])
    assert unfinished(database) == []


def test_a_worker_killed_mid_grade_leaves_the_submission_to_another(
    stack: Stack, database: Database
) -> None:
    stack.set_workers(2)
    submission_id = stack.http.post(
        "/v1/submissions", json={"exercise": SEED, "source": SLOW}
    ).json()["id"]

    def holder() -> str | None:
        with database.session() as session:
            row = session.get(Submission, submission_id)
            assert row is not None
            return row.lease_holder if row.lease_holder in stack.workers else None

    # The claim takes the lease: the worker is in the middle of grading it.
    wait_for(
        "a worker grades it",
        lambda: submission(stack, submission_id)["status"] == "running" and holder() is not None,
    )
    victim = holder()
    assert victim is not None
    stack.stop_worker(victim, signal.SIGKILL)

    wait_for(
        "another worker grades it",
        lambda: submission(stack, submission_id)["status"] == "done",
    )
    body = submission(stack, submission_id)
    assert body["report"]["status"] == "passed", body["report"]
    assert body["attempts"] == 2
    (survivor,) = stack.workers
    assert f'"submission_id": "{submission_id}"' in stack.log_of(survivor)
    assert "attempt 2" in stack.log_of(survivor)
    assert unfinished(database) == []


def test_a_submission_interrupted_too_often_ends_in_an_error_report(
    stack: Stack, database: Database
) -> None:
    stack.set_workers(1)
    # As three workers killed while grading it would leave it: running, three attempts, and no
    # lease any more.
    submission_id = store_directly(
        database,
        status=SubmissionStatus.RUNNING,
        attempts=3,
        created_at=utcnow() - timedelta(minutes=2),
        started_at=utcnow() - timedelta(minutes=1),
    )
    wait_for("the sweeper finds it", lambda: submission(stack, submission_id)["status"] == "done")
    report = submission(stack, submission_id)["report"]
    assert report["status"] == "error"
    assert "interrupted 3 times" in report["message"]
    assert unfinished(database) == []


def test_without_workers_work_is_bounded_and_survives_an_api_restart(
    stack: Stack, database: Database
) -> None:
    stack.set_workers(0)
    ids = [
        stack.http.post(
            "/v1/submissions", json={"exercise": SEED, "source": f"{CORRECT}\n# queued {n}\n"}
        )
        for n in range(CAPACITY)
    ]
    assert [response.status_code for response in ids] == [202] * CAPACITY
    refused = stack.http.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})
    assert refused.status_code == 503, refused.text
    assert refused.headers["Retry-After"] == "5"
    assert refused.headers["Content-Type"] == "application/problem+json"
    accepted = [response.json()["id"] for response in ids]
    assert sorted(i for i, _ in unfinished(database)) == sorted(accepted)  # none half-stored

    stack.kill_api()
    # As an API killed between its commit and its send would leave a submission.
    lost = store_directly(database, created_at=utcnow() - timedelta(minutes=1))
    stack.start_api()
    stack.set_workers(1)
    everything = [*accepted, lost]
    wait_for(
        "everything accepted is graded",
        lambda: all(submission(stack, i)["status"] == "done" for i in everything),
        timeout_s=90,
    )
    assert {submission(stack, i)["report"]["status"] for i in everything} == {"passed"}
    assert unfinished(database) == []


def test_a_webhook_that_failed_before_an_api_restart_is_delivered_after_it(
    stack: Stack, database: Database
) -> None:
    stack.set_workers(1)
    with webhook_receiver(statuses=[500]) as receiver:
        submission_id = stack.http.post(
            "/v1/submissions",
            json={"exercise": SEED, "source": CORRECT, "callback_url": receiver.url},
        ).json()["id"]

        def delivery() -> WebhookDelivery | None:
            with database.session() as session:
                return session.scalars(
                    select(WebhookDelivery).where(WebhookDelivery.submission_id == submission_id)
                ).one_or_none()

        def first_failed() -> bool:
            row = delivery()
            return row is not None and (row.attempts, row.last_status_code) == (1, 500)

        wait_for("the first attempt fails and is recorded", first_failed)
        stack.kill_api()  # long before its 2 s backoff ends
        assert len(receiver.requests) == 1
        stack.start_api()
        wait_for("the restarted API delivers it", lambda: len(receiver.requests) == 2)
    row = delivery()
    assert row is not None
    assert (row.status.value, row.attempts, row.last_status_code) == ("delivered", 2, 200)


def test_a_worker_runs_a_regrade(stack: Stack, database: Database) -> None:
    stack.set_workers(1)
    student = {"exercise": SEED, "student_id": "regraded", "source": CORRECT}
    graded = stack.http.post("/v1/submissions?wait=true", json=student).json()
    # As an earlier version of the exercise left it: failed, and worth nothing.
    earlier = Report.model_validate(graded["report"]).model_copy(
        update={"status": ReportStatus.FAILED, "score": 0.0}
    )
    with database.session() as session:
        session.execute(
            update(Submission)
            .where(Submission.id == graded["id"])
            .values(**report_columns(earlier))
        )
    created = stack.http.post(
        f"/v1/courses/default/exercises/{SEED}/regrades", json={"student_id": "regraded"}
    ).json()
    path = f"/v1/courses/default/regrades/{created['id']}"
    wait_for("a worker runs the regrade", lambda: stack.http.get(path).json()["status"] == "done")
    regrade = stack.http.get(path).json()
    assert (regrade["total"], regrade["graded"], regrade["changed"]) == (1, 1, 1)
    assert f"regrade {created['id']} done" in stack.log_of(next(iter(stack.workers)))
    assert submission(stack, graded["id"])["report"]["status"] == "passed"
