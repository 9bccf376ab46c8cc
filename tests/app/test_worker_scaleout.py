"""The scale-out path for real: `autograder serve` with a Redis broker and PostgreSQL, and
`autograder worker` processes grading in the real sandbox, all as subprocesses on loopback.

Proves: grading over HTTP (?wait=true and polling) through the workers, with a signed webhook
retried from a worker and metrics served by the workers; a worker SIGKILLed mid-grade leads to
the submission being graded by the other worker; a submission interrupted too often ends in an
error report; with no worker running the API accepts work up to its capacity and then answers
503, and after the API itself is SIGKILLed and started again every accepted submission, and one
whose message never reached the broker, is graded. Nothing is left queued or running.

The module's processes share one fresh PostgreSQL database and one Redis namespace; each test
sets the number of workers it needs. Every process is killed at the end, whatever happened.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from app_support import CORRECT, SEED, webhook_receiver
from scaleout_support import RedisNamespace, free_port, redis_namespace
from sqlalchemy import select

from app.db import Database
from app.models import Submission, SubmissionStatus, WebhookDelivery, utcnow
from app.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature

pytestmark = pytest.mark.slow

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))
WRONG = Path(__file__).parents[1] / "submissions/multi-headed-self-attention/missing_scaling.py"
# About two seconds of work inside the sandbox (far within the exercise's 10 s of CPU): long
# enough to kill the worker that grades it while it does.
SLOW = f"{CORRECT}\ncount = 0\nfor i in range(12_000_000):\n    count += 1\n"
CAPACITY = 6
LEASE_S = 3.0


def wait_for(what: str, condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"after {timeout_s} s, still not: {what}")
        time.sleep(0.1)


class Stack:
    """The API and the workers of one deployment, as processes with their logs in `logs`."""

    def __init__(self, logs: Path, env: dict[str, str], redis: RedisNamespace) -> None:
        self.logs = logs
        self.env = env
        self.redis = redis
        self.api: subprocess.Popen[bytes] | None = None
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.metrics_ports: dict[str, int] = {}
        self.port = free_port()
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=90)
        self._started = 0

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        try:
            return subprocess.Popen(
                [AUTOGRADER, *argv],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # so teardown can kill all it started
            )
        finally:
            log.close()

    def log_of(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start_api(self) -> None:
        assert self.api is None or self.api.poll() is not None
        self.api = self._spawn("api", ["serve", "--port", str(self.port)], self.env)

        def ready() -> bool:
            assert self.api is not None and self.api.poll() is None, self.log_of("api")
            try:
                return self.http.get("/readyz").status_code == 200
            except httpx.TransportError:
                return False

        wait_for("the API is ready", ready)

    def kill_api(self) -> None:
        assert self.api is not None
        self.api.send_signal(signal.SIGKILL)
        self.api.wait()

    def start_workers(self, count: int) -> list[str]:
        names = []
        for _ in range(count):
            self._started += 1
            name = f"w{self._started}"
            port = free_port()
            env = {**self.env, "AUTOGRADER_WORKER_METRICS_PORT": str(port)}
            self.workers[name] = self._spawn(name, ["worker", "--name", name], env)
            self.metrics_ports[name] = port
            names.append(name)
        for name in names:
            wait_for(f"worker {name} is ready", partial(self._announced, name), 120)
        return names

    def _announced(self, name: str) -> bool:
        process = self.workers[name]
        assert process.poll() is None, self.log_of(name)
        # Announced once warm, consuming a moment later: "ready." is Celery's own word.
        return bool(
            self.redis.client.exists(f"{self.redis.prefix}worker:{name}")
        ) and "ready." in self.log_of(name)

    def stop_worker(self, name: str, sig: signal.Signals = signal.SIGTERM) -> None:
        process = self.workers.pop(name)
        process.send_signal(sig)
        process.wait(timeout=60)

    def set_workers(self, count: int) -> None:
        for name in list(self.workers)[count:]:
            self.stop_worker(name)
        if len(self.workers) < count:
            self.start_workers(count - len(self.workers))

    def close(self) -> None:
        self.http.close()
        processes = [p for p in [self.api, *self.workers.values()] if p is not None]
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


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
    env = {
        **os.environ,
        "AUTOGRADER_DATA_DIR": str(data_dir),
        "AUTOGRADER_SECRET": "scale-out",
        "AUTOGRADER_DATABASE_URL": database_url,
        "AUTOGRADER_BROKER_URL": redis_ns.url,
        "AUTOGRADER_REDIS_PREFIX": redis_ns.prefix,
        "AUTOGRADER_SANDBOX_SLOTS": "1",
        "AUTOGRADER_QUEUE_CAPACITY": str(CAPACITY),
        "AUTOGRADER_WORKER_LEASE_S": str(LEASE_S),
        "AUTOGRADER_SWEEP_INTERVAL_S": "1",
        "AUTOGRADER_MAX_ATTEMPTS": "3",
        "AUTOGRADER_WEBHOOK_BACKOFF_S": "0.2",
        "AUTOGRADER_LOG_JSON": "true",
    }
    stack = Stack(data_dir, env, redis_ns)
    try:
        stack.start_api()
        stack.start_workers(2)
        yield stack
    finally:
        stack.close()


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
    lease = f"{stack.redis.prefix}ticket:{submission_id}"

    def holder() -> str | None:
        value = stack.redis.client.get(lease)
        text = value.decode() if isinstance(value, bytes) else ""
        return text.removeprefix("worker:") if text.startswith("worker:") else None

    # The lease is taken just before the claim: both, and the worker is in the middle of it.
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
